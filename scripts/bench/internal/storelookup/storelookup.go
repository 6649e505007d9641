// Package storelookup measures store-level lookups (kvindex.Index.Lookup,
// k = the layout's K) on an index that cmd/bulkload loaded, on the embedded
// store or on HBase: latency p50/p99 and lookups/s with one and several
// goroutines (closed loops), and open loops at fixed rates. Queries are
// fingerprints of the load's input with 0..3 random bits flipped; each
// lookup must return the input's document (a recall check, so a broken
// index cannot look fast). With -random the queries are random
// fingerprints instead, which have no hits: the load scripts/bench/hbrest.sh
// sends through REST (on HBase one Multi of T gets per lookup), here
// without HTTP, so the two show what REST adds.
//
// -sizes prints the index's bytes per fingerprint (and, on the embedded
// store, each table's bytes on disk); -check N compares N sampled lookups
// with a brute-force scan of the whole input, hit for hit, before the
// timed loops (the loops' own check is only that a query's document is
// among its hits).
//
// An open loop sends lookups on a fixed schedule whatever the store does,
// and a lookup's latency counts from when it was due, not from when a
// worker got to it: a stall shows as the latency of every lookup it
// delayed (no coordinated omission).
//
//	go run ./scripts/bench/storelookup -data-dir d1m -input fp1m.csv
//	go run ./scripts/bench/storelookup -hbase-zk 127.0.0.1:23281 -hbase-namespace b1m -input fp1m.csv
//	go run ./scripts/bench/storelookup -hbase-zk 127.0.0.1:22181 -hbase-namespace hbrest1000000 -random -goroutines 1,4 -rates 1000,2000 -duration 60s
//	go run ./scripts/bench/storelookup -data-dir dfp -input fps.csv -sizes -check 100 -goroutines ''
package storelookup

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/open"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/scripts/bench/internal/hist"
	"github.com/simdex/simdex/scripts/bench/internal/pace"
	"github.com/simdex/simdex/storage/hbasestore"
)

type query struct {
	id string
	fp fingerprint.Fingerprint
}

// Run is the tool: its flags in args.
func Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("storelookup", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "embedded store directory")
	zk := fs.String("hbase-zk", "", "HBase ZooKeeper (instead of -data-dir)")
	ns := fs.String("hbase-namespace", "simdex", "HBase namespace")
	input := fs.String("input", "", "the load's input (id,hex fingerprint,time lines)")
	random := fs.Bool("random", false, "random query fingerprints (no hits expected) instead of -input's")
	rates := fs.String("rates", "", "open-loop rates to measure, lookups/s (e.g. 1000,2000)")
	dur := fs.Duration("duration", 30*time.Second, "how long each open loop runs")
	sample := fs.Int("sample", 5000, "input lines to draw queries from (the first N)")
	ops := fs.Int("ops", 3000, "lookups per goroutine setting")
	gs := fs.String("goroutines", "1,4,16", "goroutine counts to measure (closed loops; \"\" for none)")
	warm := fs.Int("warm", 500, "warm-up lookups")
	sizes := fs.Bool("sizes", false, "print the index's bytes per fingerprint first")
	checkN := fs.Int("check", 0, "compare this many sampled lookups with a brute-force scan of all of -input first")
	if err := fs.Parse(args); err != nil {
		return err
	}

	where := open.Store{Kind: "pebble", DataDir: *dataDir}
	if *zk != "" {
		where = open.Store{Kind: "hbase", HBase: hbasestore.Config{ZooKeeper: strings.Split(*zk, ","), Namespace: *ns}}
	}
	ix, err := open.Index(ctx, where, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, AdoptStored: true, NoCreate: true})
	if err != nil {
		return err
	}
	defer ix.Close()
	if *sizes {
		if err := printSizes(ctx, ix); err != nil {
			return err
		}
	}
	if *checkN > 0 {
		if err := bruteCheck(ctx, ix, *input, *checkN); err != nil {
			return err
		}
	}
	if strings.TrimSpace(*gs) == "" && strings.TrimSpace(*rates) == "" {
		return nil
	}

	r := rand.New(rand.NewPCG(7, 7))
	var qs []query
	var flip func(query) query
	if *random {
		// Not the PCG(7, 7) above: scripts/bench/hbsrvload draws the stored
		// fingerprints from that same stream.
		rr := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		qs = []query{{}}
		flip = func(query) query { return query{fp: fingerprint.Fingerprint(rr.Uint64())} }
	} else {
		if qs, err = readQueries(*input, *sample); err != nil {
			return err
		}
		flip = func(q query) query {
			for _, b := range r.Perm(64)[:r.IntN(ix.Layout().K+1)] {
				q.fp ^= 1 << b
			}
			return q
		}
	}
	// check counts a result: with -random a hit is a surprise worth
	// counting, otherwise a lookup that misses its own document is.
	check := func(q query, res kvindex.LookupResult) bool {
		if *random {
			return len(res.Hits) == 0
		}
		return slices.ContainsFunc(res.Hits, func(h kvindex.Hit) bool { return h.ID == q.id })
	}
	for range *warm {
		if _, err := ix.Lookup(ctx, flip(qs[r.IntN(len(qs))]).fp, kvindex.LookupOptions{K: ix.Layout().K}); err != nil {
			return err
		}
	}
	store := "pebble " + *dataDir
	if *zk != "" {
		store = "hbase " + *ns
	}
	from := fmt.Sprintf("%d queries from %s", len(qs), *input)
	if *random {
		from = "random queries"
	}
	fmt.Printf("store %s, layout %s, %s\n", store, ix.Layout(), from)
	fmt.Printf("%-14s %8s %10s %10s %10s %10s %12s %8s %s\n", "load", "lookups", "p50", "p99", "p99.9", "max", "lookups/s", "misses", "mean candidates")
	goroutines, err := positiveInts("goroutines", *gs)
	if err != nil {
		return err
	}
	rateList, err := positiveInts("rates", *rates)
	if err != nil {
		return err
	}
	// drawWork is n queries drawn from qs, each with a few bits flipped.
	drawWork := func(n int) []query {
		w := make([]query, n)
		for i := range w {
			w[i] = flip(qs[r.IntN(len(qs))])
		}
		return w
	}
	for _, g := range goroutines {
		work := drawWork(*ops)
		lat := make([]time.Duration, len(work))
		t := tally{check: check}
		var wg sync.WaitGroup
		start := time.Now()
		for w := range g {
			wg.Go(func() {
				for i := w; i < len(work); i += g {
					t0 := time.Now()
					res, err := ix.Lookup(ctx, work[i].fp, kvindex.LookupOptions{K: ix.Layout().K})
					lat[i] = time.Since(t0)
					t.add(work[i], res, err)
				}
			})
		}
		wg.Wait()
		t.report(fmt.Sprintf("%d goroutines", g), lat, time.Since(start))
	}
	for _, rate := range rateList {
		work := drawWork(int(float64(rate) * dur.Seconds()))
		lat := make([]time.Duration, len(work))
		t := tally{check: check}
		// The dispatcher hands out lookup i at start + i/rate (all that are
		// due at once if it woke late); 64 workers take them, so a slow
		// lookup delays later ones only when all 64 are busy. Latency
		// counts from the due time; late records how late the dispatcher
		// handed each out (its own delay, counted in the latency).
		due := make(chan int, len(work))
		late := make([]time.Duration, len(work))
		interval := time.Second / time.Duration(rate)
		sleep := pace.NewSleeper()
		start := time.Now()
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for i := range due {
					res, err := ix.Lookup(ctx, work[i].fp, kvindex.LookupOptions{K: ix.Layout().K})
					lat[i] = time.Since(start.Add(time.Duration(i) * interval))
					t.add(work[i], res, err)
				}
			})
		}
		for i := range work {
			at := start.Add(time.Duration(i) * interval)
			sleep.Until(at)
			late[i] = time.Since(at)
			due <- i
		}
		sleep.Close()
		close(due)
		wg.Wait()
		t.report(fmt.Sprintf("%d/s open", rate), lat, time.Since(start))
		lh := hist.New(late)
		fmt.Printf("%14s handed out after due: p50 %s, p99 %s, p99.9 %s\n", "", us(lh.Rank(.5)), us(lh.Rank(.99)), us(lh.Rank(.999)))
	}
	return nil
}

// tally counts the outcomes of one load's lookups, from any goroutine.
type tally struct {
	check func(query, kvindex.LookupResult) bool

	mu       sync.Mutex // protects the fields below
	misses   int        // lookups that check rejected
	cands    int        // candidates examined, summed
	firstErr error
}

func (t *tally) add(q query, res kvindex.LookupResult, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil && t.firstErr == nil {
		t.firstErr = err
	}
	if !t.check(q, res) {
		t.misses++
	}
	t.cands += res.Candidates
}

// report prints one line of the table for one load of d, or exits on the
// load's first error.
func (t *tally) report(load string, lat []time.Duration, d time.Duration) {
	if t.firstErr != nil {
		log.Fatal(t.firstErr)
	}
	h := hist.New(lat)
	fmt.Printf("%-14s %8d %10s %10s %10s %10s %12.0f %8d %.0f\n", load, len(lat), us(h.Rank(.5)), us(h.Rank(.99)), us(h.Rank(.999)), us(h.Max()),
		float64(len(lat))/d.Seconds(), t.misses, float64(t.cands)/float64(len(lat)))
}

func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d.Microseconds())) }

// readQueries reads the first n "id,fingerprint,time" lines.
func readQueries(path string, n int) ([]query, error) {
	var out []query
	err := eachLine(path, func(line string) (bool, error) {
		if len(out) >= n {
			return false, nil
		}
		parts := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == '\t' })
		if len(parts) < 2 {
			return true, nil
		}
		fp, err := fingerprint.Parse(parts[1])
		if err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, query{id: parts[0], fp: fp})
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no queries", path)
	}
	return out, nil
}

// positiveInts parses the comma-separated list of flag -name (blank items
// skipped), each a whole number of at least 1.
func positiveInts(name, list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad -%s %q", name, list)
		}
		out = append(out, n)
	}
	return out, nil
}
