package kvindex_test

import (
	"context"
	"math/bits"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/indextest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/pebblestore"
)

var bg = context.Background()

const testRecipe = 1

// openStore opens the Pebble store in dir.
func openStore(t testing.TB, dir string) *pebblestore.Store {
	t.Helper()
	st, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// openPebbleIndex opens the index with cfg (RecipeVersion testRecipe unless
// set) on the Pebble store in dir, opened with opts, and returns Open's
// error; the store is closed again when the index does not open.
func openPebbleIndex(t testing.TB, dir string, opts pebblestore.Options, cfg kvindex.Config) (*kvindex.Index, error) {
	t.Helper()
	st, err := pebblestore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RecipeVersion == 0 {
		cfg.RecipeVersion = testRecipe
	}
	ix, err := kvindex.Open(bg, st, cfg)
	if err != nil {
		st.Close()
	}
	return ix, err
}

func openAt(t testing.TB, dir string, cfg kvindex.Config, noSync bool) *kvindex.Index {
	t.Helper()
	ix, err := openPebbleIndex(t, dir, pebblestore.Options{NoSync: noSync, CacheBytes: 32 << 20}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func openIndex(t testing.TB, layout fingerprint.Layout) *kvindex.Index {
	return openAt(t, t.TempDir(), kvindex.Config{Layout: layout}, false)
}

// flip returns fp with d distinct random bits flipped.
var flip = indextest.Flip

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func doc(id string, fp fingerprint.Fingerprint, at time.Time) kvindex.Document {
	return kvindex.Document{ID: id, Fingerprint: fp, Time: at}
}

func mustInsert(t testing.TB, ix *kvindex.Index, d kvindex.Document, mode kvindex.InsertMode) kvindex.InsertResult {
	t.Helper()
	r, err := ix.Insert(bg, d, mode, ix.Layout().K)
	if err != nil {
		t.Fatalf("Insert %s: %v", d.ID, err)
	}
	return r
}

// insertAll inserts docs concurrently (released at once) through Insert
// and returns each document's result.
func insertAll(t *testing.T, ix *kvindex.Index, docs []kvindex.Document, mode kvindex.InsertMode) []kvindex.InsertResult {
	t.Helper()
	res := make([]kvindex.InsertResult, len(docs))
	errs := make([]error, len(docs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range docs {
		wg.Go(func() {
			<-start
			res[i], errs[i] = ix.Insert(bg, docs[i], mode, 3)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("insert %s: %v", docs[i].ID, err)
		}
	}
	return res
}

func ids(hits []kvindex.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// oracle is the brute-force answer: every live document within k of q.
type oracle map[string]kvindex.Document

func (o oracle) within(q fingerprint.Fingerprint, k int) []string {
	var out []string
	for id, d := range o {
		if bits.OnesCount64(uint64(d.Fingerprint^q)) <= k {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
