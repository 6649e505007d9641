package bulkload

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
)

// TestEncoderCellsEqualLoad: the Encoder gives every record of a load the
// fp, band and docs cells Run writes for it (texts with and without titles
// and attributes, short and long, fingerprint lines), and the reasons Run
// lists for bad lines.
func TestEncoderCellsEqualLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the dictionaries")
	}
	fpr := sharedFingerprinter(t)
	dir := t.TempDir()
	docs := genTexts(41, "e", 60)
	docs = append(docs, textDoc{id: "short", text: "One short line.", at: t0})
	var fps strings.Builder
	for _, g := range genFPs(42, 50) {
		fmt.Fprintf(&fps, "%s,%s,%d\n", g.id, g.fp, g.at.Unix())
	}
	bad := []string{`{"id":"x"}`, `{"id":"y","text":"t","time":"yesterday"}`, `not json`, `{"id":"","text":"t","time":1}`}
	docsPath, fpPath := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "in.csv")
	if err := os.WriteFile(docsPath, []byte(textLines(docs)+strings.Join(bad, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fpPath, []byte(fps.String()+"# comment\nbad,line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openBandIndex(t, filepath.Join(dir, "db"), true)
	cfg := Config{Inputs: []string{docsPath, fpPath}, CheckpointDir: filepath.Join(dir, "cp"), Memory: MinMemory}
	cfg.NewFingerprinter = func() (*fingerprint.Fingerprinter, error) { return fpr, nil }
	if _, err := Run(bg, ix, cfg); err != nil {
		t.Fatal(err)
	}
	loaded := map[string]string{}
	for _, tb := range []storage.Table{storage.TableFP, storage.TableBands, storage.TableDocs} {
		err := ix.Store().Scan(bg, tb, nil, nil, func(r storage.Row) error {
			for _, c := range r.Cells {
				loaded[fmt.Sprintf("%s/%x/%x", tb, r.Key, c.Qualifier)] = fmt.Sprintf("%x", c.Value)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	enc := NewEncoder(ix, fpr)
	encoded := map[string]string{}
	var reasons []string
	for _, in := range []struct{ path, format string }{{docsPath, FormatDocs}, {fpPath, FormatFingerprints}} {
		b, err := os.ReadFile(in.path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			rec, err := enc.Encode([]byte(line), in.format)
			switch {
			case errors.Is(err, ErrNotRecord):
				continue
			case err != nil:
				reasons = append(reasons, err.Error())
				continue
			}
			if rec.Bucket != ix.Buckets().Of(rec.Time) {
				t.Fatalf("%s: bucket %d, want %d", rec.ID, rec.Bucket, ix.Buckets().Of(rec.Time))
			}
			for _, m := range rec.Cells {
				encoded[fmt.Sprintf("%s/%x/%x", m.Table, m.Row, m.Qualifier)] = fmt.Sprintf("%x", m.Value)
			}
		}
	}
	if !maps.Equal(loaded, encoded) {
		t.Fatalf("encoded cells differ from the load's: %d loaded, %d encoded", len(loaded), len(encoded))
	}
	rejects, err := os.ReadFile(filepath.Join(dir, "cp", "rejects.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(rejects), "\n"); got != len(reasons) {
		t.Fatalf("%d rejects from the load, %d from the encoder", got, len(reasons))
	}
	for _, r := range reasons {
		if !strings.Contains(string(rejects), strings.ReplaceAll(r, `"`, `\"`)) {
			t.Errorf("reason %q not among the load's rejects:\n%s", r, rejects)
		}
	}
}
