package bulkload

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/kvindex/pebblestore"
)

// Bulk load writes no LSH band cells, so text documents are refused by an
// index that keeps band rows (they would be silently unfindable by band),
// while precomputed fingerprints (which have no bands) load.
func TestTextRefusedByIndexWithBands(t *testing.T) {
	dir := t.TempDir()
	st, err := pebblestore.Open(filepath.Join(dir, "ix"), pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, BucketWidth: 24 * time.Hour, Bands: kvindex.BandsOn})
	if err != nil {
		t.Fatal(errors.Join(err, st.Close()))
	}
	defer ix.Close()
	docs := writeFile(t, dir, "docs.jsonl", []byte(`{"id":"a","text":"some text to load","time":1}`+"\n"))
	if _, err := Run(bg, ix, baseConfig(filepath.Join(dir, "d"), docs)); !errors.Is(err, ErrConfig) {
		t.Fatalf("text into an index with bands: %v, want ErrConfig", err)
	}
	fps := writeFile(t, dir, "fps.tsv", []byte("a\t0123456789abcdef\t1\n"))
	cfg := baseConfig(filepath.Join(dir, "f"), fps)
	cfg.Format = FormatFingerprints
	if _, err := Run(bg, ix, cfg); err != nil {
		t.Fatalf("fingerprints into an index with bands: %v", err)
	}
	if _, err := ix.Get(bg, "a"); err != nil {
		t.Fatalf("loaded fingerprint: %v", err)
	}
}
