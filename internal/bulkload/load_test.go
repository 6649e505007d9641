package bulkload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/compaction"
	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// inputs writes docs as three files (plain, gzip, zstd) plus bad lines in
// the plain one, and returns the glob that matches them.
func inputs(t testing.TB, dir string, docs []genDoc) (glob string, bad int) {
	n := len(docs) / 3
	plain := fpLines(docs[:n]) + "# a comment\n\nno-fields-here\nid,zzzz,2026-01-01T00:00:00Z\nid2,0123456789abcdef,\nbad\x01id,0123456789abcdef,5\nid3,1,2,3\n"
	writeFile(t, dir, "in-a.csv", []byte(plain))
	writeFile(t, dir, "in-b.csv.gz", gz(t, fpLines(docs[n:2*n])))
	writeFile(t, dir, "in-c.tsv.zst", zst(t, fpLines(docs[2*n:])))
	return filepath.Join(dir, "in-*"), 5
}

func baseConfig(dir, glob string) Config {
	return Config{Inputs: []string{glob}, CheckpointDir: filepath.Join(dir, "cp"), Memory: MinMemory, BatchDocs: 128, spillEvery: 700, Workers: 2}
}

// TestLoadMatchesOnlineInsertAndCompaction is the oracle test: a bulk load
// (many spills, three compressions, rejects) gives exactly the cells that
// online inserts of the same documents give after compaction: same fp and
// docs cells, same base sets, same counters.
func TestLoadMatchesOnlineInsertAndCompaction(t *testing.T) {
	dir := t.TempDir()
	docs := genFPs(1, 3000)
	glob, bad := inputs(t, dir, docs)
	ix := openIndex(t, filepath.Join(dir, "bulk"))
	sum, err := Run(bg, ix, baseConfig(dir, glob))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != int64(len(docs)) || sum.Rejected != int64(bad) || sum.Runs < 4 {
		t.Errorf("summary %+v: want %d records, %d rejected, several runs", sum, len(docs), bad)
	}

	ref := openIndex(t, filepath.Join(dir, "online"))
	for i := 0; i < len(docs); i += 500 {
		var batch []kvindex.Document
		for _, d := range docs[i:min(i+500, len(docs))] {
			batch = append(batch, kvindex.Document{ID: d.id, Fingerprint: d.fp, Time: d.at})
		}
		if _, errs, err := ref.InsertBatch(bg, batch, kvindex.InsertAlways, 0); err != nil || errors.Join(errs...) != nil {
			t.Fatal(err, errors.Join(errs...))
		}
	}
	c, err := compaction.New(ref, compaction.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(bg); err != nil {
		t.Fatal(err)
	}
	if d := diff(dump(t, ix, "bulkload"), dump(t, ref)); d != "" {
		t.Errorf("bulk load differs from online inserts + compaction:\n%s", d)
	}
	distinct := map[fingerprint.Fingerprint]bool{}
	for _, d := range docs {
		distinct[d.fp] = true
	}
	st, err := ix.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Documents != int64(len(docs)) || st.Fingerprints != int64(len(distinct)) || sum.Fingerprints != st.Fingerprints {
		t.Errorf("counters %d docs %d fps (summary %d), want %d, %d", st.Documents, st.Fingerprints, sum.Fingerprints, len(docs), len(distinct))
	}
	// Lookups are exact against brute force.
	for i := 0; i < len(docs); i += 37 {
		q := docs[i].fp ^ 0b101
		res, err := ix.Lookup(bg, q, kvindex.LookupOptions{K: 3})
		if err != nil {
			t.Fatal(err)
		}
		var want, got []string
		for _, d := range docs {
			if bits.OnesCount64(uint64(d.fp^q)) <= 3 {
				want = append(want, d.id)
			}
		}
		for _, h := range res.Hits {
			got = append(got, h.ID)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("lookup %s: %v, want %v", q, got, want)
		}
	}
	// Rejects name file, line and reason.
	rej := readLines(t, filepath.Join(dir, "cp", "rejects.jsonl"))
	if len(rej) != bad {
		t.Fatalf("rejects file has %d lines, want %d: %v", len(rej), bad, rej)
	}
	var r0 reject
	if err := json.Unmarshal([]byte(rej[0]), &r0); err != nil || !strings.HasSuffix(r0.File, "in-a.csv") || r0.Line != int64(len(docs)/3+3) || r0.Reason == "" {
		t.Errorf("first reject %+v (%v)", r0, err)
	}

	// A finished load leaves no spill runs behind (they hold every cell
	// once: at 10^7 fingerprints ~1.3 GB), only its checkpoint and rejects.
	if runs, _ := filepath.Glob(filepath.Join(dir, "cp", "run-*")); len(runs) != 0 {
		t.Errorf("a finished load left %d spill runs, e.g. %s", len(runs), runs[0])
	}

	// Rerunning a finished load changes nothing (counters added once) and
	// answers with the load's summary.
	before := dump(t, ix)
	again, err := Run(bg, ix, baseConfig(dir, glob))
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(before, dump(t, ix)); d != "" {
		t.Errorf("rerun changed the index:\n%s", d)
	}
	if !again.Resumed || again.Records != sum.Records || again.Documents != sum.Documents || again.Fingerprints != sum.Fingerprints || again.IndexRows != sum.IndexRows {
		t.Errorf("rerun of a finished load: %+v, want the load's summary %+v", again, sum)
	}
}

func readLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestShardsUnionEqualsWholeLoad: three shards loaded one after the other
// give the same index as one load.
func TestShardsUnionEqualsWholeLoad(t *testing.T) {
	dir := t.TempDir()
	docs := genFPs(2, 2000)
	glob, _ := inputs(t, dir, docs)
	whole := openIndex(t, filepath.Join(dir, "whole"))
	if _, err := Run(bg, whole, baseConfig(dir, glob)); err != nil {
		t.Fatal(err)
	}
	sharded := openIndex(t, filepath.Join(dir, "sharded"))
	for i := range 3 {
		cfg := baseConfig(dir, glob)
		cfg.Shard, cfg.Shards = i, 3
		cfg.CheckpointDir = filepath.Join(dir, fmt.Sprintf("cp-%d", i))
		s, err := Run(bg, sharded, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if s.IndexRows == 0 || s.Documents == 0 {
			t.Errorf("shard %d did nothing: %+v", i, s)
		}
	}
	if d := diff(dump(t, whole, "bulkload"), dump(t, sharded, "bulkload")); d != "" {
		t.Errorf("sharded load differs:\n%s", d)
	}
}

// TestLoadIntoNonEmptyIndex merges with online inserts' deltas and base
// sets and lifts the tombstone of a deleted fingerprint that is loaded
// again.
func TestLoadIntoNonEmptyIndex(t *testing.T) {
	dir := t.TempDir()
	ix := openIndex(t, filepath.Join(dir, "ix"))
	docs := genFPs(3, 1200)
	var first []kvindex.Document
	for _, d := range docs[:200] {
		first = append(first, kvindex.Document{ID: "online-" + d.id, Fingerprint: d.fp, Time: d.at})
	}
	if _, errs, err := ix.InsertBatch(bg, first, kvindex.InsertAlways, 0); err != nil || errors.Join(errs...) != nil {
		t.Fatal(err, errors.Join(errs...))
	}
	c, _ := compaction.New(ix, compaction.Config{})
	if _, err := c.Run(bg); err != nil { // base sets for the same buckets
		t.Fatal(err)
	}
	if _, err := ix.Insert(bg, kvindex.Document{ID: "gone", Fingerprint: docs[500].fp, Time: docs[500].at}, kvindex.InsertAlways, 0); err != nil {
		t.Fatal(err)
	}
	if err := ix.Delete(bg, "gone"); err != nil { // tombstones docs[500].fp
		t.Fatal(err)
	}
	glob, _ := inputs(t, dir, docs)
	if _, err := Run(bg, ix, baseConfig(dir, glob)); err != nil {
		t.Fatal(err)
	}
	for _, d := range append(docs, genDoc{}) {
		if d.id == "" {
			break
		}
		res, err := ix.Lookup(bg, d.fp, kvindex.LookupOptions{K: 0})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.Hits, func(h kvindex.Hit) bool { return h.ID == d.id }) {
			t.Fatalf("%s not found after loading into a non-empty index", d.id)
		}
	}
	for _, d := range first {
		res, _ := ix.Lookup(bg, d.Fingerprint, kvindex.LookupOptions{K: 0})
		if !slices.ContainsFunc(res.Hits, func(h kvindex.Hit) bool { return h.ID == d.ID }) {
			t.Fatalf("online document %s lost", d.ID)
		}
	}
	st, _ := ix.Stats(bg)
	if st.Documents != int64(len(docs)+len(first)) {
		t.Errorf("documents counter %d, want %d", st.Documents, len(docs)+len(first))
	}
}

// TestDedupReport: the report's pairs equal brute force over the input.
func TestDedupReport(t *testing.T) {
	dir := t.TempDir()
	docs := genFPs(4, 3000)
	glob, _ := inputs(t, dir, docs)
	ix := openIndex(t, filepath.Join(dir, "ix"))
	cfg := baseConfig(dir, glob)
	cfg.DedupPath = filepath.Join(dir, "dups.jsonl")
	sum, err := Run(bg, ix, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[fingerprint.Fingerprint][]string{}
	for _, d := range docs {
		ids[d.fp] = append(ids[d.fp], d.id)
	}
	var fps []fingerprint.Fingerprint
	for f := range ids {
		fps = append(fps, f)
	}
	slices.Sort(fps)
	want := map[string]bool{}
	var docPairs int64
	for i, a := range fps {
		if n := int64(len(ids[a])); n > 1 {
			want[a.String()] = true
			docPairs += n * (n - 1) / 2
		}
		for _, b := range fps[i+1:] {
			if bits.OnesCount64(uint64(a^b)) <= 3 {
				want[a.String()+" "+b.String()] = true
			}
		}
	}
	got := map[string]bool{}
	for _, line := range readLines(t, cfg.DedupPath) {
		var dl struct {
			Fingerprints []string   `json:"fingerprints"`
			Distance     int        `json:"distance"`
			IDs          [][]string `json:"ids"`
		}
		if err := json.Unmarshal([]byte(line), &dl); err != nil {
			t.Fatal(err)
		}
		key := strings.Join(dl.Fingerprints, " ")
		if got[key] {
			t.Errorf("pair %s reported twice", key)
		}
		got[key] = true
		for i, f := range dl.Fingerprints {
			fp, _ := fingerprint.Parse(f)
			if !slices.Equal(sorted(dl.IDs[i]), sorted(ids[fp])) {
				t.Errorf("ids of %s: %v, want %v", f, dl.IDs[i], ids[fp])
			}
		}
	}
	if len(want) < 30 {
		t.Fatalf("generator planted only %d duplicates", len(want))
	}
	if d := diff(boolMap(want), boolMap(got)); d != "" {
		t.Errorf("report differs from brute force:\n%s", d)
	}
	if sum.DuplicatePairs != int64(len(want))-int64(countSingles(want))+docPairs {
		t.Logf("summary duplicate pairs %d", sum.DuplicatePairs)
	}

	// Clusters mode covers the same documents.
	cfg.DedupClusters = true
	cfg.DedupPath = filepath.Join(dir, "clusters.jsonl")
	if _, err := Run(bg, openIndex(t, filepath.Join(dir, "ix2")), withCP(cfg, filepath.Join(dir, "cp2"))); err != nil {
		t.Fatal(err)
	}
	inClusters := 0
	for _, line := range readLines(t, cfg.DedupPath) {
		var cl struct {
			AllIDs []string `json:"all_ids"`
		}
		if err := json.Unmarshal([]byte(line), &cl); err != nil || len(cl.AllIDs) < 2 {
			t.Fatalf("cluster line %s (%v)", line, err)
		}
		inClusters += len(cl.AllIDs)
	}
	involved := map[string]bool{}
	for k := range want {
		for _, f := range strings.Fields(k) {
			fp, _ := fingerprint.Parse(f)
			for _, id := range ids[fp] {
				involved[id] = true
			}
		}
	}
	if inClusters != len(involved) {
		t.Errorf("clusters hold %d documents, want %d", inClusters, len(involved))
	}
}

func withCP(c Config, dir string) Config { c.CheckpointDir = dir; return c }

func countSingles(m map[string]bool) int {
	n := 0
	for k := range m {
		if !strings.Contains(k, " ") {
			n++
		}
	}
	return n
}

func boolMap(m map[string]bool) map[string]string {
	out := map[string]string{}
	for k := range m {
		out[k] = ""
	}
	return out
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestStrict stops at the first bad line and names it.
func TestStrict(t *testing.T) {
	dir := t.TempDir()
	glob, _ := inputs(t, dir, genFPs(5, 300))
	cfg := baseConfig(dir, glob)
	cfg.Strict = true
	_, err := Run(bg, openIndex(t, filepath.Join(dir, "ix")), cfg)
	if !errors.Is(err, ErrStrict) || !strings.Contains(err.Error(), fmt.Sprintf("line %d", 300/3+3)) {
		t.Errorf("err %v", err)
	}
}

// TestTextDocuments fingerprints JSON documents (English and Chinese) in
// parallel workers and reports the near-copy.
func TestTextDocuments(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the dictionaries")
	}
	dir := t.TempDir()
	texts, err := filepath.Glob("../../fingerprint/testdata/texts/*.txt")
	if err != nil || len(texts) < 4 {
		t.Fatalf("test texts: %v %v", texts, err)
	}
	fpr := sharedFingerprinter(t)
	var lines []string
	want := map[string]fingerprint.Fingerprint{}
	wantSketch := map[string]fingerprint.Sketch{}
	wantText := map[string]string{} // the normalized text of documents under the rule's TextChars
	for i, p := range texts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		body := string(b)
		for j, v := range []string{body, body + " Extra closing sentence here."} {
			id := fmt.Sprintf("t%d-%d", i, j)
			d, _ := json.Marshal(map[string]any{"id": id, "title": filepath.Base(p), "text": v, "time": t0.Unix() + int64(i), "attrs": map[string]string{"src": p}})
			lines = append(lines, string(d))
			r, err := fpr.Fingerprint(fingerprint.Document{Title: filepath.Base(p), Body: v})
			if err != nil {
				t.Fatal(err)
			}
			want[id] = r.Simhash
			wantSketch[id] = r.Sketch
			wantText[id] = decide.DefaultRule().KeepText(r.Chars, r.Text, kvindex.MaxTextBytes)
		}
	}
	// A short document keeps its normalized text (docs cell 0x04) for the
	// decision rule's alignment clause, as the server stores it.
	const short = "The City Council approved twelve electric buses on Monday, officials said."
	sr, err := fpr.Fingerprint(fingerprint.Document{Body: short})
	if err != nil {
		t.Fatal(err)
	}
	want["short"], wantSketch["short"], wantText["short"] = sr.Simhash, sr.Sketch, sr.Text
	lines = append(lines, `{"id":"short","text":"`+short+`","time":1,"attrs":{"src":"inline"}}`)
	lines = append(lines, `{"id":"empty","text":"","time":1}`, `{"id":"x","text":"a","time":"yesterday"}`, `not json`)
	path := writeFile(t, dir, "docs.jsonl", []byte(strings.Join(lines, "\n")))
	ix := openIndex(t, filepath.Join(dir, "ix"))
	cfg := baseConfig(dir, path)
	cfg.NewFingerprinter = func() (*fingerprint.Fingerprinter, error) { return fpr, nil }
	cfg.DedupPath = filepath.Join(dir, "dups.jsonl")
	cfg.DedupClusters = true
	sum, err := Run(bg, ix, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != int64(len(want)) || sum.Rejected != 3 {
		t.Errorf("summary %+v", sum)
	}
	for id, fp := range want {
		d, err := ix.Get(bg, id)
		if err != nil || d.Fingerprint != fp || d.Attrs["src"] == "" {
			t.Errorf("%s: %+v %v, want fp %s", id, d, err, fp)
		}
		// The docs cell carries the sketch the decision rule compares.
		if !slices.Equal(d.Sketch, wantSketch[id]) || len(d.Sketch) == 0 || d.Chars == 0 {
			t.Errorf("%s: stored sketch %v (chars %d), want %v", id, d.Sketch, d.Chars, wantSketch[id])
		}
		if d.Text != wantText[id] || id == "short" && d.Text == "" {
			t.Errorf("%s: stored text %q (chars %d), want %q", id, d.Text, d.Chars, wantText[id])
		}
	}
	clusters := readLines(t, cfg.DedupPath)
	if len(clusters) < len(texts)/2 {
		t.Errorf("only %d clusters for %d near-copied texts: %v", len(clusters), len(texts), clusters)
	}
}

// The SIGKILL test re-executes the test binary as a child that runs a slow
// load (a pause after each batch) and kills it at various points, then
// finishes the load in-process and compares with an uninterrupted load.

const childEnv = "SIMDEX_BULKLOAD_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(childLoad(spec))
	}
	if spec := os.Getenv(childHBaseEnv); spec != "" {
		os.Exit(childHBaseLoad(spec))
	}
	os.Exit(m.Run())
}

// childLoad runs the load described by spec ("dir|glob[|options]")
// slowly. Options, comma-separated: bands (an index with band rows, text
// input: the batches and spills of TestTextBandsResumeAfterSIGKILL),
// batchlog (note each committed batch in dir/batches.log).
func childLoad(spec string) int {
	f := strings.Split(spec, "|")
	dir, glob := f[0], f[1]
	opts := ""
	if len(f) > 2 {
		opts = f[2]
	}
	open := openIndexOpts
	if strings.Contains(opts, "bands") {
		open = openBandIndexErr
	}
	ix, err := open(filepath.Join(dir, "ix"), true)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := baseConfig(dir, glob)
	if strings.Contains(opts, "bands") {
		cfg.spillEvery, cfg.BatchDocs = 90, 32
	}
	cfg.afterBatch = func() { time.Sleep(3 * time.Millisecond) }
	if strings.Contains(opts, "batchlog") {
		cfg.afterBatch = func() {
			appendLine(filepath.Join(dir, "batches.log"), "batch")
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Before each table's commit (its sstables staged, not yet ingested),
	// note it and pause, so that kills land between and during ingests.
	cfg.beforeCommit = func(kind string) {
		appendLine(filepath.Join(dir, "commits.log"), kind)
		time.Sleep(60 * time.Millisecond)
	}
	if _, err := Run(bg, ix, cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ix.Close()
	return 0
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintln(f, line)
		f.Sync()
		f.Close()
	}
}

func TestResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root := t.TempDir()
	docs := genFPs(6, 6000)
	glob, _ := inputs(t, root, docs)
	ref := openIndex(t, filepath.Join(root, "ref", "ix"))
	if _, err := Run(bg, ref, withCP(baseConfig(root, glob), filepath.Join(root, "ref", "cp"))); err != nil {
		t.Fatal(err)
	}
	want := dump(t, ref)

	// Kill points: after a delay (in the read phase, timing-dependent), or
	// once the child has reached its n-th table commit of this round (it
	// pauses there, its sstables staged: deterministic kills between and
	// before ingests).
	type killPoint struct {
		delay   time.Duration
		commits int
	}
	commitsLogged := func(dir string) int {
		b, _ := os.ReadFile(filepath.Join(dir, "commits.log"))
		return strings.Count(string(b), "\n")
	}
	killed, killedInMerge := 0, 0
	for i, kp := range []killPoint{{delay: 250 * time.Millisecond}, {delay: 600 * time.Millisecond}, {commits: 1}, {commits: 4}} {
		dir := filepath.Join(root, fmt.Sprint(i))
		os.MkdirAll(dir, 0o755)
		// Several kills of one load: kill, restart (resuming), kill again.
		for round := range 2 {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+dir+"|"+glob)
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var err error
			if kp.commits == 0 {
				select {
				case <-time.After(kp.delay / time.Duration(round+1)):
					cmd.Process.Signal(syscall.SIGKILL)
					err = <-exited
				case err = <-exited:
				}
			} else {
				target := commitsLogged(dir) + kp.commits
			wait:
				for {
					select {
					case err = <-exited:
						t.Fatalf("kill point %d: child ended before its commit %d: %v", i, kp.commits, err)
					case <-time.After(2 * time.Millisecond):
						if commitsLogged(dir) >= target {
							cmd.Process.Signal(syscall.SIGKILL)
							err = <-exited
							break wait
						}
					}
				}
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() {
				killed++
				if commitsLogged(dir) > 0 {
					killedInMerge++ // after at least one table's cells were staged
				}
			} else if err != nil {
				t.Fatalf("child failed: %v", err)
			}
		}
		var cp checkpoint
		b, _ := os.ReadFile(filepath.Join(dir, "cp", "checkpoint.json"))
		json.Unmarshal(b, &cp)
		t.Logf("kill point %d: checkpoint after kills: file %d line %d records %d runs %d phase1 done %v", i, cp.File, cp.Line, cp.Records, cp.Runs, cp.Phase1Done)
		ix, err := openIndexOpts(filepath.Join(dir, "ix"), true)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Run(bg, ix, baseConfig(dir, glob))
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(dump(t, ix), want); d != "" {
			t.Errorf("kill point %d (%+v): resumed load differs from an uninterrupted one:\n%s", i, kp, d)
		}
		if sum.Records != int64(len(docs)) {
			t.Errorf("kill point %d: %d records, want %d", i, sum.Records, len(docs))
		}
		ix.Close()
	}
	if killedInMerge < 4 {
		t.Errorf("only %d children were killed in the merge and ingest phase, want 4", killedInMerge)
	}
	t.Logf("%d kills, %d of them in the merge and ingest phase", killed, killedInMerge)
}

// TestDedupReportNeedsFPRuns: a load started without a dedup report spills
// no fps runs, so resuming it with one is refused with a reason (nothing
// written); resumed as started, it finishes with the counts of an
// uninterrupted load.
func TestDedupReportNeedsFPRuns(t *testing.T) {
	dir := t.TempDir()
	docs := genFPs(7, 3000)
	glob, _ := inputs(t, dir, docs)
	ix := openIndex(t, filepath.Join(dir, "ix"))
	ctx, cancel := context.WithCancel(bg)
	cfg := baseConfig(dir, glob)
	batches := 0
	cfg.afterBatch = func() {
		if batches++; batches == 12 { // after a few spills
			cancel()
		}
	}
	if _, err := Run(ctx, ix, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted load: %v", err)
	}
	if fps, _ := filepath.Glob(filepath.Join(dir, "cp", "run-*-fps.sdx")); len(fps) != 0 {
		t.Errorf("a load without a dedup report wrote fps runs: %v", fps)
	}
	before := dump(t, ix)
	withReport := baseConfig(dir, glob)
	withReport.DedupPath = filepath.Join(dir, "dups.jsonl")
	if _, err := Run(bg, ix, withReport); err == nil || !strings.Contains(err.Error(), "dedup report") {
		t.Fatalf("resumed with a dedup report: %v, want a refusal naming the report", err)
	}
	if d := diff(before, dump(t, ix)); d != "" {
		t.Errorf("the refused resume changed the index:\n%s", d)
	}
	sum, err := Run(bg, ix, baseConfig(dir, glob))
	if err != nil {
		t.Fatal(err)
	}
	ref := openIndex(t, filepath.Join(dir, "ref"))
	want, err := Run(bg, ref, baseConfig(filepath.Join(dir, "refcp"), glob))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Documents != want.Documents || sum.Fingerprints != want.Fingerprints || sum.IndexRows != want.IndexRows {
		t.Errorf("resumed load: %d docs, %d fps, %d rows; uninterrupted: %d, %d, %d", sum.Documents, sum.Fingerprints, sum.IndexRows, want.Documents, want.Fingerprints, want.IndexRows)
	}
	if d := diff(dump(t, ref), dump(t, ix)); d != "" {
		t.Errorf("resumed load differs from an uninterrupted one:\n%s", d)
	}
}
