package bulkload

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/fingerprint"
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
	var pairs [][2]string
	for _, l := range readLines(t, cfg.DedupPath) {
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
	slices.SortFunc(pairs, func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) })
	// The swap is no duplicate of the original; the restyled copy is, and
	// the swap and the restyled copy differ by the same word.
	if want := [][2]string{{"orig", "restyled"}}; !slices.Equal(pairs, want) {
		t.Errorf("report pairs %v, want %v", pairs, want)
	}
}
