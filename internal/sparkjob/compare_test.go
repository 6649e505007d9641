package sparkjob

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// TestCompareStoresFindsDifferences: a changed value, a cell in only one
// store (either side, first and last in key order) and a load marker's
// value counted differently are each reported; the creation time and the
// markers' qualifiers are not; max bounds the differences returned.
func TestCompareStoresFindsDifferences(t *testing.T) {
	dir := t.TempDir()
	put := func(tb storage.Table, row, q, v string) storage.Mutation {
		return storage.Mutation{Kind: storage.Put, Table: tb, Row: []byte(row), Qualifier: []byte(q), Value: []byte(v)}
	}
	common := []storage.Mutation{
		put(storage.TableDocs, "b", "d", "same"), put(storage.TableFP, "f1", "id", "x"),
		put(storage.TableIndex, "r1", "b1", "set"), put(storage.TableMeta, string(markerRow), "load-1", "v1"),
	}
	a := append(slices.Clone(common),
		put(storage.TableDocs, "c", "d", "old"), put(storage.TableDocs, "a", "d", "only-a"),
		put(storage.TableMeta, "simdex", "created", "1"), put(storage.TableMeta, string(markerRow), "load-2", "v2"))
	b := append(slices.Clone(common),
		put(storage.TableDocs, "c", "d", "new"), put(storage.TableDocs, "z", "d", "only-b"),
		put(storage.TableMeta, "simdex", "created", "2"), put(storage.TableMeta, string(markerRow), "load-3", "v3"))
	for name, muts := range map[string][]storage.Mutation{"a": a, "b": b, "a2": a} {
		st, err := pebblestore.Open(filepath.Join(dir, name), pebblestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Mutate(bg, muts); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	diffs, err := CompareStores(bg, hbasestore.Config{}, filepath.Join(dir, "a"), filepath.Join(dir, "b"), 20)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(diffs, "\n")
	for _, want := range []string{"only in " + filepath.Join(dir, "a") + ": docs/61/64", "docs/63/64: 6f6c64", "only in " + filepath.Join(dir, "b") + ": docs/7a/64",
		"load markers of value 7632", "load markers of value 7633"} {
		if !strings.Contains(got, want) {
			t.Errorf("no difference %q in:\n%s", want, got)
		}
	}
	if len(diffs) != 5 {
		t.Errorf("%d differences, want 5:\n%s", len(diffs), got)
	}
	if diffs, err := CompareStores(bg, hbasestore.Config{}, filepath.Join(dir, "a"), filepath.Join(dir, "b"), 2); err != nil || len(diffs) != 2 {
		t.Errorf("max 2: %d differences, %v", len(diffs), err)
	}
	if diffs, err := CompareStores(bg, hbasestore.Config{}, filepath.Join(dir, "a"), filepath.Join(dir, "a2"), 20); err != nil || len(diffs) != 0 {
		t.Errorf("equal stores: %v, %v", diffs, err)
	}
}
