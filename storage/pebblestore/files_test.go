package pebblestore

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/simdex/simdex/storage"
)

// TestFileWriterIngest: cells of two key ranges written by two FileWriters
// without the store (small files, so each writer rolls several) are
// ingested in one call (which moves them into the store) and read back as
// written, in both tables, and cached rows are not served stale.
func TestFileWriterIngest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStoreIn(t, dir)
	format, err := s.TableFormat()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	cells := randomCells(r, 400)
	// A row read before the ingest must not be answered from the cache.
	if err := s.Mutate(ctx, []storage.Mutation{{Kind: storage.Put, Table: storage.TableDocs, Row: cells[0].row, Qualifier: cells[0].qual, Value: []byte("old")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, []storage.RowKey{{Table: storage.TableDocs, Key: cells[0].row}}); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, tb := range []storage.Table{storage.TableDocs, storage.TableIndex} {
		half := len(cells) / 2
		for part, cs := range [][]testCell{cells[:half], cells[half:]} {
			w, err := NewFileWriter(tb, filepath.Join(dir, "out", tb.String(), string(rune('a'+part))), format, 512)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if err := w.Put(c.row, c.qual, c.val); err != nil {
					t.Fatal(err)
				}
			}
			ps, err := w.Finish()
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) < 2 {
				t.Fatalf("%d files, want several", len(ps))
			}
			paths = append(paths, ps...)
		}
	}
	{
		if err := s.IngestFiles(ctx, paths); err != nil {
			t.Fatal(err)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "out", "*", "*", "*.sst")); len(m) != 0 {
			t.Fatalf("files left after the ingest: %v", m)
		}
		for _, tb := range []storage.Table{storage.TableDocs, storage.TableIndex} {
			got := dumpTable(t, s, tb)
			if !slices.EqualFunc(got, cells, func(a, b testCell) bool {
				return string(a.row) == string(b.row) && string(a.qual) == string(b.qual) && string(a.val) == string(b.val)
			}) {
				t.Fatalf("%s: read back %d cells, want the %d written", tb, len(got), len(cells))
			}
		}
		rows, err := s.Get(ctx, []storage.RowKey{{Table: storage.TableDocs, Key: cells[0].row}})
		if err != nil {
			t.Fatal(err)
		}
		if string(rows[0].Cells[0].Value) == "old" {
			t.Fatal("a cached row survived the ingest")
		}
	}
}

// TestFileWriterOrder: a key out of order is an error, and Abort leaves no
// file.
func TestFileWriterOrder(t *testing.T) {
	dir := t.TempDir()
	s := openStoreIn(t, dir)
	format, _ := s.TableFormat()
	w, err := NewFileWriter(storage.TableFP, filepath.Join(dir, "out"), format, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Put([]byte("b"), []byte("q"), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Put([]byte("a"), []byte("q"), nil); err == nil {
		t.Fatal("a key out of order was accepted")
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "out", "*")); len(m) != 0 {
		t.Fatalf("files left: %v", m)
	}
	if _, err := NewFileWriter(storage.TableMeta, dir, format, 0); err == nil {
		t.Fatal("a file writer for the meta table")
	}
}
