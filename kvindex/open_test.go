package kvindex_test

import (
	"errors"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/pebblestore"
)

// TestOpenAdoptStoredAndNoCreate: with AdoptStored an existing index opens
// with the layout and bucket width it was created with whatever the
// configured ones (a recipe mismatch is still refused), and a new index
// gets the configured ones; with NoCreate a store without an index is
// refused with ErrNoIndex and left without one.
func TestOpenAdoptStoredAndNoCreate(t *testing.T) {
	open := func(dir string, cfg kvindex.Config) (*kvindex.Index, error) {
		return openPebbleIndex(t, dir, pebblestore.Options{}, cfg)
	}
	created := fingerprint.Layout{B: 5, K: 3}

	empty := t.TempDir()
	if _, err := open(empty, kvindex.Config{Layout: created, AdoptStored: true, NoCreate: true}); !errors.Is(err, kvindex.ErrNoIndex) {
		t.Fatalf("NoCreate on an empty store: %v, want ErrNoIndex", err)
	}
	st := openStore(t, empty)
	_, ok, err := kvindex.ReadMeta(bg, st)
	st.Close()
	if ok || err != nil {
		t.Fatalf("after a refused NoCreate open the store holds an index (%v, %v)", ok, err)
	}

	dir := t.TempDir()
	ix, err := open(dir, kvindex.Config{Layout: created, BucketWidth: time.Hour, AdoptStored: true})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Layout() != created || ix.Buckets().Width != time.Hour {
		t.Errorf("new index: layout %s, bucket width %s; want the configured %s, 1h", ix.Layout(), ix.Buckets().Width, created)
	}
	ix.Close()
	for _, noCreate := range []bool{false, true} {
		ix, err := open(dir, kvindex.Config{Layout: fingerprint.DefaultLayout, BucketWidth: 24 * time.Hour, AdoptStored: true, NoCreate: noCreate})
		if err != nil {
			t.Fatalf("NoCreate %v: %v", noCreate, err)
		}
		if ix.Layout() != created || ix.Buckets().Width != time.Hour {
			t.Errorf("NoCreate %v: existing index opened with layout %s, bucket width %s; want the stored %s, 1h", noCreate, ix.Layout(), ix.Buckets().Width, created)
		}
		ix.Close()
	}
	if _, err := open(dir, kvindex.Config{Layout: fingerprint.DefaultLayout}); !errors.Is(err, kvindex.ErrMetaMismatch) {
		t.Errorf("without AdoptStored: %v, want ErrMetaMismatch", err)
	}
	if _, err := open(dir, kvindex.Config{RecipeVersion: testRecipe + 1, AdoptStored: true}); !errors.Is(err, kvindex.ErrMetaMismatch) {
		t.Errorf("another recipe with AdoptStored: %v, want ErrMetaMismatch", err)
	}
}
