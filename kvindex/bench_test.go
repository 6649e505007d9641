package kvindex_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// benchIndex builds an index of n random fingerprints through the bulk path
// (base sets) and returns it with the fingerprints.
func benchIndex(b *testing.B, n int) (*kvindex.Index, []uint64) {
	b.Helper()
	ix := openAt(b, b.TempDir(), kvindex.Config{}, true)
	r := rand.New(rand.NewPCG(1, 2))
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	var muts []storage.Mutation
	if err := ix.BulkWriter().BaseSets(fps, 0, 1<<30, func(m []storage.Mutation) error { muts = m; return nil }); err != nil {
		b.Fatal(err)
	}
	for i, f := range fps {
		m, _ := ix.BulkWriter().DocCells(doc(fmt.Sprint(i), fingerprint.Fingerprint(f), t0))
		muts = append(muts, m...)
	}
	if err := ix.BulkWriter().Apply(bg, muts); err != nil {
		b.Fatal(err)
	}
	return ix, fps
}

func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ix, fps := benchIndex(b, n)
			r := rand.New(rand.NewPCG(5, 5))
			cands := 0
			lookups := 0
			b.ResetTimer()
			for b.Loop() {
				q := flip(r, fingerprint.Fingerprint(fps[r.IntN(len(fps))]), r.IntN(4))
				res, err := ix.Lookup(bg, q, kvindex.LookupOptions{K: 3})
				if err != nil || len(res.Hits) == 0 {
					b.Fatal(err, res)
				}
				cands += res.Candidates
				lookups++
			}
			b.ReportMetric(float64(cands)/float64(lookups), "candidates/op")
		})
	}
}

func BenchmarkInsertIfUnique(b *testing.B) {
	ix, _ := benchIndex(b, 100_000)
	r := rand.New(rand.NewPCG(6, 6))
	i := 0
	for b.Loop() {
		i++
		if _, err := ix.Insert(bg, doc(fmt.Sprintf("new-%d", i), fingerprint.Fingerprint(r.Uint64()), t0), kvindex.InsertIfUnique, 3); err != nil {
			b.Fatal(err)
		}
	}
}
