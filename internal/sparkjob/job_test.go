package sparkjob

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
)

var bg = context.Background()

var fprOnce struct {
	sync.Once
	f   *fingerprint.Fingerprinter
	err error
}

func sharedFingerprinter(t testing.TB) *fingerprint.Fingerprinter {
	t.Helper()
	fprOnce.Do(func() { fprOnce.f, fprOnce.err = fingerprint.New(fingerprint.DefaultConfig()) })
	if fprOnce.err != nil {
		t.Fatal(fprOnce.err)
	}
	return fprOnce.f
}

// testIndex is the index both loads create: small base-set chunks so that
// rows are cut, one-day buckets.
var testIndex = IndexConfig{BucketWidth: 24 * time.Hour, MaxCellBytes: 1024}

type input struct {
	path, format string
}

// writeInputs writes documents (with near-copies, ids repeated within a
// file and across files, short and long texts, bad lines) and fingerprint
// lines (some ids of documents again).
func writeInputs(t *testing.T, dir string) []input {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	vocab := make([]string, 800)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("%c%c%c%c", 'a'+r.IntN(26), 'a'+r.IntN(26), 'a'+r.IntN(26), 'a'+r.IntN(26))
	}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var texts []string
	line := func(id string, i int) string {
		var text string
		switch {
		case i%7 == 3 && len(texts) > 0: // a near-copy
			w := strings.Fields(texts[r.IntN(len(texts))])
			w[r.IntN(len(w))] = vocab[r.IntN(len(vocab))]
			text = strings.Join(w, " ")
		case i%11 == 5:
			text = "A short note. " + vocab[r.IntN(len(vocab))]
		default:
			var w []string
			for range 40 + r.IntN(200) {
				w = append(w, vocab[r.IntN(len(vocab))])
			}
			text = strings.Join(w, " ") + "."
		}
		texts = append(texts, text)
		m := map[string]any{"id": id, "text": text, "time": t0.Add(time.Duration(r.IntN(96)) * time.Hour).Format(time.RFC3339)}
		if i%3 == 0 {
			m["title"] = strings.Join(strings.Fields(text)[:3], " ")
			m["attrs"] = map[string]string{"src": fmt.Sprint("s", i%4)}
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	var a, b strings.Builder
	for i := range 120 {
		fmt.Fprintln(&a, line(fmt.Sprintf("doc-%04d", i), i))
		if i%17 == 4 {
			fmt.Fprintln(&a, line(fmt.Sprintf("doc-%04d", i-3), i+1000)) // repeated within the file
		}
		if i%29 == 9 {
			fmt.Fprintln(&a, `{"id":"bad","text":"x","time":"soon"}`)
			fmt.Fprintln(&a, `{"id": 7}`)
		}
	}
	fmt.Fprintln(&a)
	for i := range 60 {
		id := fmt.Sprintf("doc-%04d", 200+i)
		if i%5 == 0 {
			id = fmt.Sprintf("doc-%04d", i*2) // repeats an id of the first file
		}
		fmt.Fprintln(&b, line(id, i+2000))
	}
	var c strings.Builder
	for i := range 150 {
		id := fmt.Sprintf("fp-%04d", i)
		if i%13 == 0 {
			id = fmt.Sprintf("doc-%04d", 240+i%20) // replaces a text
		}
		fmt.Fprintf(&c, "%s,%016x,%d\n", id, r.Uint64(), t0.Add(time.Duration(r.IntN(96))*time.Hour).Unix())
	}
	c.WriteString("x,notafingerprint,1\n# comment\n")
	ins := []input{{filepath.Join(dir, "a.jsonl"), bulkload.FormatDocs}, {filepath.Join(dir, "b.jsonl"), bulkload.FormatDocs}, {filepath.Join(dir, "c.csv"), bulkload.FormatFingerprints}}
	for i, s := range []string{a.String(), b.String(), c.String()} {
		if err := os.WriteFile(ins[i].path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ins
}

// bulkLoad loads the inputs as cmd/bulkload does (into HBase through
// HFiles), its checkpoint in cpDir.
func bulkLoad(t *testing.T, s Store, cpDir string, ins []input) bulkload.Summary {
	t.Helper()
	ix, err := openIndex(bg, s, testIndex)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, in := range ins {
		paths = append(paths, in.path)
	}
	fpr := sharedFingerprinter(t)
	cfg := bulkload.Config{Inputs: paths, CheckpointDir: cpDir, Memory: bulkload.MinMemory,
		NewFingerprinter: func() (*fingerprint.Fingerprinter, error) { return fpr, nil }}
	if s.HBase != nil { // as cmd/bulkload --store hbase --hbase-import hfile
		cfg.IndexFirst, cfg.InFlight, cfg.ApplyBytes = true, 4, 1<<20
		cfg.Import = bulkload.ImportConfig{Mode: bulkload.ImportHFile}
	}
	sum, err := bulkload.Run(bg, ix, cfg)
	if err = errors.Join(err, ix.Close()); err != nil {
		t.Fatal(err)
	}
	return sum
}

// jobResult is what the simulated job's driver gathered.
type jobResult struct {
	records, rejects int64
	counts           Counts
	ingest           IngestStats
	ingestErr        error
}

// runJob does what the Spark job does, in-process: map partitions (the
// first input cut in two), decide the superseded records, write every
// part (the first write of failPart fails halfway and is run again), and
// ingest (beforeImport: IngestConfig.BeforeImport).
func runJob(t *testing.T, s Store, work string, ins []input, failPart int, beforeImport func(context.Context, *hbase.Client, string, []bulkload.HFile) error) jobResult {
	t.Helper()
	metaPath := filepath.Join(work, "meta.json")
	loadID := "load-" + filepath.Base(work)
	done, err := Prepare(bg, s, testIndex, loadID, metaPath)
	if err != nil || done {
		t.Fatal(done, err)
	}
	meta, err := ReadMeta(metaPath)
	if err != nil {
		t.Fatal(err)
	}
	// Map partitions: (input, first line, last line).
	type split struct {
		in    int
		lines []string
		first int
	}
	var splits []split
	var ids []string
	for i, in := range ins {
		b, err := os.ReadFile(in.path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		for _, l := range lines {
			var d struct{ ID string }
			if json.Unmarshal([]byte(l), &d) == nil && d.ID != "" {
				ids = append(ids, d.ID)
			}
		}
		if i == 0 {
			splits = append(splits, split{i, lines[:50], 0}, split{i, lines[50:], 50})
		} else {
			splits = append(splits, split{i, lines, 0})
		}
	}
	parts := Parts{Index: 3, FP: 2, Bands: 3, DocBounds: DocBoundsOf(ids, 3)}
	if meta.HBase != nil {
		ix, err := meta.WorkerIndex(bg)
		if err != nil {
			t.Fatal(err)
		}
		if parts, err = parts.WithRegions(ix.Layout().Permuters(), meta.HBase.RegionStarts()); err != nil {
			t.Fatal(err)
		}
	}
	fpr := sharedFingerprinter(t)
	var res jobResult
	type rec struct {
		id    string
		order uint64
		fp    uint64
	}
	var recs []rec
	runs := make([][]byte, parts.Total())
	for _, s := range splits {
		var in bytes.Buffer
		for j, l := range s.lines {
			fmt.Fprintf(&in, "%d\t%s:%d\t%s\n", uint64(s.in)<<40|uint64(s.first+j), ins[s.in].path, s.first+j+1, l)
		}
		var out bytes.Buffer
		_, err := Map(bg, MapConfig{Meta: meta, Parts: parts, Format: ins[s.in].format, NewFingerprinter: func() (*fingerprint.Fingerprinter, error) { return fpr, nil }}, &in, &out)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(&out)
		ended := false
		for {
			kind, p, err := readFrame(br, nil)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			switch kind {
			case FrameRecord:
				recs = append(recs, rec{string(p[16:]), binary.BigEndian.Uint64(p), binary.BigEndian.Uint64(p[8:])})
			case FrameReject:
				res.rejects++
			case FrameRun:
				part := binary.BigEndian.Uint32(p)
				var f bytes.Buffer
				if err := writeFrame(&f, FrameRun, p); err != nil {
					t.Fatal(err)
				}
				runs[part] = append(runs[part], f.Bytes()...)
			case FrameEnd:
				ended = true
			}
		}
		if !ended {
			t.Fatal("map output without its end frame")
		}
	}
	// The last record of each id wins.
	res.records = int64(len(recs))
	last := map[string]rec{}
	for _, r := range recs {
		if w, ok := last[r.id]; !ok || r.order > w.order {
			last[r.id] = r
		}
	}
	winFPs := map[uint64]bool{}
	for _, w := range last {
		winFPs[w.fp] = true
	}
	var sup Superseded
	noIndex := map[uint64]bool{}
	for _, r := range recs {
		if last[r.id].order != r.order {
			sup.Records = append(sup.Records, RecordRef{r.id, r.order})
			if !winFPs[r.fp] && !noIndex[r.fp] {
				noIndex[r.fp] = true
				sup.NoIndex = append(sup.NoIndex, r.fp)
			}
		}
	}
	res.counts = Counts{Documents: int64(len(last)), Fingerprints: int64(len(winFPs))}
	out := filepath.Join(work, "parts")
	for p := range parts.Total() {
		cfg := WriteConfig{Meta: meta, Parts: parts, Part: p, Superseded: sup, OutDir: out}
		if p == failPart {
			fc := cfg
			fc.FailAfter = 10
			if _, err := Write(bg, fc, bytes.NewReader(runs[p])); !errors.Is(err, ErrFailAsked) {
				t.Fatalf("part %d: a write told to fail: %v", p, err)
			}
		}
		if _, err := Write(bg, cfg, bytes.NewReader(runs[p])); err != nil {
			t.Fatalf("part %d: %v", p, err)
		}
		if p == failPart { // a retried task whose first attempt finished
			before := partFiles(t, PartDir(out, p))
			if _, err := Write(bg, cfg, bytes.NewReader(runs[p])); err != nil {
				t.Fatalf("part %d again: %v", p, err)
			}
			if after := partFiles(t, PartDir(out, p)); len(before) == 0 || fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("part %d written again: files %v, before %v", p, keys(after), keys(before))
			}
		}
	}
	res.ingest, res.ingestErr = Ingest(bg, IngestConfig{Store: s, Meta: meta, OutDir: out, Parts: parts, LoadID: loadID, Counts: res.counts, BeforeImport: beforeImport})
	return res
}

// partFiles reads the files of a part's directory (but its stats), by
// name.
func partFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range es {
		if e.Name() == "_SUCCESS" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestJobEqualsBulkLoad: the job's steps build, on the embedded store, the
// index cmd/bulkload builds from the same inputs, cell for cell (repeated
// ids, rejects, texts and fingerprints, band and text-key rows); a write
// that fails halfway and is run again changes nothing.
func TestJobEqualsBulkLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the dictionaries")
	}
	dir := t.TempDir()
	ins := writeInputs(t, dir)
	sum := bulkLoad(t, Store{DataDir: filepath.Join(dir, "bulk")}, filepath.Join(dir, "bulk.cp"), ins)
	if sum.DuplicateIDs == 0 || sum.Rejected == 0 {
		t.Fatalf("the input should repeat ids and have rejects: %v", sum)
	}
	for _, failPart := range []int{-1, 1} {
		name := fmt.Sprintf("job%d", failPart+1)
		res := runJob(t, Store{DataDir: filepath.Join(dir, name)}, filepath.Join(dir, name+".work"), ins, failPart, nil)
		if res.ingestErr != nil {
			t.Fatal(res.ingestErr)
		}
		if res.records != sum.Records || res.rejects != sum.Rejected || res.counts.Documents != sum.Documents || res.counts.Fingerprints != sum.Fingerprints {
			t.Errorf("job counted %+v, the load %v", res, sum)
		}
		diffs, err := CompareStores(bg, hbasestore.Config{}, filepath.Join(dir, "bulk"), filepath.Join(dir, name), 20)
		if err != nil {
			t.Fatal(err)
		}
		if len(diffs) > 0 {
			t.Fatalf("the job's index differs from the load's:\n%s", strings.Join(diffs, "\n"))
		}
	}
	perTable, err := cellCounts(bg, hbasestore.Config{}, filepath.Join(dir, "bulk"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compared cells: %v; load: %v", perTable, sum)
	for _, tb := range []storage.Table{storage.TableIndex, storage.TableFP, storage.TableDocs, storage.TableBands} {
		if perTable[tb] == 0 {
			t.Fatalf("no %s cells compared", tb)
		}
	}
}

// TestPrepareNotesNonEmpty: prepare notes what an index that holds rows
// needs (a docs row: the loaded ids are checked; no index row: the index
// rows are written as files), and reports a load already ingested done.
func TestPrepareNotesNonEmpty(t *testing.T) {
	dir := t.TempDir()
	ix, err := openIndex(bg, Store{DataDir: dir}, testIndex)
	if err != nil {
		t.Fatal(err)
	}
	err = ix.BulkWriter().Apply(bg, []storage.Mutation{{Kind: storage.Put, Table: storage.TableDocs, Row: []byte("x"), Qualifier: []byte("d"), Value: []byte{1}},
		{Kind: storage.Put, Table: storage.TableMeta, Row: markerRow, Qualifier: []byte("done-load"), Value: []byte("x")}})
	if err = errors.Join(err, ix.Close()); err != nil {
		t.Fatal(err)
	}
	metaPath := filepath.Join(dir, "m.json")
	if done, err := Prepare(bg, Store{DataDir: dir}, testIndex, "other", metaPath); err != nil || done {
		t.Fatalf("prepare of a non-empty index: %v %v", done, err)
	}
	if m, err := ReadMeta(metaPath); err != nil || !m.CheckStored || m.MergeIndex {
		t.Fatalf("meta of an index with a docs row and no index row: %+v %v", m, err)
	}
	if done, err := Prepare(bg, Store{DataDir: dir}, testIndex, "done-load", metaPath); err != nil || !done {
		t.Fatalf("prepare of a loaded load: %v %v", done, err)
	}
}

// TestPrepareSourceAttr: a new index records the source attribute a load
// names (IndexConfig.SourceAttr, as cmd/bulkload's --source-attr), or none
// for NoSourceAttr, and the workers take it from the meta file; a later
// load that names none keeps the index's, one that names another is
// refused.
func TestPrepareSourceAttr(t *testing.T) {
	workerAttr := func(metaPath string) string {
		t.Helper()
		m, err := ReadMeta(metaPath)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := m.WorkerIndex(bg)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		return ix.SourceAttr()
	}
	for _, tc := range []struct{ attr, want string }{{"", kvindex.DefaultSourceAttr}, {"site", "site"}, {kvindex.NoSourceAttr, ""}} {
		dir := t.TempDir()
		metaPath := filepath.Join(dir, "m.json")
		cfg := testIndex
		cfg.SourceAttr = tc.attr
		if _, err := Prepare(bg, Store{DataDir: dir}, cfg, "first", metaPath); err != nil {
			t.Fatalf("%q: %v", tc.attr, err)
		}
		if got := workerAttr(metaPath); got != tc.want {
			t.Fatalf("new index with %q: the workers' source attribute is %q, want %q", tc.attr, got, tc.want)
		}
		cfg.SourceAttr = ""
		if _, err := Prepare(bg, Store{DataDir: dir}, cfg, "second", metaPath); err != nil {
			t.Fatalf("%q, then none named: %v", tc.attr, err)
		}
		if got := workerAttr(metaPath); got != tc.want {
			t.Fatalf("%q, then none named: the workers' source attribute is %q, want the index's %q", tc.attr, got, tc.want)
		}
		if tc.want != "" {
			cfg.SourceAttr = "other"
			if _, err := Prepare(bg, Store{DataDir: dir}, cfg, "third", metaPath); !errors.Is(err, kvindex.ErrMetaMismatch) {
				t.Fatalf("%q, then another named: %v, want %v", tc.attr, err, kvindex.ErrMetaMismatch)
			}
		}
	}
}

// TestDocBounds: bounds cut a sample into about equal parts and the parts
// follow key order.
func TestDocBounds(t *testing.T) {
	var ids []string
	for i := range 1000 {
		ids = append(ids, fmt.Sprintf("id-%05d", (i*7919)%1000))
	}
	b := DocBoundsOf(ids, 4)
	if len(b) != 3 || b[0] != "id-00250" || b[2] != "id-00750" {
		t.Fatalf("bounds %v", b)
	}
	p := Parts{Index: 1, FP: 1, Bands: 1, DocBounds: b}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	prev := 0
	for i := range 1000 {
		k := p.docPart(fmt.Appendf(nil, "id-%05d", i))
		if k < prev || p.Table(k) != storage.TableDocs {
			t.Fatalf("id %d: part %d after %d", i, k, prev)
		}
		prev = k
	}
	if DocBoundsOf(nil, 3) != nil || len(DocBoundsOf([]string{"a", "a", "a"}, 3)) != 1 {
		t.Fatal("bounds of a degenerate sample")
	}
}
