package kvindex_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// benchStoreOptions are the benchmarks' store's: unsynced, with the server's
// default block cache (256 MiB): with a small cache Pebble keeps evicting
// the bottom levels' filter blocks.
var benchStoreOptions = pebblestore.Options{NoSync: true, CacheBytes: 256 << 20}

// BenchmarkInsertBatch250 inserts batches of 250 text-like documents
// (sketch, 1,000 characters, band signature) with a Confirm, as the REST
// batch insert does, into an index with and without LSH band rows.
func BenchmarkInsertBatch250(b *testing.B) {
	for _, mode := range []kvindex.BandsMode{kvindex.BandsOff, kvindex.BandsOn} {
		b.Run("bands="+mode.String(), func(b *testing.B) {
			ix, err := openPebbleIndex(b, b.TempDir(), benchStoreOptions, kvindex.Config{Bands: mode, Confirm: kvindex.ConfirmEach(jaccardConfirm)})
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			r := rand.New(rand.NewPCG(1, 2))
			n := 0
			cpu0 := cpuTime(b)
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
			// Includes Pebble's flushes and compactions of what the
			// batches wrote, in the background.
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
		})
	}
}

// cpuTime is the process's user+system CPU time so far: benchmarks report
// it per op beside wall time, because other processes share the cores.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLookupDocuments is the store side of a check by text: 50,000
// documents with sketches and band signatures (band hashes drawn so that a
// query meets ~4.4 unrelated documents in its band rows, the evaluation
// corpus's rate at 10^6 documents, as scripts/bench/lsh), flushed and
// compacted into sstables; each query is a stored fingerprint 0-3 bits
// away with fresh band hashes (mostly absent band rows).
func BenchmarkLookupDocuments(b *testing.B) {
	const n = 50_000
	dir := b.TempDir()
	ix, err := openPebbleIndex(b, dir, benchStoreOptions, kvindex.Config{Bands: kvindex.BandsOn, Confirm: kvindex.ConfirmEach(jaccardConfirm)})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	r := rand.New(rand.NewPCG(3, 4))
	pool := uint64(n * fingerprint.NumBands * 10 / 44)
	bands := func() fingerprint.Bands {
		bs := make(fingerprint.Bands, fingerprint.NumBands)
		for i := range bs {
			bs[i] = r.Uint64N(pool)
		}
		return bs
	}
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	if err := ix.BulkWriter().BaseSets(slices.Clone(fps), 0, 1<<30, func(m []storage.Mutation) error { return ix.BulkWriter().Apply(bg, m) }); err != nil {
		b.Fatal(err)
	}
	var muts []storage.Mutation
	for i := range fps {
		sk := make(fingerprint.Sketch, fingerprint.SketchSize)
		for k := range sk {
			sk[k] = r.Uint32()
		}
		slices.Sort(sk)
		m, err := ix.BulkWriter().DocCells(kvindex.Document{ID: fmt.Sprintf("doc-%08d", i), Fingerprint: fingerprint.Fingerprint(fps[i]), Time: t0,
			Sketch: slices.Compact(sk), Chars: 1000, Bands: bands()})
		if err != nil {
			b.Fatal(err)
		}
		if muts = append(muts, m...); len(muts) > 50_000 || i == n-1 {
			if err := ix.BulkWriter().Apply(bg, muts); err != nil {
				b.Fatal(err)
			}
			muts = muts[:0]
		}
	}
	st := ix.Store().(*pebblestore.Store)
	if err := st.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := st.DB().Compact(bg, []byte{0}, []byte{0xff}, true); err != nil {
		b.Fatal(err)
	}
	qs := make([]kvindex.Query, 4096)
	for i := range qs {
		qs[i] = kvindex.Query{Fingerprint: flip(r, fingerprint.Fingerprint(fps[r.IntN(n)]), r.IntN(4)), Bands: bands()}
	}
	for _, q := range qs[:1000] { // warm the row cache's index rows
		if _, err := ix.LookupDocuments(bg, []kvindex.Query{q}, kvindex.LookupOptions{K: 3}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i, hits, bandCands := 0, 0, 0
	cpu0 := cpuTime(b)
	for b.Loop() {
		res, err := ix.LookupDocuments(bg, []kvindex.Query{qs[i%len(qs)]}, kvindex.LookupOptions{K: 3})
		if err != nil || len(res[0].Hits) == 0 {
			b.Fatal(err, res)
		}
		hits += len(res[0].Hits)
		bandCands += res[0].BandCandidates
		i++
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(i), "cpu-µs/op")
	b.ReportMetric(float64(bandCands)/float64(i), "bandcands/op")
}

// BenchmarkLookupDocumentsNoBandCells is the REST benchmark's case: an
// index with bands whose 100,000 documents were stored by fingerprint (no
// band cells), queried with (band rows all absent) and without band
// signatures: the difference is the band stage's bookkeeping.
func BenchmarkLookupDocumentsNoBandCells(b *testing.B) {
	ix, fps := benchIndex(b, 100_000)
	r := rand.New(rand.NewPCG(9, 9))
	qs := make([]kvindex.Query, 4096)
	for i := range qs {
		qs[i] = kvindex.Query{Fingerprint: flip(r, fingerprint.Fingerprint(fps[r.IntN(len(fps))]), r.IntN(4)), Bands: bandsFrom(r.Uint64(), nil)}
	}
	for _, withBands := range []bool{false, true} {
		b.Run(fmt.Sprintf("bands=%v", withBands), func(b *testing.B) {
			for _, q := range qs { // warm the row cache's index rows
				if _, err := ix.LookupDocuments(bg, []kvindex.Query{q}, kvindex.LookupOptions{K: 3}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			i := 0
			cpu0 := cpuTime(b)
			for b.Loop() {
				q := qs[i%len(qs)]
				if !withBands {
					q.Bands = nil
				}
				res, err := ix.LookupDocuments(bg, []kvindex.Query{q}, kvindex.LookupOptions{K: 3})
				if err != nil || len(res[0].Hits) == 0 {
					b.Fatal(err, res)
				}
				i++
			}
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(i), "cpu-µs/op")
		})
	}
}
