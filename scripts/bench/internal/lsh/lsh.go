// Package lsh measures what the LSH band rows cost on the embedded Pebble
// store: bytes per document (band cells and the larger docs cell) and the
// latency of a check by text, before (pigeonhole lookup, then the hits'
// docs cells: the server's path without bands) and after (LookupDocuments:
// index and band rows in one multi-get, then the docs cells of index and
// band candidates).
//
//	go run ./scripts/bench/lsh -n 1000000 -queries 5000
//
// Documents are synthetic (random fingerprints and 64-value sketches, 1,000
// characters): what matters here is the number of rows and cells read, not
// the text. Band hashes are drawn from a pool sized so that a query meets
// -false-cands unrelated documents in its band rows on average: the rate of
// band collisions between unrelated texts measured on the evaluation corpus
// (benchmarks/2026-11-23-lsh-quality.md: 4.4e-6 per stored document for
// b=32, r=4, i.e. 4.4 per lookup at 10^6 documents).
package lsh

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"slices"
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
	fs := flag.NewFlagSet("lsh", flag.ContinueOnError)
	n := fs.Int("n", 200_000, "documents in the index")
	queries := fs.Int("queries", 5000, "checks to time per path")
	falseCands := fs.Float64("false-cands", 4.4, "expected unrelated documents sharing a band row with a query")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return run(ctx, *n, *queries, *falseCands)
}

type gen struct {
	r    *rand.Rand
	pool uint64 // band hashes are drawn from 0..pool-1 (per band)
}

func (g *gen) sketch() fingerprint.Sketch {
	s := make(fingerprint.Sketch, fingerprint.SketchSize)
	for i := range s {
		s[i] = g.r.Uint32()
	}
	slices.Sort(s)
	return slices.Compact(s)
}

func (g *gen) bands() fingerprint.Bands {
	b := make(fingerprint.Bands, fingerprint.NumBands)
	for i := range b {
		b[i] = g.r.Uint64N(g.pool)
	}
	return b
}

func run(ctx context.Context, n, queries int, falseCands float64) error {
	fmt.Printf("# simdex LSH band cost\nn=%d queries=%d false-cands=%.1f (expected per lookup)\n\n", n, queries, falseCands)
	fmt.Println("| index | disk bytes/doc | docs cell bytes | band cells/doc | path | p50 | p90 | p99 | docs read/check | band candidates/check |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, mode := range []kvindex.BandsMode{kvindex.BandsOff, kvindex.BandsOn} {
		if err := runMode(ctx, n, queries, falseCands, mode); err != nil {
			return err
		}
	}
	return nil
}

func runMode(ctx context.Context, n, queries int, falseCands float64, mode kvindex.BandsMode) error {
	dir, err := os.MkdirTemp("", "simdex-lsh-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := pebblestore.Open(dir, pebblestore.Options{NoSync: true, CacheBytes: 512 << 20})
	if err != nil {
		return err
	}
	// Confirm as the server's rule does for long texts: with it, inserts
	// read (and lock) the new documents' band rows too.
	confirm := func(a, b kvindex.Document, _ int) bool { return fingerprint.Jaccard(a.Sketch, b.Sketch) >= 0.6 }
	ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, Bands: mode, Confirm: kvindex.ConfirmEach(confirm)})
	if err != nil {
		return err
	}
	defer ix.Close()
	g := &gen{r: rand.New(rand.NewPCG(42, uint64(n))), pool: uint64(float64(n) * fingerprint.NumBands / falseCands)}
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = g.r.Uint64()
	}
	if err := ix.BulkWriter().BaseSets(slices.Clone(fps), ix.Buckets().Of(when), 100_000, func(m []storage.Mutation) error { return ix.BulkWriter().Apply(ctx, m) }); err != nil {
		return err
	}
	var batch []storage.Mutation
	var docBytes, bandCells int64
	for i, f := range fps {
		muts, err := ix.BulkWriter().DocCells(kvindex.Document{ID: fmt.Sprintf("doc-%08d", i), Fingerprint: fingerprint.Fingerprint(f), Time: when,
			Sketch: g.sketch(), Chars: 1000, Bands: g.bands()})
		if err != nil {
			return err
		}
		for _, m := range muts {
			switch m.Table {
			case storage.TableDocs:
				docBytes += int64(len(m.Value))
			case storage.TableBands:
				bandCells++
			}
		}
		batch = append(batch, muts...)
		if len(batch) >= 100_000 {
			if err := ix.BulkWriter().Apply(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := ix.BulkWriter().Apply(ctx, batch); err != nil {
		return err
	}
	if err := st.Flush(); err != nil {
		return err
	}
	if err := st.DB().Compact(ctx, []byte{0}, []byte{0xff}, true); err != nil {
		return err
	}
	disk := float64(diskuse.Bytes(dir)) / float64(n)

	// Queries: a stored document's fingerprint with 1-2 bits flipped (one
	// index hit), its own fresh band hashes (false band candidates only).
	type query struct {
		q kvindex.Query
	}
	qs := make([]query, queries)
	for i := range qs {
		f := fps[g.r.IntN(n)] ^ 1<<g.r.IntN(64) ^ 1<<g.r.IntN(64)
		qs[i] = query{kvindex.Query{Fingerprint: fingerprint.Fingerprint(f), Bands: g.bands()}}
	}
	opt := kvindex.LookupOptions{K: 3}
	// Warm the cache once over the queries' rows.
	for _, q := range qs[:min(len(qs), 1000)] {
		if _, err := ix.LookupDocuments(ctx, []kvindex.Query{q.q}, opt); err != nil {
			return err
		}
	}
	lat := make([]time.Duration, len(qs))
	var docsRead, bandCands int
	// Before: the pigeonhole lookup, then the hits' docs cells.
	for i, q := range qs {
		t := time.Now()
		res, err := ix.Lookup(ctx, q.q.Fingerprint, opt)
		if err != nil {
			return err
		}
		ids := make([]string, len(res.Hits))
		for j, h := range res.Hits {
			ids[j] = h.ID
		}
		if _, err := ix.Documents(ctx, ids); err != nil {
			return err
		}
		lat[i] = time.Since(t)
		docsRead += len(ids)
	}
	name := map[kvindex.BandsMode]string{kvindex.BandsOff: "no bands", kvindex.BandsOn: "bands b=32 r=4"}[mode]
	row := func(path string) {
		h := hist.New(lat)
		p := func(f float64) string {
			return fmt.Sprintf("%.0f µs", float64(h.At(f).Microseconds()))
		}
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %s | %s | %s | %s | %.2f | %.2f |\n", name, disk, float64(docBytes)/float64(n), float64(bandCells)/float64(n), path,
			p(0.5), p(0.9), p(0.99), float64(docsRead)/float64(len(qs)), float64(bandCands)/float64(len(qs)))
	}
	row("Lookup + Documents (before)")
	defer func() {
		// Online inserts (InsertAlways, batches of 250 as the eval runner
		// sends them; the store is unsynced here).
		const inserts, batchSize = 5000, 250
		t := time.Now()
		for i := 0; i < inserts; i += batchSize {
			docs := make([]kvindex.Document, batchSize)
			for j := range docs {
				docs[j] = kvindex.Document{ID: fmt.Sprintf("new-%08d", i+j), Fingerprint: fingerprint.Fingerprint(g.r.Uint64()), Time: when,
					Sketch: g.sketch(), Chars: 1000, Bands: g.bands()}
			}
			if _, _, err := ix.InsertBatch(ctx, docs, kvindex.InsertAlways, 3); err != nil {
				log.Fatal(err)
			}
		}
		el := time.Since(t)
		fmt.Printf("| %s | | | | InsertBatch of 250, InsertAlways | %.1f ms per batch | | | %.0f docs/s | |\n", name, float64(el.Milliseconds())/float64(inserts/batchSize), float64(inserts)/el.Seconds())
	}()
	if mode == kvindex.BandsOff {
		return nil
	}
	docsRead = 0
	for i, q := range qs {
		t := time.Now()
		res, err := ix.LookupDocuments(ctx, []kvindex.Query{q.q}, opt)
		if err != nil {
			return err
		}
		lat[i] = time.Since(t)
		docsRead += len(res[0].Hits)
		bandCands += res[0].BandCandidates
	}
	row("LookupDocuments with bands (after)")
	return nil
}
