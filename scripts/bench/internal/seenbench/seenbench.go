// Package seenbench benchmarks per-user seen sets (package seen) on the
// embedded Pebble store against Redis holding the same data as one set per
// user, in the same run (scripts/bench/seen.sh starts the Redis):
//
//   - load: U users x N items spread over B daily buckets (Import, the
//     folded form), the same ids SADDed to Redis with pipelining;
//   - size: bytes per seen item on disk after a fold and a full Pebble
//     compaction, against Redis' used_memory per item;
//   - filter: 500 candidates (half seen) for one random user: p50/p99 at
//     the store level (Service.Filter, in this process), through REST (real
//     HTTP on 127.0.0.1 to this program re-run with -serve as a child
//     process on the same store) in four forms (the full filter answer,
//     "answer": "kept", "answer": "indexes", and the check route),
//     net/http's own floor (floor.go) and SMISMEMBER for the same queries,
//     interleaved over -rounds rounds and pooled after them; CPU per
//     request of each server process and of this client; every
//     candidate's answer cross-checked (filter.go and lean.go say what is
//     timed);
//   - marks/s through Service.Mark (delta cells, synced writes) with G
//     goroutines, pages of 20 items, against SADD of the same pages.
//
// Usage (its command, or `bench seen`): go run ./scripts/bench/seen -redis 127.0.0.1:PORT [-users 100000]
// [-items 1000] [-queries 2000] [-rounds 1] [-dir DIR [-skip-load]]
// [-pprof-addr 127.0.0.1:6060] [-rest-forms full,kept,indexes,check,floor]
// [-dump-latencies FILE] [-server-env NAME=VALUE,...]
package seenbench

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	_ "net/http/pprof" // served only with -pprof-addr
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/simdex/simdex/scripts/bench/internal/hist"
	"github.com/simdex/simdex/seen"
	"github.com/simdex/simdex/storage/pebblestore"
)

// fs holds the tool's flags; Run parses them once per process (the
// REST server child is this tool run again with -serve).
var fs = flag.NewFlagSet("seen", flag.ContinueOnError)

var (
	users      = fs.Int("users", 100000, "users")
	items      = fs.Int("items", 1000, "seen items per user")
	buckets    = fs.Int("buckets", 30, "days the items are spread over (one bucket per day)")
	queries    = fs.Int("queries", 2000, "filter queries (each: one random user)")
	cands      = fs.Int("candidates", 500, "candidates per filter (half of them seen)")
	markUsers  = fs.Int("mark-users", 2000, "users receiving new marks in the marks/s phase")
	markPages  = fs.Int("mark-pages", 5, "pages of 20 items marked per user in the marks/s phase")
	goroutines = fs.Int("goroutines", 4, "concurrent markers")
	redisAddr  = fs.String("redis", "", "Redis address (127.0.0.1:port); empty: no Redis comparison")
	dir        = fs.String("dir", "", "store directory (default: a temporary one, removed)")
	pprofAddr  = fs.String("pprof-addr", "", "serve net/http/pprof on this loopback address (e.g. 127.0.0.1:6060) from the REST server process, to profile it under load")
	formsFlag  = fs.String("rest-forms", "full,kept,indexes,check", "REST forms to measure, comma-separated (full, kept, indexes, check; and floor: net/http alone, floor.go)")
	serveFloor = fs.Bool("serve-floor", false, "internal: with -serve, be the net/http floor child (floor.go) instead")
	serveOnly  = fs.Bool("serve", false, "internal: be the REST server child on -dir (the parent starts it)")
	skipLoad   = fs.Bool("skip-load", false, "reuse the store in -dir and the Redis data of an earlier run with the same -users/-items (skips the load, size and marks phases): for repeated filter measurements")
	dumpLat    = fs.String("dump-latencies", "", "write each round's per-query latencies (µs; a column per REST form measured, then Redis) to FILE.ROUND")
	childEnv   = fs.String("server-env", "", "extra environment of the REST server child, comma-separated NAME=VALUE pairs (e.g. GOMAXPROCS=1)")
	rounds     = fs.Int("rounds", 1, "filter rounds: each measures every REST form and then Redis again, interleaved, so drifts of a shared machine show as differences between rounds")
)

// Run is the tool: its flags in args.
func Run(ctx context.Context, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *serveOnly {
		if *pprofAddr != "" {
			go func() { log.Print(http.ListenAndServe(*pprofAddr, nil)) }() // lives as long as the process
		}
		serve(ctx, *dir, *serveFloor)
		return nil
	}
	d := *dir
	if d == "" {
		var err error
		if d, err = os.MkdirTemp("", "seen-bench-"); err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
	}
	var rc *redisConn
	if *redisAddr != "" {
		var err error
		if rc, err = dialRedis(*redisAddr); err != nil {
			log.Fatal(err)
		}
		if !*skipLoad {
			must(rc.do("FLUSHALL"))
		}
	}
	now := time.Now()
	total := *users * *items
	fmt.Printf("# seen benchmark: %d users x %d items (%d), %d daily buckets, %d candidates per filter, %d queries; %s\n",
		*users, *items, total, *buckets, *cands, *queries, now.UTC().Format(time.RFC3339))

	if *skipLoad {
		fmt.Printf("load: skipped (-skip-load: the store in %s and Redis' data from an earlier run)\n", d)
	} else {
		load(ctx, d, rc, now, total)
	}

	// Serve: reopen as the server does (synced writes).
	st, svc := openSeen(ctx, d, pebblestore.Options{})

	rng := rand.New(rand.NewPCG(1, 2))
	qs := make([]query, *queries)
	for i := range qs {
		u := rng.IntN(*users)
		q := query{user: userID(u)}
		for k := range *cands {
			if k%2 == 0 {
				q.ids = append(q.ids, itemID(u, rng.IntN(*items)))
			} else {
				q.ids = append(q.ids, fmt.Sprintf("new-%x", rng.Uint64()))
			}
		}
		slices.Sort(q.ids)
		q.ids = slices.Compact(q.ids)
		rng.Shuffle(len(q.ids), func(a, b int) { q.ids[a], q.ids[b] = q.ids[b], q.ids[a] })
		qs[i] = q
	}
	// Store level, in this process: a warm-up pass, then the measured one.
	var storeLat []time.Duration
	var storeCPU time.Duration
	for pass := range 2 {
		cpu0 := processCPU()
		for i := range qs {
			q := &qs[i]
			c := make([]seen.Candidate, len(q.ids))
			for k, id := range q.ids {
				c[k] = seen.Candidate{ID: id}
			}
			t := time.Now()
			res, err := svc.Filter(ctx, seen.FilterRequest{User: q.user, Candidates: c})
			el := time.Since(t)
			if err != nil {
				log.Fatal(err)
			}
			q.seen = make([]bool, len(q.ids))
			for _, dr := range res.Dropped {
				q.seen[dr.Index] = true
			}
			if pass == 1 {
				storeLat = append(storeLat, el)
			}
		}
		storeCPU = processCPU() - cpu0
	}
	if err := st.Close(); err != nil {
		log.Fatal(err)
	}
	// REST: the server runs in a child process (this program with
	// -serve) on the same store, so that its CPU per request is its own
	// (/proc/PID/stat), apart from the client's, as Redis' is.
	child, addr := startServer(d, false)
	forms := strings.Split(*formsFlag, ",")
	var floorChild *exec.Cmd
	var floorAddr string
	if slices.Contains(forms, "floor") {
		floorChild, floorAddr = startServer(d, true)
	}
	seenAvg := 0
	for _, q := range qs {
		for _, x := range q.seen {
			if x {
				seenAvg++
			}
		}
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(len(qs)) }
	fmt.Printf("filter %d candidates for one user (%.0f seen on average), %d queries, one client, sequential:\n", *cands, float64(seenAvg)/float64(len(qs)), len(qs))
	fmt.Printf("  store (Service.Filter, in process):  %s  (CPU %.0f µs per request)\n", pcts(storeLat), us(storeCPU))
	// Every round's latencies, per REST form (then the floor, then Redis),
	// for the pooled percentiles after the last round.
	pooled := make([][]time.Duration, len(restForms)+2)
	for round := range *rounds {
		if *rounds > 1 {
			fmt.Printf("  round %d of %d:\n", round+1, *rounds)
		}
		rest := make([]filterRun, len(restForms))
		measured := make([]bool, len(restForms))
		for k, f := range restForms {
			if slices.Contains(forms, f.name) {
				rest[k], measured[k] = measureREST(child, addr, f.name, qs), true
			}
		}
		var floor filterRun
		if floorChild != nil {
			floor = measureFloor(floorChild, floorAddr, qs)
		}
		var redis filterRun
		if rc != nil {
			redis = measureRedis(rc, qs)
		}
		if *dumpLat != "" {
			dumpLatencies(fmt.Sprintf("%s.%d", *dumpLat, round), append(rest, floor), redis)
		}
		for k, r := range append(append(rest, floor), redis) {
			pooled[k] = append(pooled[k], r.lat...)
		}
		for k, f := range restForms {
			if !measured[k] {
				continue
			}
			fmt.Printf("  %s, keep-alive HTTP/1.1 on 127.0.0.1, server in its own process:\n", f.label)
			fmt.Printf("                                       %s  (CPU per request: server %.0f µs, client %.0f µs)\n", pcts(rest[k].lat), us(rest[k].serverCPU), us(rest[k].clientCPU))
		}
		if floorChild != nil {
			fmt.Printf("  net/http floor (same requests as \"indexes\"; the child reads each body and answers a fixed body of that size: no gin, no filter):\n")
			fmt.Printf("                                       %s  (CPU per request: server %.0f µs, client %.0f µs)\n", pcts(floor.lat), us(floor.serverCPU), us(floor.clientCPU))
		}
		if rc != nil {
			fmt.Printf("  Redis SMISMEMBER (one connection):   %s  (CPU per request: server %.0f µs, client %.0f µs)\n", pcts(redis.lat), us(redis.serverCPU), us(redis.clientCPU))
		}
		var la [3]float64
		if b, err := os.ReadFile("/proc/loadavg"); err == nil {
			fmt.Sscan(string(b), &la[0], &la[1], &la[2])
			fmt.Printf("  load average at the end of the round: %.2f %.2f %.2f\n", la[0], la[1], la[2])
		}
		fmt.Printf("  candidate answers differing from the store's:")
		for k, f := range restForms {
			if measured[k] {
				fmt.Printf(" REST %s %d,", f.name, rest[k].mismatches)
			}
		}
		fmt.Printf(" Redis %d\n", redis.mismatches)
	}
	if *rounds > 1 {
		fmt.Printf("  pooled over the %d rounds (%d requests each):\n", *rounds, *rounds*len(qs))
		for k, f := range restForms {
			if len(pooled[k]) > 0 {
				fmt.Printf("    REST %-8s %s\n", f.name, pcts(pooled[k]))
			}
		}
		if n := len(restForms); len(pooled[n]) > 0 {
			fmt.Printf("    floor         %s\n", pcts(pooled[n]))
		}
		if n := len(restForms) + 1; len(pooled[n]) > 0 {
			fmt.Printf("    Redis         %s\n", pcts(pooled[n]))
		}
	}
	stopServer(child)
	if floorChild != nil {
		stopServer(floorChild)
	}
	fmt.Printf("  timed region, every client: request bytes built before the clock; inside it, write them on one keep-alive connection, read the whole answer and decode it fully into a flag per candidate; compared with the store's after\n")
	if *skipLoad {
		return nil // the marks phase would change the data a later -skip-load run reuses
	}

	st, svc = openSeen(ctx, d, pebblestore.Options{})
	defer st.Close()

	// Marks/s: pages of 20 new items per call, G goroutines.
	const page = 20
	markOne := func(worker, call int) []string {
		ids := make([]string, page)
		for k := range ids {
			ids[k] = fmt.Sprintf("mark-%d-%d-%d", worker, call, k)
		}
		return ids
	}
	calls := *markUsers * *markPages
	t0 := time.Now()
	shareCalls(*goroutines, calls, func(w, c int) {
		ids := markOne(w, c)
		marks := make([]seen.Mark, page)
		for k, id := range ids {
			marks[k] = seen.Mark{ID: id}
		}
		if _, err := svc.Mark(ctx, userID(c%*markUsers), marks); err != nil {
			log.Fatal(err)
		}
	})
	el := time.Since(t0)
	fmt.Printf("marks: %d calls of %d items, %d goroutines, synced writes: %.0f marks/s (%.0f calls/s)\n", calls, page, *goroutines, float64(calls*page)/el.Seconds(), float64(calls)/el.Seconds())
	t0 = time.Now()
	if s, err := svc.FoldAll(ctx); err != nil {
		log.Fatal(err)
	} else {
		fmt.Printf("fold after the marks: %d rows, %d deltas in %.1fs\n", s.RowsFolded, s.DeltasFolded, time.Since(t0).Seconds())
	}
	if rc != nil {
		conns := make([]*redisConn, *goroutines)
		for i := range conns {
			var err error
			if conns[i], err = dialRedis(*redisAddr); err != nil {
				log.Fatal(err)
			}
		}
		t0 = time.Now()
		shareCalls(*goroutines, calls, func(w, c int) {
			args := append([]string{"SADD", "seen:" + userID(c%*markUsers)}, markOne(w, c)...)
			if _, err := conns[w].do(args...); err != nil {
				log.Fatal(err)
			}
		})
		el := time.Since(t0)
		fmt.Printf("Redis SADD of the same pages, %d connections (no fsync: appendonly off): %.0f marks/s\n", *goroutines, float64(calls*page)/el.Seconds())
	}
	return nil
}

// load fills the store (folded, compacted) and Redis with the same seen
// items, and reports load rates and bytes per item.
func load(ctx context.Context, d string, rc *redisConn, now time.Time, total int) {
	// Load (Pebble without fsync for the bulk phase, like bulk loads).
	st, svc := openSeen(ctx, d, pebblestore.Options{NoSync: true})
	t0 := time.Now()
	const loaders = 2
	bufs := make([][]seen.TimedMark, loaders) // each loader's marks, reused
	for w := range bufs {
		bufs[w] = make([]seen.TimedMark, *items)
	}
	shareCalls(loaders, *users, func(w, u int) {
		marks := bufs[w]
		for j := range marks {
			marks[j] = seen.TimedMark{Mark: seen.Mark{ID: itemID(u, j)}, Time: now.Add(-time.Duration(j%*buckets)*24*time.Hour - time.Minute)}
		}
		if _, err := svc.Import(ctx, userID(u), marks); err != nil {
			log.Fatal(err)
		}
	})
	fmt.Printf("load seen (Import, folded form): %.1fs, %.0f items/s\n", time.Since(t0).Seconds(), float64(total)/time.Since(t0).Seconds())
	var redisBase int64
	if rc != nil {
		redisBase = redisUsedMemory(rc)
		t0 = time.Now()
		const inFlight = 32
		pending := 0
		for u := range *users {
			args := []string{"SADD", "seen:" + userID(u)}
			for j := range *items {
				args = append(args, itemID(u, j))
			}
			rc.send(args...)
			pending++
			if pending == inFlight {
				for range pending {
					must(rc.read())
				}
				pending = 0
			}
		}
		for range pending {
			must(rc.read())
		}
		fmt.Printf("load Redis (SADD, pipelined %d): %.1fs, %.0f items/s\n", inFlight, time.Since(t0).Seconds(), float64(total)/time.Since(t0).Seconds())
	}
	t0 = time.Now()
	if _, err := svc.FoldAll(ctx); err != nil {
		log.Fatal(err)
	}
	if err := st.DB().Compact(ctx, []byte{0}, []byte{0xff}, true); err != nil {
		log.Fatal(err)
	}
	met := st.DB().Metrics()
	// The data is the live sstables; the WAL and obsolete files are a
	// bounded cost of the process (recycled), not of the items.
	disk := met.Table.Local.LiveSize
	all := met.DiskSpaceUsage()
	stats, err := svc.Stats(ctx, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("fold + Pebble compaction: %.1fs\n", time.Since(t0).Seconds())
	fmt.Printf("seen on disk: %d bytes of live sstables (%.1f MiB), %.2f bytes per item (logical cells %.2f bytes per item; %d users, %d items by stats; whole store incl. WAL and obsolete files %.1f MiB)\n",
		disk, float64(disk)/(1<<20), float64(disk)/float64(total), stats.BytesPerItem, stats.Users, stats.Items, float64(all)/(1<<20))
	if rc != nil {
		used := redisUsedMemory(rc)
		fmt.Printf("Redis used_memory: %d bytes (%.1f MiB) over an empty server's %d: %.2f bytes per item (seen on disk is %.1fx smaller)\n",
			used, float64(used)/(1<<20), redisBase, float64(used-redisBase)/float64(total), float64(used-redisBase)/float64(disk))
	}
	if err := st.Close(); err != nil {
		log.Fatal(err)
	}

}

// processCPU is the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func userID(u int) string { return "user" + strconv.Itoa(u) }

// itemID is a 16-hex-digit article id, distinct per (user, j).
func itemID(u, j int) string {
	x := uint64(u)<<20 | uint64(j)
	x ^= x >> 31
	x *= 0x7fb5d329728ea185
	x ^= x >> 27
	x *= 0x81dadef4bc2dd44d
	x ^= x >> 33
	return fmt.Sprintf("%016x", x)
}

// dumpLatencies writes one line per query: its latency in each REST form
// measured and in Redis, in µs, tab-separated (for looking at the tail).
func dumpLatencies(name string, rest []filterRun, redis filterRun) {
	var b strings.Builder
	for i := range redis.lat {
		for _, r := range rest {
			if len(r.lat) > i {
				fmt.Fprintf(&b, "%d\t", r.lat[i].Microseconds())
			}
		}
		fmt.Fprintf(&b, "%d\n", redis.lat[i].Microseconds())
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
}

// pcts formats the p50, p90, p99 and p99.9 of d.
func pcts(d []time.Duration) string {
	h := hist.New(slices.Clone(d))
	at := func(p float64) time.Duration { return h.Rank(p / 100).Round(time.Microsecond) }
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s", at(50), at(90), at(99), at(99.9))
}

func must(_ any, err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// redisConn is a minimal RESP2 client (commands as arrays of bulk strings;
// replies: simple strings, errors, integers, bulk strings, arrays).
type redisConn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

func dialRedis(addr string) (*redisConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &redisConn{c: c, r: bufio.NewReaderSize(c, 1<<16), w: bufio.NewWriterSize(c, 1<<16)}, nil
}

func (r *redisConn) send(args ...string) {
	fmt.Fprintf(r.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(r.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

func (r *redisConn) do(args ...string) (any, error) {
	r.send(args...)
	return r.read()
}

func (r *redisConn) read() (any, error) {
	if err := r.w.Flush(); err != nil {
		return nil, err
	}
	line, err := r.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("redis: empty reply")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, errors.New("redis: " + line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r.r, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return nil, err
		}
		out := make([]any, max(n, 0))
		for i := range out {
			if out[i], err = r.read(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("redis: unexpected reply %q", line)
}

func redisUsedMemory(rc *redisConn) int64 {
	v, err := rc.do("INFO", "memory")
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range strings.Split(v.(string), "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "used_memory:"); ok {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				log.Fatal(err)
			}
			return n
		}
	}
	log.Fatal("INFO memory without used_memory")
	return 0
}

// shareCalls makes calls 0..n-1 on workers goroutines, each taking the
// next call left until there is none, and returns when all are done; call
// gets its worker's index and the call's number.
func shareCalls(workers, n int, call func(worker, c int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				c := int(next.Add(1) - 1)
				if c >= n {
					return
				}
				call(w, c)
			}
		})
	}
	wg.Wait()
}

// openSeen opens the Pebble store in dir with opts and the seen service on
// it; an error ends the process.
func openSeen(ctx context.Context, dir string, opts pebblestore.Options) (*pebblestore.Store, *seen.Service) {
	st, err := pebblestore.Open(dir, opts)
	if err != nil {
		log.Fatal(err)
	}
	svc, err := seen.Open(ctx, st, seen.Config{})
	if err != nil {
		log.Fatal(err)
	}
	return st, svc
}
