package storage_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdex/simdex/storage"
)

func BenchmarkDecodeBaseSet(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{150, 1500, 15000} {
		rs := make([]uint64, n)
		for i := range rs {
			rs[i] = r.Uint64() >> 16
		}
		slices.Sort(rs)
		rs = slices.Compact(rs)
		cells, err := storage.EncodeBaseSet(rs, 48, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("residuals=%d", n), func(b *testing.B) {
			dst := make([]uint64, 0, n)
			b.SetBytes(int64(len(cells[0])))
			b.ReportAllocs()
			for b.Loop() {
				if dst, err = storage.DecodeBaseSet(dst[:0], cells[0], 48); err != nil {
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
				if _, err := storage.EncodeBaseSet(rs, 48, 64<<10); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(len(rs)), "ns/residual")
		})
	}
}
