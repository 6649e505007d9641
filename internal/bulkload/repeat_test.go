package bulkload

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/compaction"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// repeatedIDs builds a first load A and a second load B whose fingerprints
// share index rows with A's, and that re-uses ids:
// A's ids again with the same fingerprint (a later time) or another one,
// ids repeated within B (the superseded fingerprint shared with another
// document, or carried by no one else), and the replacement of a stored
// document whose fingerprint another stored document shares.
func repeatedIDs() (a, b []genDoc) {
	r := rand.New(rand.NewPCG(21, 22))
	fp := func() fingerprint.Fingerprint { return fingerprint.Fingerprint(r.Uint64()) }
	at := func() time.Time { return t0.Add(time.Duration(r.IntN(5*24)) * time.Hour) }
	for i := range 400 {
		a = append(a, genDoc{id: fmt.Sprintf("a-%03d", i), fp: fp(), at: at()})
	}
	// a-399 shares a-398's fingerprint; a-397 repeats within A.
	a[399].fp = a[398].fp
	a = append(a, genDoc{id: "a-397", fp: fp(), at: at()})
	for i := range 300 {
		f := fp()
		if i%2 == 0 {
			// Shares three of its four index rows with a stored
			// fingerprint (only the lowest 16-bit block differs), often
			// in the same time bucket: the rows' base sets must merge.
			f = a[100+i/2].fp ^ fingerprint.Fingerprint(1+r.IntN(0xffff))
		}
		b = append(b, genDoc{id: fmt.Sprintf("b-%03d", i), fp: f, at: at()})
	}
	for i := 0; i < 100; i++ {
		switch i % 4 {
		case 0: // same id, same fingerprint, another time
			b = append(b, genDoc{id: a[i].id, fp: a[i].fp, at: at()})
		case 1: // same id, new fingerprint
			b = append(b, genDoc{id: a[i].id, fp: fp(), at: at()})
		case 2: // repeated within B, the first fingerprint carried by no one else
			b = append(b, genDoc{id: b[i].id, fp: fp(), at: at()})
		case 3: // repeated within B, the first fingerprint shared with b-(i+1)'s
			b[i+1].fp = b[i].fp
			b = append(b, genDoc{id: b[i].id, fp: fp(), at: at()})
		}
	}
	// A stored document replaced while another keeps its fingerprint.
	b = append(b, genDoc{id: "a-398", fp: fp(), at: at()})
	// Three records of one id, the middle one with the final fingerprint.
	f := fp()
	b = append(b, genDoc{id: "b-299", fp: fp(), at: at()}, genDoc{id: "b-299", fp: f, at: at()}, genDoc{id: "b-299", fp: f, at: at()})
	return a, b
}

// TestRepeatedIDsMatchOnlineInserts: loads with repeated ids (within a load
// and against the index) give, after compaction, exactly the index that
// online inserts (InsertAlways) of the same records in input order give,
// counters included: the last record of an id wins.
func TestRepeatedIDsMatchOnlineInserts(t *testing.T) {
	dir := t.TempDir()
	a, b := repeatedIDs()
	pa := writeFile(t, dir, "a.csv", []byte(fpLines(a)))
	pb := writeFile(t, dir, "b.csv", []byte(fpLines(b)))

	bulk := openIndex(t, filepath.Join(dir, "bulk"))
	for i, in := range []string{pa, pb} {
		cfg := baseConfig(dir, in)
		cfg.CheckpointDir = filepath.Join(dir, fmt.Sprint("cp", i))
		if _, err := Run(bg, bulk, cfg); err != nil {
			t.Fatal(err)
		}
	}
	ref := openIndex(t, filepath.Join(dir, "online"))
	for _, d := range append(append([]genDoc(nil), a...), b...) {
		if _, err := ref.Insert(bg, kvindex.Document{ID: d.id, Fingerprint: d.fp, Time: d.at}, kvindex.InsertAlways, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, ix := range []*kvindex.Index{bulk, ref} {
		c, err := compaction.New(ix, compaction.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(bg); err != nil {
			t.Fatal(err)
		}
	}
	if d := diff(dump(t, bulk, "bulkload"), dump(t, ref)); d != "" {
		t.Errorf("loads with repeated ids differ from online inserts in input order:\n%s", d)
	}
	// The counters against a direct count of the final documents.
	ids := map[string]fingerprint.Fingerprint{}
	for _, d := range append(append([]genDoc(nil), a...), b...) {
		ids[d.id] = d.fp
	}
	fps := map[fingerprint.Fingerprint]bool{}
	for _, f := range ids {
		fps[f] = true
	}
	st, err := bulk.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Documents != int64(len(ids)) || st.Fingerprints != int64(len(fps)) {
		t.Errorf("counters: %d documents, %d fingerprints; want %d, %d", st.Documents, st.Fingerprints, len(ids), len(fps))
	}
}

// TestRepeatedIDsInOneFreshLoad: one load into an empty index, ids repeated
// within it, equals online inserts in input order (after compaction).
func TestRepeatedIDsInOneFreshLoad(t *testing.T) {
	dir := t.TempDir()
	a, b := repeatedIDs()
	all := append(append([]genDoc(nil), a...), b...)
	in := writeFile(t, dir, "all.csv", []byte(fpLines(all)))
	bulk := openIndex(t, filepath.Join(dir, "bulk"))
	cfg := baseConfig(dir, in)
	var log bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&log, nil))
	sum, err := Run(bg, bulk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The merge phase started without a plan (the tables are empty), then
	// the id count found the repeats and it ran again with one.
	if !strings.Contains(log.String(), "merging again with a plan") {
		t.Errorf("no speculative merge phase was dropped; log:\n%s", log.String())
	}
	ref := openIndex(t, filepath.Join(dir, "online"))
	for _, d := range all {
		if _, err := ref.Insert(bg, kvindex.Document{ID: d.id, Fingerprint: d.fp, Time: d.at}, kvindex.InsertAlways, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, ix := range []*kvindex.Index{bulk, ref} {
		c, _ := compaction.New(ix, compaction.Config{})
		if _, err := c.Run(bg); err != nil {
			t.Fatal(err)
		}
	}
	if d := diff(dump(t, bulk, "bulkload"), dump(t, ref)); d != "" {
		t.Errorf("a load with repeated ids differs from online inserts in input order:\n%s", d)
	}
	sb, _ := bulk.Stats(bg)
	sr, _ := ref.Stats(bg)
	if sb.Documents != sr.Documents || sb.Fingerprints != sr.Fingerprints || sum.Fingerprints != sr.Fingerprints {
		t.Errorf("counters %d docs %d fps (summary %d fps), online %d, %d", sb.Documents, sb.Fingerprints, sum.Fingerprints, sr.Documents, sr.Fingerprints)
	}
	if sum.DuplicateIDs == 0 {
		t.Errorf("summary reports no duplicate ids")
	}
}

// plainStore hides the embedded store's optional capabilities (sorted-cell
// ingest, Flush), as a store without them (HBase) looks to the loader.
type plainStore struct{ storage.Store }

// TestPutPathEqualsIngestPath: through a store without the sorted-cell
// capability the loader writes the same cells as puts, and the index is
// exactly the one the ingest path builds (a fresh load, then a load into
// the non-empty index with repeated ids).
func TestPutPathEqualsIngestPath(t *testing.T) {
	dir := t.TempDir()
	a, b := repeatedIDs()
	pa := writeFile(t, dir, "a.csv", []byte(fpLines(a)))
	pb := writeFile(t, dir, "b.csv", []byte(fpLines(b)))
	ingest := openIndex(t, filepath.Join(dir, "ingest"))
	st, err := pebblestore.Open(filepath.Join(dir, "puts"), pebblestore.Options{NoSync: true, CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	puts, err := kvindex.Open(bg, plainStore{st}, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, BucketWidth: 24 * time.Hour, MaxCellBytes: 1024, Bands: kvindex.BandsOff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { puts.Close() })
	if _, ok := puts.Store().(cellIngester); ok {
		t.Fatal("the wrapped store still offers sorted-cell ingest")
	}
	for n, ix := range []*kvindex.Index{ingest, puts} {
		for i, in := range []string{pa, pb} {
			cfg := baseConfig(dir, in)
			cfg.CheckpointDir = filepath.Join(dir, fmt.Sprint("cp", n, i))
			if _, err := Run(bg, ix, cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	if d := diff(dump(t, ingest), dump(t, puts)); d != "" {
		t.Errorf("put path differs from the ingest path:\n%s", d)
	}
}
