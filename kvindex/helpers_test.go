package kvindex_test

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/pebblestore"
)

var bg = context.Background()

const testRecipe = 1

func openAt(t testing.TB, dir string, cfg kvindex.Config, noSync bool) *kvindex.Index {
	t.Helper()
	st, err := pebblestore.Open(dir, pebblestore.Options{NoSync: noSync, CacheBytes: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RecipeVersion == 0 {
		cfg.RecipeVersion = testRecipe
	}
	ix, err := kvindex.Open(bg, st, cfg)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func openIndex(t testing.TB, layout fingerprint.Layout) *kvindex.Index {
	return openAt(t, t.TempDir(), kvindex.Config{Layout: layout}, false)
}

// flip returns fp with d distinct random bits flipped.
func flip(r *rand.Rand, fp fingerprint.Fingerprint, d int) fingerprint.Fingerprint {
	for _, b := range r.Perm(64)[:d] {
		fp ^= 1 << b
	}
	return fp
}

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
