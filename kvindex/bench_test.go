package kvindex_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
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
	var muts []kvindex.Mutation
	if err := ix.BaseSetsOf(fps, 0, 1<<30, func(m []kvindex.Mutation) error { muts = m; return nil }); err != nil {
		b.Fatal(err)
	}
	for i, f := range fps {
		m, _ := ix.DocMutations(doc(fmt.Sprint(i), fingerprint.Fingerprint(f), t0))
		muts = append(muts, m...)
	}
	if err := ix.Apply(bg, muts); err != nil {
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

func BenchmarkDecodeBaseSet(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{150, 1500, 15000} {
		rs := make([]uint64, n)
		for i := range rs {
			rs[i] = r.Uint64() >> 16
		}
		slices.Sort(rs)
		rs = slices.Compact(rs)
		cells, err := kvindex.EncodeBaseSet(rs, 48, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("residuals=%d", n), func(b *testing.B) {
			dst := make([]uint64, 0, n)
			b.SetBytes(int64(len(cells[0])))
			b.ReportAllocs()
			for b.Loop() {
				if dst, err = kvindex.DecodeBaseSet(dst[:0], cells[0], 48); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(cells[0]))/float64(len(rs)), "bytes/residual")
		})
	}
}

// BenchmarkEncodeBaseSet encodes one row's bucket of random residuals: 12
// is a row of a 10^7 load spread over a year (bulk load's common case),
// 1500 a row of 10^8 in one bucket.
func BenchmarkEncodeBaseSet(b *testing.B) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{12, 150, 1500} {
		rs := make([]uint64, n)
		for i := range rs {
			rs[i] = r.Uint64() >> 16
		}
		slices.Sort(rs)
		rs = slices.Compact(rs)
		b.Run(fmt.Sprintf("residuals=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := kvindex.EncodeBaseSet(rs, 48, 64<<10); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(len(rs)), "ns/residual")
		})
	}
}
