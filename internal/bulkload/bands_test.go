package bulkload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/storage"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/compaction"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// Text documents loaded into an index with LSH band rows get the band cells
// an online insert writes: these tests compare whole indexes (every table,
// the bands table included) with online inserts of the same documents, a
// sharded load and a load resumed after SIGKILL.

var fprOnce struct {
	sync.Once
	f   *fingerprint.Fingerprinter
	err error
}

// sharedFingerprinter loads the dictionaries once per test process (about
// 1.5 s, much longer under the race detector).
func sharedFingerprinter(t testing.TB) *fingerprint.Fingerprinter {
	t.Helper()
	fprOnce.Do(func() { fprOnce.f, fprOnce.err = fingerprint.New(fingerprint.DefaultConfig()) })
	if fprOnce.err != nil {
		t.Fatal(fprOnce.err)
	}
	return fprOnce.f
}

// openBandIndex opens an embedded index that keeps band rows, configured
// as openIndexOpts configures the others.
func openBandIndex(t testing.TB, dir string, bulk bool) *kvindex.Index {
	t.Helper()
	ix, err := openBandIndexErr(dir, bulk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func openBandIndexErr(dir string, bulk bool) (*kvindex.Index, error) {
	st, err := pebblestore.Open(dir, pebblestore.Options{NoSync: true, Bulk: bulk, CacheBytes: 8 << 20})
	if err != nil {
		return nil, err
	}
	ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, BucketWidth: 24 * time.Hour, MaxCellBytes: 1024, Bands: kvindex.BandsOn})
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return ix, nil
}

// textDoc is one generated text document.
type textDoc struct {
	id, title, text string
	at              time.Time
	attrs           map[string]string
}

// genTexts returns n English-like documents of 60-120 words from a
// vocabulary of made-up words, with near-copies of earlier documents (a
// tenth to a third of their words changed: some within the simhash
// distance, many beyond it but sharing LSH bands) and exact copies under
// other ids, over several days.
func genTexts(seed uint64, prefix string, n int) []textDoc {
	r := rand.New(rand.NewPCG(seed, 11))
	word := func() string {
		const letters = "bcdfghjklmnprstvwz"
		const vowels = "aeiou"
		k := 2 + r.IntN(3)
		var b strings.Builder
		for range k {
			b.WriteByte(letters[r.IntN(len(letters))])
			b.WriteByte(vowels[r.IntN(len(vowels))])
		}
		return b.String()
	}
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = word()
	}
	var words [][]string
	out := make([]textDoc, 0, n)
	for i := range n {
		var w []string
		switch {
		case i > 5 && i%4 == 0: // near-copy
			src := words[r.IntN(len(words))]
			w = append([]string(nil), src...)
			changes := len(w) / (3 + r.IntN(8))
			for range changes {
				w[r.IntN(len(w))] = vocab[r.IntN(len(vocab))]
			}
		case i > 5 && i%23 == 0: // exact copy
			w = words[r.IntN(len(words))]
		default:
			for range 60 + r.IntN(60) {
				w = append(w, vocab[r.IntN(len(vocab))])
			}
		}
		words = append(words, w)
		d := textDoc{id: fmt.Sprintf("%s-%04d", prefix, i), title: strings.Join(w[:3], " "), text: strings.Join(w, " ") + ".",
			at: t0.Add(time.Duration(r.IntN(5*24)) * time.Hour)}
		if i%3 == 0 {
			d.attrs = map[string]string{"src": fmt.Sprint("feed-", i%5)}
		}
		if i%2 == 0 {
			// A source (kvindex.DefaultSourceAttr): its text keys are also
			// keyed per source, and a replace moves those cells too.
			if d.attrs == nil {
				d.attrs = map[string]string{}
			}
			d.attrs["source"] = fmt.Sprint("site-", i%3)
		}
		out = append(out, d)
	}
	return out
}

func textLines(docs []textDoc) string {
	var b strings.Builder
	for _, d := range docs {
		m := map[string]any{"id": d.id, "title": d.title, "text": d.text, "time": d.at.Format(time.RFC3339)}
		if d.attrs != nil {
			m["attrs"] = d.attrs
		}
		line, _ := json.Marshal(m)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// onlineDocument is what the REST service stores for d: its fingerprint,
// sketch and band signature from the same fingerprinter.
func onlineDocument(t testing.TB, fpr *fingerprint.Fingerprinter, d textDoc) kvindex.Document {
	t.Helper()
	r, err := fpr.Fingerprint(fingerprint.Document{Title: d.title, Body: d.text})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Bands) < fingerprint.NumBands {
		t.Fatalf("%s: %d bands", d.id, len(r.Bands))
	}
	return kvindex.Document{ID: d.id, Fingerprint: r.Simhash, TitleFingerprint: r.TitleSimhash, ExactHash: r.ExactHash, Time: d.at,
		Attrs: d.attrs, Sketch: r.Sketch, Chars: r.Chars, Bands: r.Bands, Text: decide.DefaultRule().KeepText(r.Chars, r.Text, kvindex.MaxTextBytes)}
}

// repeatedTexts builds a first load A and a second load B of texts that
// reuse ids: A's ids again with their text (a later time) or another text,
// ids repeated within B, and (bFP) bare fingerprints that replace stored
// texts (their band cells must go) and texts loaded in B.
func repeatedTexts() (a, b []textDoc, bFP []genDoc) {
	a = genTexts(31, "a", 150)
	b = genTexts(32, "b", 100)
	more := genTexts(33, "m", 60)
	for i := range 40 {
		switch i % 4 {
		case 0: // same id and text, another time
			d := a[i]
			d.at = d.at.Add(26 * time.Hour)
			b = append(b, d)
		case 1: // same id, another text
			d := more[i]
			d.id = a[i].id
			b = append(b, d)
		case 2: // repeated within B
			d := more[i]
			d.id = b[i].id
			b = append(b, d)
		case 3: // a near-copy of its earlier version (some bands shared)
			d := b[i]
			w := strings.Fields(d.text)
			w[len(w)/2] = "zuzuzu"
			d.text = strings.Join(w, " ")
			b = append(b, d)
		}
	}
	r := rand.New(rand.NewPCG(34, 35))
	for _, id := range []string{a[50].id, a[51].id, b[60].id} {
		bFP = append(bFP, genDoc{id: id, fp: fingerprint.Fingerprint(r.Uint64()), at: t0.Add(time.Duration(r.IntN(100)) * time.Hour)})
	}
	return a, b, bFP
}

// bandCells counts the bands table's cells per document id.
func bandCells(t testing.TB, ix *kvindex.Index) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := ix.Store().Scan(bg, storage.TableBands, nil, nil, func(r storage.Row) error {
		for _, c := range r.Cells {
			out[string(c.Qualifier)]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func compact(t testing.TB, ixs ...*kvindex.Index) {
	t.Helper()
	for _, ix := range ixs {
		c, err := compaction.New(ix, compaction.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(bg); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTextBandsMatchOnlineInserts: two loads of texts into an index with
// bands (a fresh one, then one with ids repeated within it and against the
// index, some replaced by bare fingerprints) give, after compaction,
// exactly the index that online inserts (InsertAlways) of the same
// documents in input order give: the bands table and the docs cells
// included, the old band cells of replaced documents gone.
func TestTextBandsMatchOnlineInserts(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the dictionaries")
	}
	fpr := sharedFingerprinter(t)
	dir := t.TempDir()
	a, b, bFP := repeatedTexts()
	pa := writeFile(t, dir, "a.jsonl", []byte(textLines(a)))
	os.MkdirAll(filepath.Join(dir, "b"), 0o755)
	writeFile(t, dir, "b/b1.jsonl.gz", gz(t, textLines(b)))
	writeFile(t, dir, "b/b2.csv", []byte(fpLines(bFP)))
	bulk := openBandIndex(t, filepath.Join(dir, "bulk"), false)
	for i, in := range []string{pa, filepath.Join(dir, "b", "*")} {
		cfg := baseConfig(dir, in)
		cfg.CheckpointDir = filepath.Join(dir, fmt.Sprint("cp", i))
		cfg.NewFingerprinter = func() (*fingerprint.Fingerprinter, error) { return fpr, nil }
		cfg.spillEvery, cfg.BatchDocs = 90, 32
		sum, err := Run(bg, bulk, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Runs < 3 {
			t.Errorf("load %d: %d runs, want several", i, sum.Runs)
		}
	}
	ref := openBandIndex(t, filepath.Join(dir, "online"), false)
	var all []kvindex.Document
	for _, d := range append(append([]textDoc(nil), a...), b...) {
		all = append(all, onlineDocument(t, fpr, d))
	}
	for _, d := range bFP {
		all = append(all, kvindex.Document{ID: d.id, Fingerprint: d.fp, Time: d.at})
	}
	for _, d := range all {
		if _, err := ref.Insert(bg, d, kvindex.InsertAlways, 0); err != nil {
			t.Fatal(err)
		}
	}
	compact(t, bulk, ref)
	if d := diff(dump(t, bulk, "bulkload"), dump(t, ref)); d != "" {
		t.Errorf("text loads into an index with bands differ from online inserts in input order:\n%s", d)
	}
	// Independently of the online path: each final text document has one
	// cell per band and text key, a bare fingerprint none.
	final := map[string]kvindex.Document{}
	for _, d := range all {
		final[d.ID] = d
	}
	cells := bandCells(t, bulk)
	for id, d := range final {
		want := 0
		if d.Bands != nil {
			want = len(d.Bands)
			if d.Attrs["source"] != "" {
				want += len(d.Bands.TextKeys()) // scoped to the source
			}
		}
		// Two bands of one document can share a row hash only by a 64-bit
		// collision.
		if cells[id] != want {
			t.Errorf("%s: %d band cells, want %d", id, cells[id], want)
		}
	}
	if len(cells) > len(final) {
		t.Errorf("band cells of %d ids, %d documents", len(cells), len(final))
	}
	// The band stage finds near-copies beyond the simhash distance.
	beyond, found := 0, 0
	for _, d := range final {
		if d.Bands == nil || !strings.HasPrefix(d.ID, "a-") {
			continue
		}
		res, err := bulk.LookupDocuments(bg, []kvindex.Query{{Fingerprint: d.Fingerprint, Bands: d.Bands}}, kvindex.LookupOptions{K: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res[0].Hits {
			if h.ID == d.ID {
				found++
			}
			if h.Distance > 3 {
				beyond++
			}
		}
	}
	if found == 0 || beyond == 0 {
		t.Errorf("band lookups: %d documents found themselves, %d hits beyond distance 3", found, beyond)
	}
}

// TestTextBandsShardsEqualWholeLoad: three shards of a text load into an
// index with bands give the same index as one load.
func TestTextBandsShardsEqualWholeLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the dictionaries")
	}
	fpr := sharedFingerprinter(t)
	dir := t.TempDir()
	in := writeFile(t, dir, "docs.jsonl", []byte(textLines(genTexts(41, "s", 200))))
	cfg := func(cp string) Config {
		c := baseConfig(dir, in)
		c.CheckpointDir = filepath.Join(dir, cp)
		c.NewFingerprinter = func() (*fingerprint.Fingerprinter, error) { return fpr, nil }
		c.spillEvery, c.BatchDocs = 90, 32
		return c
	}
	whole := openBandIndex(t, filepath.Join(dir, "whole"), false)
	if _, err := Run(bg, whole, cfg("cp")); err != nil {
		t.Fatal(err)
	}
	sharded := openBandIndex(t, filepath.Join(dir, "sharded"), false)
	for i := range 3 {
		c := cfg(fmt.Sprint("cp-", i))
		c.Shard, c.Shards = i, 3
		if _, err := Run(bg, sharded, c); err != nil {
			t.Fatal(err)
		}
	}
	want := dump(t, whole, "bulkload")
	if d := diff(want, dump(t, sharded, "bulkload")); d != "" {
		t.Errorf("sharded text load differs:\n%s", d)
	}
	if n := len(bandCells(t, whole)); n != 200 {
		t.Errorf("band cells of %d documents, want 200", n)
	}
}

// TestTextBandsResumeAfterSIGKILL: a text load into an index with bands,
// killed during its merge phase (at table commits, sstables staged) and,
// without the race detector, during its read phase, then resumed, equals
// an uninterrupted load. The children that start in the merge phase never
// load the dictionaries (the read phase is done in-process first).
func TestTextBandsResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	fpr := sharedFingerprinter(t)
	root := t.TempDir()
	a, b, _ := repeatedTexts()
	in := writeFile(t, root, "docs.jsonl", []byte(textLines(append(a, b...))))
	textCfg := func(dir string) Config {
		c := baseConfig(dir, in)
		c.NewFingerprinter = func() (*fingerprint.Fingerprinter, error) { return fpr, nil }
		c.spillEvery, c.BatchDocs = 90, 32
		return c
	}
	ref := openBandIndex(t, filepath.Join(root, "ref", "ix"), false)
	if _, err := Run(bg, ref, textCfg(filepath.Join(root, "ref"))); err != nil {
		t.Fatal(err)
	}
	want := dump(t, ref)

	commitsLogged := func(dir string) int {
		b, _ := os.ReadFile(filepath.Join(dir, "commits.log"))
		return strings.Count(string(b), "\n")
	}
	batchesLogged := func(dir string) int {
		b, _ := os.ReadFile(filepath.Join(dir, "batches.log"))
		return strings.Count(string(b), "\n")
	}
	// kill starts a child on dir and kills it once ready(dir) holds.
	kill := func(dir, spec string, ready func() bool) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+spec)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.After(5 * time.Minute)
		for !ready() {
			select {
			case err := <-exited:
				t.Fatalf("child ended before its kill point: %v", err)
			case <-deadline:
				cmd.Process.Kill()
				t.Fatal("child never reached its kill point")
			case <-time.After(2 * time.Millisecond):
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		err := <-exited
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
			t.Fatalf("child not killed: %v", err)
		}
	}
	points := []string{"merge:1", "merge:3"}
	if !raceEnabled {
		points = append(points, "read:3")
	}
	for i, p := range points {
		dir := filepath.Join(root, fmt.Sprint(i))
		os.MkdirAll(dir, 0o755)
		phase, n, _ := strings.Cut(p, ":")
		var target int
		fmt.Sscan(n, &target)
		if phase == "merge" {
			// The read phase in-process, stopped as the merge begins.
			ix, err := openBandIndexErr(filepath.Join(dir, "ix"), true)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(bg)
			c := textCfg(dir)
			c.onPhase = func(ph string) {
				if ph == "merge" {
					cancel()
				}
			}
			if _, err := Run(ctx, ix, c); !errors.Is(err, context.Canceled) {
				t.Fatalf("stopping after the read phase: %v", err)
			}
			cancel()
			ix.Close()
			kill(dir, dir+"|"+in+"|bands", func() bool { return commitsLogged(dir) >= target })
		} else {
			kill(dir, dir+"|"+in+"|bands,batchlog", func() bool { return batchesLogged(dir) >= target })
		}
		ix, err := openBandIndexErr(filepath.Join(dir, "ix"), true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(bg, ix, textCfg(dir)); err != nil {
			t.Fatal(err)
		}
		if d := diff(dump(t, ix), want); d != "" {
			t.Errorf("kill point %s: resumed text load differs from an uninterrupted one:\n%s", p, d)
		}
		ix.Close()
	}
}

// TestCheckpointVersion2Refused: a checkpoint of the previous version (its
// runs have no band cells) is refused with a request to start over.
func TestCheckpointVersion2Refused(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "fps.csv", []byte(fpLines(genFPs(9, 50))))
	cfg := baseConfig(dir, in)
	os.MkdirAll(cfg.CheckpointDir, 0o755)
	writeFile(t, cfg.CheckpointDir, "checkpoint.json", []byte(`{"version":2,"runs":1}`))
	_, err := Run(bg, openIndex(t, filepath.Join(dir, "ix")), cfg)
	if err == nil || !strings.Contains(err.Error(), "start over") {
		t.Fatalf("version 2 checkpoint: %v, want a request to start over", err)
	}
}

// TestHBaseTextBands: text loads with repeated ids (the loads of
// TestTextBandsMatchOnlineInserts, whose oracle is online inserts) into an
// HBase index with bands, through puts and through HFiles, give exactly
// the embedded store's index: the bands table (<ns>:bands) included, the
// old band cells of replaced documents deleted.
func TestHBaseTextBands(t *testing.T) {
	zk := hbasetest.ZK(t)
	t.Parallel() // most of an HBase test is waiting for table creation and drops
	if testing.Short() {
		t.Skip("loads the dictionaries")
	}
	fpr := sharedFingerprinter(t)
	dir := t.TempDir()
	a, b, bFP := repeatedTexts()
	pa := writeFile(t, dir, "a.jsonl", []byte(textLines(a)))
	os.MkdirAll(filepath.Join(dir, "b"), 0o755)
	writeFile(t, dir, "b/b1.jsonl", []byte(textLines(b)))
	writeFile(t, dir, "b/b2.csv", []byte(fpLines(bFP)))
	ref := openBandIndex(t, filepath.Join(dir, "ref"), false)
	puts, putsNS := openHBaseIndexMode(t, zk, kvindex.BandsOn)
	hfiles, hfilesNS := openHBaseIndexMode(t, zk, kvindex.BandsOn)
	for n, target := range []*kvindex.Index{ref, puts, hfiles} {
		for i, in := range []string{pa, filepath.Join(dir, "b", "*")} {
			cfg := baseConfig(dir, in)
			switch n {
			case 1:
				cfg = hbaseConfig(dir, in)
			case 2:
				cfg = hfileConfig(dir, in)
			}
			cfg.CheckpointDir = filepath.Join(dir, fmt.Sprint("cp", n, i))
			cfg.NewFingerprinter = func() (*fingerprint.Fingerprinter, error) { return fpr, nil }
			cfg.spillEvery, cfg.BatchDocs = 150, 32
			sum, err := Run(bg, target, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n == 2 && sum.HFilesImported == 0 {
				t.Errorf("load %d imported no HFiles", i)
			}
		}
	}
	want := dump(t, ref)
	if n := len(bandCells(t, ref)); n < len(a) {
		t.Fatalf("the embedded load has band cells of %d documents", n)
	}
	for name, ix := range map[string]*kvindex.Index{"puts": puts, "HFiles": hfiles} {
		if d := diff(want, dump(t, ix)); d != "" {
			t.Errorf("text loads into HBase through %s differ from the embedded store's:\n%s", name, d)
		}
	}
	// Band cells carry their document's bucket start as their timestamp,
	// as an online insert writes them (a family TTL expires them with the
	// document's index cells).
	final := map[string]textDoc{}
	for _, d := range append(append([]textDoc(nil), a...), b...) {
		final[d.id] = d
	}
	for _, d := range bFP {
		delete(final, d.id)
	}
	checked := 0
	for id, d := range final {
		if checked == 8 {
			break
		}
		checked++
		doc := onlineDocument(t, fpr, d)
		wantTS := uint64(puts.Buckets().Start(puts.Buckets().Of(d.at)).UnixMilli())
		for _, x := range []struct {
			ix *kvindex.Index
			ns string
		}{{puts, putsNS}, {hfiles, hfilesNS}} {
			st := x.ix.Store().(*hbasestore.Store)
			for _, band := range []int{0, fingerprint.NumBands - 1} {
				res, err := st.Client().Get(bg, hbasestore.TableName(x.ns, storage.TableBands), &hbase.Get{Row: kvindex.BandRowKey(band, doc.Bands[band])})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, c := range res.Cells {
					if string(c.Qualifier) == id {
						n++
						if c.Timestamp != wantTS || len(c.Value) != 0 {
							t.Errorf("%s: band %d cell of %s: timestamp %d, value %x; want %d (bucket start), empty", x.ns, band, id, c.Timestamp, c.Value, wantTS)
						}
					}
				}
				if n != 1 {
					t.Errorf("%s: band %d row of %s holds %d cells of it", x.ns, band, id, n)
				}
			}
		}
	}
}
