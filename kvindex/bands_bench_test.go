package kvindex_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// BenchmarkInsertBatch250 inserts batches of 250 text-like documents
// (sketch, 1,000 characters, band signature) with a Confirm, as the REST
// batch insert does, into an index with and without LSH band rows.
func BenchmarkInsertBatch250(b *testing.B) {
	for _, mode := range []kvindex.BandsMode{kvindex.BandsOff, kvindex.BandsOn} {
		b.Run("bands="+mode.String(), func(b *testing.B) {
			ix := openAt(b, b.TempDir(), kvindex.Config{Bands: mode, Confirm: jaccardConfirm}, true)
			r := rand.New(rand.NewPCG(1, 2))
			n := 0
			for b.Loop() {
				docs := make([]kvindex.Document, 250)
				for j := range docs {
					sk := make(fingerprint.Sketch, fingerprint.SketchSize)
					for k := range sk {
						sk[k] = r.Uint32()
					}
					slices.Sort(sk)
					docs[j] = kvindex.Document{ID: fmt.Sprintf("d%09d", n), Fingerprint: fingerprint.Fingerprint(r.Uint64()), Time: t0,
						Sketch: slices.Compact(sk), Chars: 1000, Bands: bandsFrom(uint64(n)+1<<40, nil)}
					n++
				}
				if _, _, err := ix.InsertBatch(bg, docs, kvindex.InsertAlways, 3); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
