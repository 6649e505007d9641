package hbasestore_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/indextest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// benchN is the index size of the store benchmarks (scripts/bench runs
// 1000000; the default keeps an accidental -bench run short).
var benchN = flag.Int("hbstore.n", 100_000, "fingerprints in the store benchmarks' index")

// benchStore opens one backend: Pebble (the reference, measured in the
// same run) or HBase (a fresh namespace).
func benchStore(b *testing.B, name string) storage.Store {
	b.Helper()
	if name == "hbase" {
		return openFresh(b)
	}
	ps, err := pebblestore.Open(b.TempDir(), pebblestore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ps.Close() })
	return ps
}

// loadIndex writes n random fingerprints through the bulk path (base sets,
// fp and docs cells) in Mutate calls of 20,000 mutations.
func loadIndex(b *testing.B, st storage.Store, n int, locker storage.Locker) (*kvindex.Index, []uint64, time.Duration) {
	b.Helper()
	ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: 1, Locker: locker})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	r := rand.New(rand.NewPCG(1, 2))
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	batch := indextest.NewBatch(ix)
	if err := ix.BulkWriter().BaseSets(fps, 0, 20_000, func(m []storage.Mutation) error { return ix.BulkWriter().Apply(bg, m) }); err != nil {
		b.Fatal(err)
	}
	for i, f := range fps {
		m, err := ix.BulkWriter().DocCells(kvindex.Document{ID: fmt.Sprint(i), Fingerprint: fingerprint.Fingerprint(f), Time: t0})
		if err != nil {
			b.Fatal(err)
		}
		batch.Add(b, m...)
	}
	batch.Flush(b)
	return ix, fps, time.Since(start)
}

// BenchmarkStoreLookup: one lookup (k=3, a stored fingerprint with 0..3
// bits flipped) per op, single goroutine, reporting p50/p99.
func BenchmarkStoreLookup(b *testing.B) {
	for _, name := range []string{"pebble", "hbase"} {
		b.Run(fmt.Sprintf("store=%s/n=%d", name, *benchN), func(b *testing.B) {
			st := benchStore(b, name)
			ix, fps, load := loadIndex(b, st, *benchN, nil)
			r := rand.New(rand.NewPCG(5, 5))
			var lat []time.Duration
			for b.Loop() {
				q := fingerprint.Fingerprint(fps[r.IntN(len(fps))])
				for _, bit := range r.Perm(64)[:r.IntN(4)] {
					q ^= 1 << bit
				}
				t := time.Now()
				res, err := ix.Lookup(bg, q, kvindex.LookupOptions{K: 3})
				lat = append(lat, time.Since(t))
				if err != nil || len(res.Hits) == 0 {
					b.Fatal(err, res)
				}
			}
			reportPercentiles(b, lat)
			// Bulk-path load rate (base sets + fp + docs cells, one Mutate
			// per 20,000 mutations, one goroutine): not the bulk loader.
			b.ReportMetric(float64(*benchN)/load.Seconds(), "load-fps/s")
		})
	}
}

// BenchmarkStoreInsertIfUnique: one insert-if-unique of a random
// fingerprint per op into an index of hbstore.n (HBase with its lease
// Locker, as servers run it).
func BenchmarkStoreInsertIfUnique(b *testing.B) {
	for _, name := range []string{"pebble", "hbase"} {
		b.Run(fmt.Sprintf("store=%s/n=%d", name, *benchN), func(b *testing.B) {
			st := benchStore(b, name)
			var lk storage.Locker
			if hs, ok := st.(*hbasestore.Store); ok {
				lk = hs.Locker()
			}
			ix, _, _ := loadIndex(b, st, *benchN, lk)
			r := rand.New(rand.NewPCG(6, 6))
			var lat []time.Duration
			i := 0
			for b.Loop() {
				i++
				t := time.Now()
				if _, err := ix.Insert(bg, kvindex.Document{ID: fmt.Sprintf("new-%d", i), Fingerprint: fingerprint.Fingerprint(r.Uint64()), Time: t0}, kvindex.InsertIfUnique, 3); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	b.ReportMetric(float64(len(lat))/sum.Seconds(), "ops/s")
}
