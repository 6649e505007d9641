package bulkload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
)

// The bulk loader on real HBase (the suite's instance, SIMDEX_HBASE_ZK;
// skipped without it outside CI): each test loads into namespaces of its
// own and compares whole tables, scanned back, with a reference load.

var hbNS atomic.Int64

// openHBaseIndex opens an index on fresh tables in a namespace of its own
// (dropped when the test ends), configured as openIndexOpts configures the
// embedded one.
func openHBaseIndex(t testing.TB, zk string) (*kvindex.Index, string) {
	t.Helper()
	return openHBaseIndexMode(t, zk, kvindex.BandsOff)
}

// openHBaseIndexMode is openHBaseIndex with the index's bands setting.
func openHBaseIndexMode(t testing.TB, zk string, bands kvindex.BandsMode) (*kvindex.Index, string) {
	t.Helper()
	ns := fmt.Sprintf("bl%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, hbNS.Add(1))
	ix, err := openHBaseIndexNSMode(zk, ns, true, bands)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ix.Close()
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		st, err := hbasestore.Open(ctx, hbasestore.Config{ZooKeeper: []string{zk}, Namespace: ns})
		if err != nil {
			t.Logf("drop %s: %v", ns, err)
			return
		}
		defer st.Close()
		if err := hbasestore.Drop(ctx, st.Client(), ns); err != nil {
			t.Logf("drop %s: %v", ns, err)
		}
	})
	return ix, ns
}

func openHBaseIndexNS(zk, ns string, create bool) (*kvindex.Index, error) {
	return openHBaseIndexNSMode(zk, ns, create, kvindex.BandsOff)
}

func openHBaseIndexNSMode(zk, ns string, create bool, bands kvindex.BandsMode) (*kvindex.Index, error) {
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	defer cancel()
	st, err := hbasestore.Open(ctx, hbasestore.Config{ZooKeeper: []string{zk}, Namespace: ns, CreateTables: create})
	if err != nil {
		return nil, err
	}
	ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, BucketWidth: 24 * time.Hour, MaxCellBytes: 1024, Locker: st.Locker(), Bands: bands})
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return ix, nil
}

// hbaseConfig is baseConfig with the HBase write path (as cmd/bulkload sets
// it) and small batches, so that every phase sends many of them.
func hbaseConfig(dir, glob string) Config {
	c := baseConfig(dir, glob)
	c.IndexFirst, c.InFlight, c.ApplyBytes = true, 4, 64<<10
	return c
}

// hfileConfig is hbaseConfig with the HFile import path.
func hfileConfig(dir, glob string) Config {
	c := hbaseConfig(dir, glob)
	c.Import.Mode = ImportHFile
	return c
}

const childHBaseEnv = "SIMDEX_BULKLOAD_HBASE_CHILD"

// childHBaseLoad runs the HBase load described by spec
// "zk|namespace|dir|glob|shard|shards|pause[|hfile:KIND]" (pause after
// each batch, e.g. 3ms; hfile: the HFile import path, and before the import
// of the table of run kind KIND, e.g. fpcells, create dir/killpoint and wait
// to be killed) in this process.
func childHBaseLoad(spec string) int {
	f := strings.Split(spec, "|")
	var killKind string
	hfileMode := len(f) == 8 && strings.HasPrefix(f[7], "hfile:")
	if hfileMode {
		killKind = strings.TrimPrefix(f[7], "hfile:")
		f = f[:7]
	}
	if len(f) != 7 {
		fmt.Fprintln(os.Stderr, "bad child spec", spec)
		return 2
	}
	shard, _ := strconv.Atoi(f[4])
	shards, _ := strconv.Atoi(f[5])
	pause, _ := time.ParseDuration(f[6])
	ix, err := openHBaseIndexNS(f[0], f[1], false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer ix.Close()
	cfg := hbaseConfig(f[2], f[3])
	cfg.Shard, cfg.Shards = shard, shards
	if pause > 0 {
		// The test kills at progress points: batches committed (noted in
		// dir/batches.log) and the read phase's end (the checkpoint).
		cfg.afterBatch = func() {
			time.Sleep(pause)
			appendLine(filepath.Join(f[2], "batches.log"), "batch")
		}
	}
	if hfileMode {
		cfg.Import.Mode = ImportHFile
		cfg.beforeCommit = func(kind string) {
			if kind != killKind {
				return
			}
			if err := os.WriteFile(filepath.Join(f[2], "killpoint"), nil, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			time.Sleep(2 * time.Minute) // the test kills the process now
		}
	}
	if _, err := Run(bg, ix, cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func startChild(t testing.TB, spec string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childHBaseEnv+"="+spec)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestHBaseLoadEqualsEmbedded is the oracle for the HBase write path: a
// load into HBase gives exactly the cells (all four tables, counters
// included) of the same load into the embedded store, whose own oracle is
// online inserts plus compaction (TestLoadMatchesOnlineInsertAndCompaction).
func TestHBaseLoadEqualsEmbedded(t *testing.T) {
	zk := hbasetest.ZK(t)
	t.Parallel() // most of an HBase test is waiting for table creation and drops
	dir := t.TempDir()
	docs := genFPs(21, 4000)
	glob, _ := inputs(t, dir, docs)
	ref := openIndex(t, filepath.Join(dir, "pebble"))
	want, err := Run(bg, ref, withCP(baseConfig(dir, glob), filepath.Join(dir, "cp-pebble")))
	if err != nil {
		t.Fatal(err)
	}
	ix, _ := openHBaseIndex(t, zk)
	got, err := Run(bg, ix, withCP(hbaseConfig(dir, glob), filepath.Join(dir, "cp-hbase")))
	if err != nil {
		t.Fatal(err)
	}
	refDump := dump(t, ref)
	if d := diff(refDump, dump(t, ix)); d != "" {
		t.Errorf("HBase load differs from the embedded one:\n%s", d)
	}
	got.Duration, want.Duration = 0, 0
	if got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	checkLookups(t, ix, docs[:50])

	// The HFile import path (HBase's bulk load) gives the same index.
	hix, _ := openHBaseIndex(t, zk)
	hcfg := withCP(hfileConfig(dir, glob), filepath.Join(dir, "cp-hfile"))
	hgot, err := Run(bg, hix, hcfg)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(refDump, dump(t, hix)); d != "" {
		t.Errorf("HFile import differs from the embedded load:\n%s", d)
	}
	if hgot.HFilesImported < int64(hix.Layout().NumTables())+2 || hgot.HFilesPut != 0 {
		t.Errorf("%d HFiles imported, %d put instead: want one per table at least, none put", hgot.HFilesImported, hgot.HFilesPut)
	}
	hgot.Duration, hgot.HFilesImported = 0, 0
	if hgot != want {
		t.Errorf("HFile import summary %+v, want %+v", hgot, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "cp-hfile", "hfiles")); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "cp-hfile", "hfiles", "*", "*")); len(left) != 0 {
		t.Errorf("HFiles left behind after the import: %v", left)
	}
	checkLookups(t, hix, docs[:50])
}

// checkLookups: every loaded fingerprint is found by a lookup, as its
// document.
func checkLookups(t *testing.T, ix *kvindex.Index, docs []genDoc) {
	t.Helper()
	for _, d := range docs {
		res, err := ix.Lookup(bg, d.fp, kvindex.LookupOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range res.Hits {
			found = found || h.ID == d.id
		}
		if !found {
			t.Errorf("lookup of %s (%s) misses it", d.id, d.fp)
		}
	}
}

// TestHBaseResumeAfterSIGKILL: a load into HBase killed (SIGKILL) at
// several points, twice each, and then rerun, gives exactly the content of
// an uninterrupted load: every table, counters and the load's marker cell.
// The uninterrupted load is the embedded store's (equal to an HBase load by
// TestHBaseLoadEqualsEmbedded; it saves a namespace's creation and drop).
func TestHBaseResumeAfterSIGKILL(t *testing.T) {
	zk := hbasetest.ZK(t)
	t.Parallel() // most of an HBase test is waiting for table creation and drops
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root := t.TempDir()
	docs := genFPs(16, 6000)
	glob, _ := inputs(t, root, docs)
	ref := openIndex(t, filepath.Join(root, "ref"))
	if _, err := Run(bg, ref, withCP(baseConfig(root, glob), filepath.Join(root, "ref-cp"))); err != nil {
		t.Fatal(err)
	}
	want := dump(t, ref)
	killed := 0
	phases := map[string]bool{}
	batches := func(dir string) int {
		b, _ := os.ReadFile(filepath.Join(dir, "batches.log"))
		return strings.Count(string(b), "\n")
	}
	phase1Done := func(dir string) bool {
		var cp checkpoint
		b, err := os.ReadFile(filepath.Join(dir, "cp", "checkpoint.json"))
		return err == nil && json.Unmarshal(b, &cp) == nil && cp.Phase1Done
	}
	// Kill points by progress, not by time (a fast machine finished whole
	// loads before a fixed delay): after some more batches of the read
	// phase (~47 in all), or some milliseconds into the merge phase.
	type killPoint struct {
		batches int
		merge   time.Duration
	}
	for i, kp := range []killPoint{{batches: 8}, {batches: 20}, {merge: 40 * time.Millisecond}} {
		dir := filepath.Join(root, fmt.Sprint(i))
		os.MkdirAll(dir, 0o755)
		ix, ns := openHBaseIndex(t, zk)
		for range 2 {
			target := batches(dir) + kp.batches
			cmd := startChild(t, strings.Join([]string{zk, ns, dir, glob, "0", "1", "5ms"}, "|"))
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var err error
			deadline := time.After(time.Minute)
		wait:
			for {
				select {
				case err = <-exited:
					break wait
				case <-deadline:
					cmd.Process.Kill()
					t.Fatalf("kill point %d: child never reached it", i)
				case <-time.After(2 * time.Millisecond):
					ready := kp.batches > 0 && batches(dir) >= target
					if kp.merge > 0 && phase1Done(dir) {
						time.Sleep(kp.merge)
						ready = true
					}
					if ready {
						cmd.Process.Signal(syscall.SIGKILL)
						err = <-exited
						break wait
					}
				}
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() {
				killed++
			} else if err != nil {
				t.Fatalf("child failed: %v", err)
			}
		}
		var cp checkpoint
		if b, err := os.ReadFile(filepath.Join(dir, "cp", "checkpoint.json")); err == nil {
			if err := json.Unmarshal(b, &cp); err != nil {
				t.Fatal(err)
			}
		}
		phases[fmt.Sprint(cp.Phase1Done)] = true
		t.Logf("kill point %d: checkpoint after kills: file %d line %d records %d runs %d phase1 done %v", i, cp.File, cp.Line, cp.Records, cp.Runs, cp.Phase1Done)
		sum, err := Run(bg, ix, hbaseConfig(dir, glob))
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(dump(t, ix), want); d != "" {
			t.Errorf("kill point %d (%+v): resumed load differs from an uninterrupted one:\n%s", i, kp, d)
		}
		if sum.Records != int64(len(docs)) {
			t.Errorf("kill point %d: %d records, want %d", i, sum.Records, len(docs))
		}
	}
	if killed < 4 {
		t.Errorf("only %d children were killed mid-load (loads too fast?)", killed)
	}
	t.Logf("%d kills; checkpoints seen with phase 1 done: %v", killed, phases)
}

// TestHBaseTwoShardProcesses: two processes loading shards 0/2 and 1/2 of
// one input into one HBase at the same time give exactly the index one
// process gives (in another namespace): all four tables by scan, the
// counters (summed by both) included; only the meta row "bulkload", whose
// marker cells name each load, differs by design.
func TestHBaseTwoShardProcesses(t *testing.T) {
	zk := hbasetest.ZK(t)
	t.Parallel() // most of an HBase test is waiting for table creation and drops
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	docs := genFPs(17, 6000)
	glob, _ := inputs(t, dir, docs)
	whole, _ := openHBaseIndex(t, zk)
	if _, err := Run(bg, whole, withCP(hbaseConfig(dir, glob), filepath.Join(dir, "cp-whole"))); err != nil {
		t.Fatal(err)
	}
	sharded, ns := openHBaseIndex(t, zk)
	var cmds []*exec.Cmd
	for i := range 2 {
		cp := filepath.Join(dir, fmt.Sprintf("shard%d", i))
		os.MkdirAll(cp, 0o755)
		cmds = append(cmds, startChild(t, strings.Join([]string{zk, ns, cp, glob, fmt.Sprint(i), "2", "0s"}, "|")))
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("shard %d/2: %v", i, err)
		}
	}
	want, got := dump(t, whole, "bulkload"), dump(t, sharded, "bulkload")
	if d := diff(want, got); d != "" {
		t.Errorf("two shard processes differ from one load:\n%s", d)
	}
	if len(want) < 4*len(docs)/2 {
		t.Errorf("only %d cells loaded for %d documents", len(want), len(docs))
	}
	var markers int
	err := sharded.Store().Scan(bg, storage.TableMeta, []byte("bulkload"), []byte("bulkload\x00"), func(r storage.Row) error {
		markers = len(r.Cells)
		return nil
	})
	if err != nil || markers != 2 {
		t.Errorf("bulkload marker cells: %d (%v), want one per shard", markers, err)
	}
}

// pacer puts a pause before each Apply of a load (Config.aroundApply), so
// that a region split overlaps a stretch of writes; it counts the Apply
// calls whose time overlapped a split's.
type pacer struct {
	pause time.Duration
	// splitting is 1 while a split runs; epoch changes at each split start
	// and end; during counts the Applies that overlapped a split.
	splitting, during, epoch atomic.Int64
	// gate, when set, holds the next Apply until the split it belongs to
	// has started: without it a phase whose first write comes late (a slow
	// -race run) could see its split start and finish before any write,
	// and the test would prove nothing.
	gate atomic.Pointer[chan struct{}]
}

func (p *pacer) apply(ctx context.Context, muts []storage.Mutation, apply func(context.Context, []storage.Mutation) error) error {
	time.Sleep(p.pause)
	e := p.epoch.Load()
	if g := p.gate.Swap(nil); g != nil {
		select {
		case <-*g:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	in := p.splitting.Load() == 1
	err := apply(ctx, muts)
	if in || p.splitting.Load() == 1 || p.epoch.Load() != e {
		p.during.Add(1)
	}
	return err
}

// TestHBaseSplitDuringLoad: the index table's region and then the docs
// table's are split while the load writes into them; the load completes
// (the client re-locates and retries what hit the moved regions) and the
// content equals a load without a split (the embedded store's, equal to an
// HBase load by TestHBaseLoadEqualsEmbedded).
func TestHBaseSplitDuringLoad(t *testing.T) {
	zk := hbasetest.ZK(t)
	t.Parallel() // most of an HBase test is waiting for table creation and drops
	dir := t.TempDir()
	docs := genFPs(18, 16000)
	glob, _ := inputs(t, dir, docs)
	start := time.Now()
	ref := openIndex(t, filepath.Join(dir, "ref"))
	if _, err := Run(bg, ref, withCP(baseConfig(dir, glob), filepath.Join(dir, "cp-ref"))); err != nil {
		t.Fatal(err)
	}
	t.Logf("reference load done after %v", time.Since(start))
	ix, ns := openHBaseIndex(t, zk)
	st := ix.Store().(*hbasestore.Store)
	p := &pacer{pause: 20 * time.Millisecond}
	var wg sync.WaitGroup
	var splitErrs [2]error
	split := func(i int, table storage.Table, at []byte) {
		started := make(chan struct{})
		p.gate.Store(&started) // the phase's first write waits for the split
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
			defer cancel()
			// Let the phase get going before the split starts.
			time.Sleep(100 * time.Millisecond)
			p.epoch.Add(1)
			p.splitting.Store(1)
			close(started)
			splitErrs[i] = st.Client().SplitRegion(ctx, hbasestore.TableName(ns, table), at)
			p.splitting.Store(0)
			p.epoch.Add(1)
		})
	}
	cfg := withCP(hbaseConfig(dir, glob), filepath.Join(dir, "cp-split"))
	cfg.ApplyBytes = 8 << 10
	cfg.aroundApply = p.apply
	var inMerge, inDocs int64
	cfg.onPhase = func(phase string) {
		switch phase {
		case "merge":
			split(0, storage.TableIndex, []byte{1, 0x81, 0x23})
		case "docs":
			inMerge = p.during.Swap(0)
			wg.Wait() // one split at a time
			split(1, storage.TableDocs, []byte("doc-008000"))
		}
	}
	t.Logf("split load starts after %v", time.Since(start))
	sum, err := Run(bg, ix, cfg)
	t.Logf("split load done after %v", time.Since(start))
	wg.Wait()
	t.Logf("splits done after %v", time.Since(start))
	inDocs = p.during.Load()
	if err != nil {
		t.Fatalf("load with splits: %v", err)
	}
	for i, e := range splitErrs {
		if e != nil {
			t.Fatalf("split %d: %v", i, e)
		}
	}
	t.Logf("batches that overlapped the index split: %d, the docs split: %d; %s", inMerge, inDocs, sum)
	if inMerge == 0 || inDocs == 0 {
		t.Errorf("a split did not overlap the writes (%d, %d batches during them)", inMerge, inDocs)
	}
	if d := diff(dump(t, ref), dump(t, ix)); d != "" {
		t.Errorf("load with region splits differs from one without:\n%s", d)
	}
}
