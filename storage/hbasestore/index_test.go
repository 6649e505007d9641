package hbasestore_test

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/internal/indextest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/hbasestore"
)

var bg = context.Background()

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var flip = indextest.Flip

// TestIndexExactOnHBase runs the index on HBase against a brute-force
// oracle: random documents plus planted neighbours at every distance
// 0..K+1, some deleted and some replaced; every lookup must return exactly
// the live documents within k.
func TestIndexExactOnHBase(t *testing.T) {
	st := openFresh(t)
	layout := fingerprint.Layout{B: 4, K: 3}
	ix, err := kvindex.Open(bg, st, kvindex.Config{Layout: layout, RecipeVersion: 1, Locker: st.Locker()})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 9))
	live := map[string]fingerprint.Fingerprint{}
	var docs []kvindex.Document
	var queries []fingerprint.Fingerprint
	for q := range 20 {
		base := fingerprint.Fingerprint(r.Uint64())
		queries = append(queries, base)
		for d := 0; d <= layout.K+1; d++ {
			docs = append(docs, kvindex.Document{ID: fmt.Sprintf("q%d-d%d", q, d), Fingerprint: flip(r, base, d), Time: t0.Add(time.Duration(d) * time.Hour)})
		}
	}
	for i := range 1000 {
		docs = append(docs, kvindex.Document{ID: fmt.Sprintf("rand-%d", i), Fingerprint: fingerprint.Fingerprint(r.Uint64()), Time: t0})
	}
	for chunk := range slices.Chunk(docs, 200) {
		_, errs, err := ix.InsertBatch(bg, chunk, kvindex.InsertAlways, layout.K)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range errs {
			if e != nil {
				t.Fatalf("insert %s: %v", chunk[i].ID, e)
			}
			live[chunk[i].ID] = chunk[i].Fingerprint
		}
	}
	// Delete the distance-1 neighbour of even queries; move the distance-2
	// neighbour of odd queries far away (replace).
	for q := range queries {
		if q%2 == 0 {
			id := fmt.Sprintf("q%d-d1", q)
			if err := ix.Delete(bg, id); err != nil {
				t.Fatal(err)
			}
			delete(live, id)
		} else {
			id := fmt.Sprintf("q%d-d2", q)
			fp := ^queries[q]
			res, err := ix.Insert(bg, kvindex.Document{ID: id, Fingerprint: fp, Time: t0}, kvindex.InsertAlways, layout.K)
			if err != nil || !res.Replaced {
				t.Fatalf("replace %s: %+v %v", id, res, err)
			}
			live[id] = fp
		}
	}
	for k := 0; k <= layout.K; k++ {
		for q, fp := range queries {
			res := indextest.MustLookup(t, ix, fp, kvindex.LookupOptions{K: k})
			var got, want []string
			for _, h := range res.Hits {
				got = append(got, h.ID)
				if h.Distance != bits.OnesCount64(uint64(h.Fingerprint^fp)) {
					t.Fatalf("hit %s distance %d wrong", h.ID, h.Distance)
				}
			}
			for id, dfp := range live {
				if bits.OnesCount64(uint64(dfp^fp)) <= k {
					want = append(want, id)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("query %d k=%d: got %q, want %q", q, k, got, want)
			}
		}
	}
}

// TestLockerTwoClients: two Index values, each on its own HBase client
// (separate in-process locks, as in two server processes), race
// insert-if-unique of near-identical documents; exactly one is stored
// every round.
func TestLockerTwoClients(t *testing.T) {
	a := openFresh(t)
	zk := hbasetest.ZK(t)
	b, err := hbasestore.Open(bg, hbasestore.Config{ZooKeeper: []string{zk}, Namespace: a.Config().Namespace})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var ixs []*kvindex.Index
	for _, st := range []*hbasestore.Store{a, b} {
		ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: 1, Locker: st.Locker()})
		if err != nil {
			t.Fatal(err)
		}
		ixs = append(ixs, ix)
	}
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	indextest.RaceInsertIfUnique(t, ixs[0], ixs[1], rounds, 8)
}
