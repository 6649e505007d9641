// Package index benchmarks the kvindex lookup path at 10^6..10^7+
// fingerprints on the embedded Pebble store, against an in-memory
// brute-force scan of the same fingerprints in the same run.
//
//	go run ./scripts/bench/index -n 10000000 -dist random
//	go run ./scripts/bench/index -n 1000000 -dist clustered
//
// It builds the index the way bulk load does (base sets written directly,
// fp and docs rows in large unsynced batches, then a flush), then reports
// lookup latency (one goroutine, warm cache), lookups/s (-workers
// goroutines), online insert throughput (synced), bytes on disk and in base
// sets per fingerprint, candidates per lookup, and the brute-force baseline.
package index

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/bits"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/scripts/bench/internal/diskuse"
	"github.com/simdex/simdex/scripts/bench/internal/hist"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// Run is the tool: its flags in args.
func Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("index", flag.ContinueOnError)
	n := fs.Int("n", 1_000_000, "fingerprints in the index")
	dist := fs.String("dist", "random", "random | clustered (half the fingerprints share 64 hot 16-bit prefixes)")
	queries := fs.Int("queries", 20000, "lookups to time")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "goroutines for the throughput run")
	inserts := fs.Int("inserts", 2000, "online inserts to time (synced)")
	dir := fs.String("dir", "", "index directory (default: a temporary directory, removed afterwards)")
	b := fs.Int("B", 4, "blocks")
	k := fs.Int("K", 3, "distance")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return run(ctx, *n, *dist, *queries, *workers, *inserts, *dir, fingerprint.Layout{B: *b, K: *k})
}

func run(ctx context.Context, n int, dist string, queries, workers, inserts int, dir string, layout fingerprint.Layout) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "simdex-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	r := rand.New(rand.NewPCG(42, uint64(n)))
	fps := make([]uint64, n)
	hot := make([]uint64, 64)
	for i := range hot {
		hot[i] = r.Uint64() &^ (1<<48 - 1)
	}
	for i := range fps {
		fps[i] = r.Uint64()
		if dist == "clustered" && i%2 == 0 {
			fps[i] = hot[r.IntN(len(hot))] | fps[i]&(1<<48-1)
		}
	}
	fmt.Printf("# simdex index benchmark\nn=%d dist=%s layout=%s GOMAXPROCS=%d\n", n, dist, layout, runtime.GOMAXPROCS(0))

	ix, err := openIndex(ctx, dir, layout, true)
	if err != nil {
		return err
	}
	defer ix.Close()
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bucket := ix.Buckets().Of(when)

	start := time.Now()
	var baseBytes int64
	var batch []storage.Mutation
	flush := func(force bool) error {
		if len(batch) >= 100_000 || force && len(batch) > 0 {
			if err := ix.BulkWriter().Apply(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
		return nil
	}
	perms := layout.Permuters()
	err = ix.BulkWriter().BaseSets(fps, bucket, 100_000, func(muts []storage.Mutation) error {
		for _, m := range muts {
			baseBytes += int64(len(m.Value))
		}
		return ix.BulkWriter().Apply(ctx, muts)
	})
	if err != nil {
		return err
	}
	distinct := map[uint64]bool{}
	for i, f := range fps {
		distinct[f] = true
		muts, err := ix.BulkWriter().DocCells(kvindex.Document{ID: fmt.Sprintf("d%d", i), Fingerprint: fingerprint.Fingerprint(f), Time: when})
		if err != nil {
			return err
		}
		batch = append(batch, muts...)
		if err := flush(false); err != nil {
			return err
		}
	}
	batch = append(batch, ix.BulkWriter().Counters(int64(n), int64(len(distinct)))...)
	if err := flush(true); err != nil {
		return err
	}
	st := ix.Store().(*pebblestore.Store)
	if err := st.Flush(); err != nil {
		return err
	}
	if err := st.DB().Compact(ctx, []byte{0}, []byte{0xff}, true); err != nil {
		return err
	}
	build := time.Since(start)
	indexDisk, totalDisk := diskuse.Bytes(dir), diskuse.Bytes(dir)
	_ = indexDisk
	T := layout.NumTables()
	fmt.Printf("build (bulk path, unsynced)  %.1fs  (%.0f fingerprints/s)\n", build.Seconds(), float64(n)/build.Seconds())
	fmt.Printf("base sets                    %.2f bytes per fingerprint per table (raw residual %d bits = %.1f bytes)\n",
		float64(baseBytes)/float64(n)/float64(T), 64-perms[0].PrefixBits, float64(64-perms[0].PrefixBits)/8)
	fmt.Printf("disk, whole store            %.1f bytes per fingerprint (index + fp + docs rows, after compaction)\n", float64(totalDisk)/float64(n))

	// Queries: stored fingerprints with 0..3 bits flipped (so every lookup
	// has at least one answer) and as many random ones.
	qs := make([]fingerprint.Fingerprint, queries)
	for i := range qs {
		if i%2 == 0 {
			f := fingerprint.Fingerprint(fps[r.IntN(n)])
			for _, bit := range r.Perm(64)[:r.IntN(layout.K+1)] {
				f ^= 1 << bit
			}
			qs[i] = f
		} else {
			qs[i] = fingerprint.Fingerprint(r.Uint64())
			if dist == "clustered" && i%4 == 1 {
				qs[i] = fingerprint.Fingerprint(hot[r.IntN(len(hot))] | r.Uint64()&(1<<48-1))
			}
		}
	}
	opt := kvindex.LookupOptions{K: layout.K}
	// Warm-up pass, then the timed pass.
	for _, q := range qs {
		if _, err := ix.Lookup(ctx, q, opt); err != nil {
			return err
		}
	}
	lat := make([]time.Duration, len(qs))
	var cands, hits int64
	for i, q := range qs {
		t0 := time.Now()
		res, err := ix.Lookup(ctx, q, opt)
		lat[i] = time.Since(t0)
		if err != nil {
			return err
		}
		cands += int64(res.Candidates)
		hits += int64(len(res.Hits))
	}
	h := hist.New(lat)
	pct := h.At
	fmt.Printf("lookup k=%d, 1 goroutine      p50 %s  p90 %s  p99 %s  max %s\n", layout.K, pct(.5), pct(.9), pct(.99), h.Max())
	fmt.Printf("candidates per lookup        %.0f (decoded residuals over %d rows); hits per lookup %.2f\n", float64(cands)/float64(len(qs)), T, float64(hits)/float64(len(qs)))

	var wg sync.WaitGroup
	t0 := time.Now()
	per := len(qs) / workers
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, q := range qs[w*per : (w+1)*per] {
				if _, err := ix.Lookup(ctx, q, opt); err != nil {
					log.Fatal(err)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0)
	fmt.Printf("lookups/s, %d goroutines      %.0f\n", workers, float64(per*workers)/el.Seconds())

	// Brute force over the same fingerprints, in memory, one goroutine.
	bq := min(len(qs), 200)
	t0 = time.Now()
	found := 0
	for _, q := range qs[:bq] {
		for _, f := range fps {
			if bits.OnesCount64(f^uint64(q)) <= layout.K {
				found++
			}
		}
	}
	bf := time.Since(t0) / time.Duration(bq)
	fmt.Printf("brute-force scan, in memory  %s per query (%d queries); index p50 is %.0fx faster, p99 %.0fx\n", bf, bq, float64(bf)/float64(pct(.5)), float64(bf)/float64(pct(.99)))

	// Online inserts through the check-and-insert path, synced.
	if inserts > 0 {
		ix.Close()
		ix2, err := openIndex(ctx, dir, layout, false)
		if err != nil {
			return err
		}
		defer ix2.Close()
		for _, par := range []int{1, workers} {
			t0 := time.Now()
			var wg sync.WaitGroup
			per := inserts / par
			for w := range par {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rr := rand.New(rand.NewPCG(uint64(w), uint64(par)))
					for i := range per {
						d := kvindex.Document{ID: fmt.Sprintf("ins-%d-%d-%d", par, w, i), Fingerprint: fingerprint.Fingerprint(rr.Uint64()), Time: when}
						if _, err := ix2.Insert(ctx, d, kvindex.InsertIfUnique, layout.K); err != nil {
							log.Fatal(err)
						}
					}
				}()
			}
			wg.Wait()
			el := time.Since(t0)
			fmt.Printf("online inserts, %d goroutine(s) %.0f/s (insert-if-unique, synced, %s each on average)\n", par, float64(per*par)/el.Seconds(), el/time.Duration(per*par)*time.Duration(par))
		}
		// A batch of 500 in one call.
		var docs []kvindex.Document
		for i := range 500 {
			docs = append(docs, kvindex.Document{ID: fmt.Sprintf("batch-%d", i), Fingerprint: fingerprint.Fingerprint(r.Uint64()), Time: when})
		}
		t0 := time.Now()
		if _, _, err := ix2.InsertBatch(ctx, docs, kvindex.InsertIfUnique, layout.K); err != nil {
			return err
		}
		el := time.Since(t0)
		fmt.Printf("batch insert of 500          %s (%.0f documents/s)\n", el, 500/el.Seconds())
	}
	return nil
}

// openIndex opens the index with layout in the Pebble store in dir (a 1 GiB
// block cache; writes unsynced with noSync).
func openIndex(ctx context.Context, dir string, layout fingerprint.Layout, noSync bool) (*kvindex.Index, error) {
	st, err := pebblestore.Open(dir, pebblestore.Options{NoSync: noSync, CacheBytes: 1 << 30})
	if err != nil {
		return nil, err
	}
	ix, err := kvindex.Open(ctx, st, kvindex.Config{Layout: layout, RecipeVersion: fingerprint.RecipeVersion})
	if err != nil {
		st.Close()
		return nil, err
	}
	return ix, nil
}
