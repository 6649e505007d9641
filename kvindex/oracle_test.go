package kvindex_test

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/indextest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// TestExactnessAgainstBruteForce: for layouts B=4,5,6 and k' = 0..K, a lookup
// returns exactly the stored documents within k' (recall 100%, nothing
// farther), over 10^5 random fingerprints held in base sets, deltas and
// tombstones, plus planted neighbours at every distance 0..K+1 of each query.
func TestExactnessAgainstBruteForce(t *testing.T) {
	if raceEnabled {
		// One goroutine: the race detector checks nothing here and makes the
		// 10^5-fingerprint build ten times slower. scripts/test.sh runs this
		// test without -race as a separate step.
		t.Skip("exactness runs without -race (scripts/test.sh)")
	}
	n := 100_000
	queries := 60
	if testing.Short() {
		n, queries = 20_000, 20
	}
	for _, layout := range []fingerprint.Layout{{B: 4, K: 3}, {B: 5, K: 3}, {B: 6, K: 3}} {
		t.Run(layout.String(), func(t *testing.T) {
			testExactness(t, layout, n, queries)
		})
	}
}

func testExactness(t *testing.T, layout fingerprint.Layout, n, queries int) {
	r := rand.New(rand.NewPCG(uint64(layout.B), 7))
	ix := openAt(t, t.TempDir(), kvindex.Config{Layout: layout, BucketWidth: 24 * time.Hour}, true)
	live := oracle{}

	// 1. Bulk part: base sets written directly (as bulk load does: per table,
	// permute, sort, group by row and bucket), spread over 3 time buckets.
	bulk := make([]kvindex.Document, n)
	for i := range bulk {
		bulk[i] = doc(fmt.Sprintf("bulk-%d", i), fingerprint.Fingerprint(r.Uint64()), t0.Add(time.Duration(i%3)*24*time.Hour))
		live[bulk[i].ID] = bulk[i]
	}
	batch := indextest.NewBatch(ix)
	type entry struct {
		row    string
		bucket uint32
		res    uint64
	}
	// The base sets are put as a bulk load puts them into its sorted-cell
	// writers, here collected as mutations.
	put := putFunc(func(row, q, v []byte) error {
		batch.Add(t, storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: row, Qualifier: q, Value: v})
		return nil
	})
	for tb, p := range ix.Layout().Permuters() {
		es := make([]entry, n)
		for i, d := range bulk {
			v := p.Permute(d.Fingerprint)
			es[i] = entry{string(kvindex.IndexRowKey(nil, tb, p.Prefix(v), p.PrefixBits)), ix.Buckets().Of(d.Time), p.Residual(v)}
		}
		slices.SortFunc(es, func(a, b entry) int {
			if a.row != b.row {
				return strings.Compare(a.row, b.row)
			}
			if a.bucket != b.bucket {
				return cmp.Compare(a.bucket, b.bucket)
			}
			return cmp.Compare(a.res, b.res)
		})
		for i := 0; i < len(es); {
			var rs []uint64
			j := i
			for ; j < len(es) && es[j].row == es[i].row && es[j].bucket == es[i].bucket; j++ {
				rs = append(rs, es[j].res)
			}
			if _, _, err := ix.BulkWriter().PutBaseSets(put, []byte(es[i].row), []kvindex.BucketSet{{Bucket: es[i].bucket, Residuals: slices.Compact(rs)}}); err != nil {
				t.Fatal(err)
			}
			i = j
		}
	}
	for _, d := range bulk {
		m, err := ix.BulkWriter().DocCells(d)
		if err != nil {
			t.Fatal(err)
		}
		batch.Add(t, m...)
	}
	batch.Flush(t)

	// 2. Planted neighbours of each query at every distance 0..K+1, inserted
	// online (delta cells), some with their own second document.
	var qs []fingerprint.Fingerprint
	var online []kvindex.Document
	for q := range queries {
		base := live[fmt.Sprintf("bulk-%d", r.IntN(n))].Fingerprint
		if q%2 == 1 {
			base = fingerprint.Fingerprint(r.Uint64()) // a query not itself stored
		}
		qs = append(qs, base)
		for d := 0; d <= layout.K+1; d++ {
			for c := 0; c < 2; c++ {
				online = append(online, doc(fmt.Sprintf("q%d-d%d-%d", q, d, c), flip(r, base, d), t0.Add(time.Duration(r.IntN(72))*time.Hour)))
			}
		}
	}
	insertedOnline, deleted := len(online), 0
	for len(online) > 0 {
		c := min(len(online), 500)
		_, errs, err := ix.InsertBatch(bg, online[:c], kvindex.InsertAlways, layout.K)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range errs {
			if e != nil {
				t.Fatalf("insert %s: %v", online[i].ID, e)
			}
			live[online[i].ID] = online[i]
		}
		online = online[c:]
	}

	// 3. Deletes: some bulk documents (tombstones over base sets) and some
	// online ones (tombstones over deltas).
	for _, id := range slices.Sorted(maps.Keys(live)) {
		if r.IntN(50) == 0 {
			if err := ix.Delete(bg, id); err != nil {
				t.Fatalf("Delete %s: %v", id, err)
			}
			delete(live, id)
			deleted++
		}
	}

	// 4. Every query at every k' against the oracle.
	for qi, q := range qs {
		for k := 0; k <= layout.K; k++ {
			res := indextest.MustLookup(t, ix, q, kvindex.LookupOptions{K: k})
			got := sorted(ids(res.Hits))
			want := live.within(q, k)
			if !slices.Equal(got, want) {
				t.Fatalf("query %d (%v) k=%d: got %d hits, oracle %d\n got  %v\n want %v", qi, q, k, len(got), len(want), got, want)
			}
			for i, h := range res.Hits {
				if d := fingerprint.Distance(h.Fingerprint, q); d != h.Distance || h.Fingerprint != live[h.ID].Fingerprint || !h.Time.Equal(live[h.ID].Time) {
					t.Fatalf("hit %+v: wrong distance/fingerprint/time (stored %+v)", h, live[h.ID])
				}
				if i > 0 && (res.Hits[i-1].Distance > h.Distance || res.Hits[i-1].Distance == h.Distance && res.Hits[i-1].Time.After(h.Time)) {
					t.Fatalf("hits not sorted by distance, time: %+v before %+v", res.Hits[i-1], h)
				}
			}
			if k == layout.K && len(want) < 5 {
				t.Fatalf("query %d: only %d documents within %d; planted neighbours missing from the oracle", qi, len(want), k)
			}
		}
	}
	// Bulk documents were written without counters; online inserts add
	// and every delete subtracts.
	st, err := ix.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(insertedOnline - deleted); st.Documents != want {
		t.Fatalf("documents counter %d, want %d", st.Documents, want)
	}
}

// putFunc is a storage.CellPutter.
type putFunc func(row, qualifier, value []byte) error

func (f putFunc) Put(row, qualifier, value []byte) error { return f(row, qualifier, value) }
