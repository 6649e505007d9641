package bulkload

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/testmails"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/pebblestore"
)

// TestDedupReportJudgedByTheRule: the self-dedup report lists a pair of
// documents within k only when the service's decision relates them, as a
// check of either would: a restyled copy is listed, a one-word swap (a
// different fact, as close in simhash) is not.
func TestDedupReportJudgedByTheRule(t *testing.T) {
	fpr, err := fingerprint.New(fingerprint.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	orig := "The city council approved twelve electric buses for the northern routes on Monday, officials said after a long vote in the old town hall."
	swap := strings.Replace(orig, "town", "harbour", 1)
	restyled := strings.ReplaceAll(orig, ",", " -")
	fo, _ := fpr.Fingerprint(fingerprint.Document{Body: orig})
	fs, _ := fpr.Fingerprint(fingerprint.Document{Body: swap})
	fr, _ := fpr.Fingerprint(fingerprint.Document{Body: restyled})
	if fingerprint.Distance(fo.Simhash, fs.Simhash) > 3 || fingerprint.Distance(fo.Simhash, fr.Simhash) > 3 {
		t.Fatal("test texts: both edits must be within the report's k for the rule to matter")
	}
	dir := t.TempDir()
	lines := []string{
		`{"id":"orig","text":"` + orig + `","time":1}`,
		`{"id":"swap","text":"` + swap + `","time":2}`,
		`{"id":"restyled","text":"` + restyled + `","time":3}`,
	}
	path := writeFile(t, dir, "docs.jsonl", []byte(strings.Join(lines, "\n")))
	ix := openIndex(t, filepath.Join(dir, "ix"))
	cfg := baseConfig(dir, path)
	cfg.NewFingerprinter = func() (*fingerprint.Fingerprinter, error) { return fpr, nil }
	cfg.DedupPath = filepath.Join(dir, "dups.jsonl")
	if _, err := Run(bg, ix, cfg); err != nil {
		t.Fatal(err)
	}
	pairs := reportPairs(t, cfg.DedupPath)
	slices.SortFunc(pairs, func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) })
	// The swap is no duplicate of the original; the restyled copy is, and
	// the swap and the restyled copy differ by the same word.
	if want := [][2]string{{"orig", "restyled"}}; !slices.Equal(pairs, want) {
		t.Errorf("report pairs %v, want %v", pairs, want)
	}
}

// TestDedupReportSeesTheTemplate: one author's mails share a long
// signature and list footer (internal/testmails), so a new
// mail lies within k of a stored one; the report judges each document
// with the template its text-key rows reveal, as a check would, and lists
// only a restyled copy of a mail.
func TestDedupReportSeesTheTemplate(t *testing.T) {
	fpr, err := fingerprint.New(fingerprint.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	mails := testmails.Load()
	mail := mails.Mail
	fNew, _ := fpr.Fingerprint(fingerprint.Document{Body: mail(mails.New)})
	nearest, best := -1, 65
	type doc struct {
		ID   string `json:"id"`
		Text string `json:"text"`
		Time int    `json:"time"`
	}
	var docs []doc
	for i, b := range mails.Bodies {
		docs = append(docs, doc{fmt.Sprintf("mail-%d", i), mail(b), i + 1})
		f, _ := fpr.Fingerprint(fingerprint.Document{Body: mail(b)})
		if d := fingerprint.Distance(fNew.Simhash, f.Simhash); d < best {
			nearest, best = i, d
		}
	}
	if best > 3 {
		t.Fatalf("test texts: the nearest mail is %d bits from the new one, beyond the report's k", best)
	}
	// A copy within the report's k: restyled, a few bits from its original.
	restyled := testmails.Restyled(mail(mails.Bodies[nearest]))
	fc, _ := fpr.Fingerprint(fingerprint.Document{Body: mail(mails.Bodies[nearest])})
	fr, _ := fpr.Fingerprint(fingerprint.Document{Body: restyled})
	if d := fingerprint.Distance(fc.Simhash, fr.Simhash); d > 3 {
		t.Fatalf("test texts: the restyled copy is %d bits from its original, beyond the report's k", d)
	}
	docs = append(docs, doc{"new", mail(mails.New), 20}, doc{"copy", restyled, 21})
	var lines []string
	for _, d := range docs {
		b, _ := json.Marshal(d)
		lines = append(lines, string(b))
	}
	dir := t.TempDir()
	path := writeFile(t, dir, "docs.jsonl", []byte(strings.Join(lines, "\n")))
	// The index as the service creates it: with band and text-key rows,
	// whose counts reveal the template.
	st, err := pebblestore.Open(filepath.Join(dir, "ix"), pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, Bands: kvindex.BandsOn})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	cfg := baseConfig(dir, path)
	cfg.NewFingerprinter = func() (*fingerprint.Fingerprinter, error) { return fpr, nil }
	cfg.DedupPath = filepath.Join(dir, "dups.jsonl")
	cfg.DedupK = 3
	if _, err := Run(bg, ix, cfg); err != nil {
		t.Fatal(err)
	}
	pairs := reportPairs(t, cfg.DedupPath)
	if want := [][2]string{{"copy", fmt.Sprintf("mail-%d", nearest)}}; !slices.Equal(pairs, want) {
		t.Errorf("report pairs %v, want %v (the new mail shares only the template)", pairs, want)
	}
}

// reportPairs reads a pairs-mode dedup report whose lines each hold two
// documents, and returns their ids, each pair sorted.
func reportPairs(t *testing.T, path string) [][2]string {
	t.Helper()
	var pairs [][2]string
	for _, l := range readLines(t, path) {
		var line dedupLine
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, v := range line.IDs {
			ids = append(ids, v...)
		}
		slices.Sort(ids)
		if len(ids) == 2 {
			pairs = append(pairs, [2]string{ids[0], ids[1]})
		} else {
			t.Errorf("report line with %d ids: %s", len(ids), l)
		}
	}
	return pairs
}
