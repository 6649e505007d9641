package open

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

var bg = context.Background()

// TestIndexEmbedded: the embedded store's directory is made only with
// MakeDir; an index is created in it, opened again with its own layout
// (AdoptStored), and refused where there is none (NoCreate), the store
// then closed (the directory opens again).
func TestIndexEmbedded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg := kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, Layout: fingerprint.Layout{B: 5, K: 3}}
	if _, err := Index(bg, Store{DataDir: dir}, cfg); err == nil || !strings.Contains(err.Error(), "data dir") {
		t.Fatalf("missing directory without MakeDir: %v", err)
	}
	noIndex := cfg
	noIndex.AdoptStored, noIndex.NoCreate = true, true
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the refused open closed the store: it opens again
		if _, err := Index(bg, Store{DataDir: dir}, noIndex); !errors.Is(err, kvindex.ErrNoIndex) {
			t.Fatalf("NoCreate on an empty store: %v, want ErrNoIndex", err)
		}
	}
	made := filepath.Join(t.TempDir(), "made")
	ix, err := Index(bg, Store{Kind: "pebble", DataDir: made, MakeDir: true}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Config().Locker != nil {
		t.Error("the embedded store gave a Locker")
	}
	ix.Close()
	ix, err = Index(bg, Store{DataDir: made}, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, AdoptStored: true, NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Layout() != cfg.Layout {
		t.Errorf("reopened with layout %s, want the stored %s", ix.Layout(), cfg.Layout)
	}
	ix.Close()
	if _, _, err := (Store{Kind: "cassandra"}).Open(bg); err == nil {
		t.Error("an unknown store kind opened")
	}
}
