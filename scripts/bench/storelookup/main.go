// Command storelookup measures store-level lookups (kvindex.Index.Lookup,
// k = the layout's K) on an index that cmd/bulkload loaded, on the embedded
// store or on HBase: latency p50/p99 and lookups/s with one and several
// goroutines. Queries are fingerprints of the load's input with 0..3 random
// bits flipped; each lookup must return the input's document (a recall
// check, so a broken index cannot look fast).
//
//	go run ./scripts/bench/storelookup -data-dir d1m -input fp1m.csv
//	go run ./scripts/bench/storelookup -hbase-zk 127.0.0.1:23281 -hbase-namespace b1m -input fp1m.csv
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/kvindex/hbasestore"
	"github.com/simdex/simdex/kvindex/pebblestore"
)

type query struct {
	id string
	fp fingerprint.Fingerprint
}

func main() {
	dataDir := flag.String("data-dir", "", "embedded store directory")
	zk := flag.String("hbase-zk", "", "HBase ZooKeeper (instead of -data-dir)")
	ns := flag.String("hbase-namespace", "simdex", "HBase namespace")
	input := flag.String("input", "", "the load's input (id,hex fingerprint,time lines)")
	sample := flag.Int("sample", 5000, "input lines to draw queries from (the first N)")
	ops := flag.Int("ops", 3000, "lookups per goroutine setting")
	gs := flag.String("goroutines", "1,4,16", "goroutine counts to measure")
	warm := flag.Int("warm", 500, "warm-up lookups")
	flag.Parse()
	ctx := context.Background()

	var st kvindex.Store
	var err error
	if *zk != "" {
		st, err = hbasestore.Open(ctx, hbasestore.Config{ZooKeeper: strings.Split(*zk, ","), Namespace: *ns})
	} else {
		st, err = pebblestore.Open(*dataDir, pebblestore.Options{})
	}
	if err != nil {
		log.Fatal(err)
	}
	meta, _, err := kvindex.ReadMeta(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	ix, err := kvindex.Open(ctx, st, kvindex.Config{Layout: meta.Layout, BucketWidth: meta.BucketWidth, RecipeVersion: fingerprint.RecipeVersion})
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()

	qs, err := readQueries(*input, *sample)
	if err != nil {
		log.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 7))
	flip := func(q query) query {
		for _, b := range r.Perm(64)[:r.IntN(ix.Layout().K+1)] {
			q.fp ^= 1 << b
		}
		return q
	}
	for range *warm {
		if _, err := ix.Lookup(ctx, flip(qs[r.IntN(len(qs))]).fp, kvindex.LookupOptions{K: ix.Layout().K}); err != nil {
			log.Fatal(err)
		}
	}
	store := "pebble " + *dataDir
	if *zk != "" {
		store = "hbase " + *ns
	}
	fmt.Printf("store %s, layout %s, %d queries from %s\n", store, ix.Layout(), len(qs), *input)
	fmt.Printf("%-10s %8s %10s %10s %10s %12s %8s %s\n", "goroutines", "lookups", "p50", "p99", "max", "lookups/s", "misses", "mean candidates")
	for _, f := range strings.Split(*gs, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || g < 1 {
			log.Fatalf("bad -goroutines %q", *gs)
		}
		work := make([]query, *ops)
		for i := range work {
			work[i] = flip(qs[r.IntN(len(qs))])
		}
		lat := make([]time.Duration, len(work))
		var mu sync.Mutex // protects misses, cands and firstErr
		var misses, cands int
		var firstErr error
		var wg sync.WaitGroup
		start := time.Now()
		for w := range g {
			wg.Go(func() {
				for i := w; i < len(work); i += g {
					t := time.Now()
					res, err := ix.Lookup(ctx, work[i].fp, kvindex.LookupOptions{K: ix.Layout().K})
					lat[i] = time.Since(t)
					found := slices.ContainsFunc(res.Hits, func(h kvindex.Hit) bool { return h.ID == work[i].id })
					mu.Lock()
					if err != nil && firstErr == nil {
						firstErr = err
					}
					if !found {
						misses++
					}
					cands += res.Candidates
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		d := time.Since(start)
		if firstErr != nil {
			log.Fatal(firstErr)
		}
		slices.Sort(lat)
		fmt.Printf("%-10d %8d %10s %10s %10s %12.0f %8d %.0f\n", g, len(work), us(lat[len(lat)/2]), us(lat[len(lat)*99/100]), us(lat[len(lat)-1]),
			float64(len(work))/d.Seconds(), misses, float64(cands)/float64(len(work)))
	}
}

func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d.Microseconds())) }

// readQueries reads the first n "id,fingerprint,time" lines.
func readQueries(path string, n int) ([]query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []query
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(out) < n {
		parts := strings.FieldsFunc(sc.Text(), func(r rune) bool { return r == ',' || r == '\t' })
		if len(parts) < 2 {
			continue
		}
		fp, err := fingerprint.Parse(parts[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, query{id: parts[0], fp: fp})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no queries", path)
	}
	return out, sc.Err()
}
