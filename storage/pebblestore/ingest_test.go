package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/cockroachdb/pebble/v2"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/simdex/simdex/storage"
)

type testCell struct{ row, qual, val []byte }

// randomCells returns n distinct cells sorted by (row, qualifier), with row
// keys that contain 0x00 bytes and rows that are prefixes of others (the
// cases the key escaping has to order right).
func randomCells(r *rand.Rand, n int) []testCell {
	seen := map[string]bool{}
	var out []testCell
	for len(out) < n {
		row := make([]byte, 1+r.IntN(4))
		for i := range row {
			row[i] = byte(r.IntN(3)) // 0x00, 0x01, 0x02
		}
		qual := []byte{byte('a' + r.IntN(3)), byte(r.IntN(256))}
		k := fmt.Sprintf("%x/%x", row, qual)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, testCell{row, qual, fmt.Appendf(nil, "v%d", len(out))})
	}
	slices.SortFunc(out, func(a, b testCell) int {
		if c := bytes.Compare(a.row, b.row); c != 0 {
			return c
		}
		return bytes.Compare(a.qual, b.qual)
	})
	return out
}

func dumpTable(t *testing.T, s *Store, tb storage.Table) []testCell {
	t.Helper()
	var out []testCell
	err := s.Scan(context.Background(), tb, nil, nil, func(r storage.Row) error {
		for _, c := range r.Cells {
			out = append(out, testCell{r.Key, c.Qualifier, c.Value})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBulkWriterEqualsPuts: cells ingested through a BulkWriter (several
// sstables) read back exactly as the same cells written by Mutate, replace
// existing cells as a Put does, and leave other tables and counters alone.
func TestBulkWriterEqualsPuts(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	cells := randomCells(r, 2000)
	dir := t.TempDir()
	for _, bulk := range []bool{false, true} {
		a, err := Open(filepath.Join(dir, fmt.Sprint("puts", bulk)), Options{NoSync: true, Bulk: bulk})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Open(filepath.Join(dir, fmt.Sprint("ingest", bulk)), Options{NoSync: true, Bulk: bulk})
		if err != nil {
			t.Fatal(err)
		}
		// Both stores already hold a counter, a cell of another table and
		// an older version of every tenth cell.
		pre := []storage.Mutation{
			{Kind: storage.Add, Table: storage.TableMeta, Row: []byte("m"), Qualifier: []byte("n"), Delta: 5},
			{Kind: storage.Put, Table: storage.TableDocs, Row: []byte("x"), Qualifier: []byte("d"), Value: []byte("docs")},
		}
		for i := 0; i < len(cells); i += 10 {
			pre = append(pre, storage.Mutation{Kind: storage.Put, Table: storage.TableFP, Row: cells[i].row, Qualifier: cells[i].qual, Value: []byte("old")})
		}
		for _, s := range []*Store{a, b} {
			if err := s.Mutate(ctx, pre); err != nil {
				t.Fatal(err)
			}
		}
		var muts []storage.Mutation
		for _, c := range cells {
			muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableFP, Row: c.row, Qualifier: c.qual, Value: c.val})
		}
		if err := a.Mutate(ctx, muts); err != nil {
			t.Fatal(err)
		}
		stage := filepath.Join(dir, fmt.Sprint("stage", bulk))
		w, err := b.NewBulkWriter(storage.TableFP, stage, 4<<10) // many small sstables
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cells {
			if err := w.Put(c.row, c.qual, c.val); err != nil {
				t.Fatal(err)
			}
		}
		if len(w.paths) < 3 {
			t.Errorf("%d sstables, want several", len(w.paths))
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if left, _ := filepath.Glob(filepath.Join(stage, "*")); len(left) != 0 {
			t.Errorf("staging files left after commit: %v", left)
		}
		// The sstables have the store's own table format: a row's cells
		// stay together in its data blocks (no value blocks).
		// (Ingested over a memtable they overlap, they are queued behind
		// it: flush to see them.)
		if err := b.db.Flush(); err != nil {
			t.Fatal(err)
		}
		levels, err := b.db.SSTables(pebble.WithProperties())
		if err != nil {
			t.Fatal(err)
		}
		tables := 0
		for _, lv := range levels {
			for _, info := range lv {
				tables++
				if n := info.Properties.NumValuesInValueBlocks; n > 0 {
					t.Errorf("bulk=%v: sstable %s has %d values in value blocks", bulk, info.FileNum, n)
				}
			}
		}
		if tables < len(w.paths) {
			t.Errorf("bulk=%v: %d sstables in the store, want at least the %d ingested", bulk, tables, len(w.paths))
		}
		for _, tb := range storage.Tables {
			got, want := dumpTable(t, b, tb), dumpTable(t, a, tb)
			if !slices.EqualFunc(got, want, func(x, y testCell) bool {
				return bytes.Equal(x.row, y.row) && bytes.Equal(x.qual, y.qual) && bytes.Equal(x.val, y.val)
			}) {
				t.Errorf("bulk=%v table %s: ingested content (%d cells) differs from puts (%d cells)", bulk, tb, len(got), len(want))
			}
		}
		// Counters keep working on top of ingested data.
		if err := b.Mutate(ctx, []storage.Mutation{{Kind: storage.Add, Table: storage.TableMeta, Row: []byte("m"), Qualifier: []byte("n"), Delta: 2}}); err != nil {
			t.Fatal(err)
		}
		rows, err := b.Get(ctx, []storage.RowKey{{Table: storage.TableMeta, Key: []byte("m")}})
		if err != nil || len(rows[0].Cells) != 1 || !bytes.Equal(rows[0].Cells[0].Value, []byte{0, 0, 0, 0, 0, 0, 0, 7}) {
			t.Errorf("counter after ingest: %v %v", rows, err)
		}
		// The ingested data survives a reopen (Bulk: no WAL, Ingest is
		// durable by itself).
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		b, err = Open(filepath.Join(dir, fmt.Sprint("ingest", bulk)), Options{NoSync: true, Bulk: bulk})
		if err != nil {
			t.Fatal(err)
		}
		if got := dumpTable(t, b, storage.TableFP); len(got) != len(cells) {
			t.Errorf("after reopen: %d cells, want %d", len(got), len(cells))
		}
		if err := errors.Join(a.Close(), b.Close()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBulkWriterErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStoreIn(t, dir)
	if _, err := s.NewCellWriter(storage.TableMeta, filepath.Join(dir, "st")); err == nil {
		t.Error("a bulk writer for the meta table (counters) was accepted")
	}
	if _, err := s.NewCellWriter(storage.Table(9), filepath.Join(dir, "st")); err == nil {
		t.Error("unknown table accepted")
	}
	cases := []struct {
		name  string
		cells []testCell
	}{
		{"repeated key", []testCell{{[]byte("a"), []byte("q"), nil}, {[]byte("a"), []byte("q"), nil}}},
		{"row out of order", []testCell{{[]byte("b"), []byte("q"), nil}, {[]byte("a"), []byte("q"), nil}}},
		{"qualifier out of order", []testCell{{[]byte("a"), []byte("r"), nil}, {[]byte("a"), []byte("q"), nil}}},
		{"longer row before its prefix", []testCell{{[]byte("a\x00"), []byte("q"), nil}, {[]byte("a"), []byte("q"), nil}}},
	}
	for _, c := range cases {
		stage := filepath.Join(dir, "stage-"+c.name)
		w, err := s.NewCellWriter(storage.TableIndex, stage)
		if err != nil {
			t.Fatal(err)
		}
		var perr error
		for _, cell := range c.cells {
			if perr = w.Put(cell.row, cell.qual, cell.val); perr != nil {
				break
			}
		}
		if perr == nil {
			t.Errorf("%s: accepted", c.name)
		}
		if err := w.Commit(ctx); err == nil {
			t.Errorf("%s: commit after a failed put succeeded", c.name)
		}
		if left, _ := os.ReadDir(stage); len(left) != 0 {
			t.Errorf("%s: staging files left: %v", c.name, left)
		}
	}
	if got := dumpTable(t, s, storage.TableIndex); len(got) != 0 {
		t.Errorf("failed writers wrote %d cells", len(got))
	}
	// Abort drops everything.
	w, _ := s.NewCellWriter(storage.TableIndex, filepath.Join(dir, "abort"))
	w.Put([]byte("a"), []byte("q"), []byte("v"))
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err == nil {
		t.Error("commit after abort succeeded")
	}
	if got := dumpTable(t, s, storage.TableIndex); len(got) != 0 {
		t.Errorf("aborted writer wrote %d cells", len(got))
	}
}

// TestIngestInvalidatesRowCache: a row read (and cached) before an ingest
// that changes it is read fresh afterwards; ingest names no rows, so the
// whole cache must go.
func TestIngestInvalidatesRowCache(t *testing.T) {
	dir := t.TempDir()
	s := openStoreIn(t, dir)
	ctx := context.Background()
	row := []byte("row-1")
	key := []storage.RowKey{{Table: storage.TableIndex, Key: row}}
	if err := s.Mutate(ctx, []storage.Mutation{{Kind: storage.Put, Table: storage.TableIndex, Row: row, Qualifier: []byte("a"), Value: []byte("old")}}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second Get is answered from the cache
		if _, err := s.Get(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.CacheStats(); st.Hits == 0 {
		t.Fatalf("row cache not used: %+v", st)
	}
	w, err := s.NewCellWriter(storage.TableIndex, filepath.Join(dir, "stage"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Put(row, []byte("a"), []byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := w.Put(row, []byte("b"), []byte("added")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got := rows[0].Cells
	if len(got) != 2 || string(got[0].Value) != "new" || string(got[1].Value) != "added" {
		t.Fatalf("after ingest: %q, want a=new b=added", got)
	}
}

// BenchmarkBulkWriterPut: the fp cells of a bulk load (random 8-byte rows in
// order, ids as qualifiers, 9-byte values) through a BulkWriter: key
// encoding, order check, Pebble's sstable writer and its row filter.
func BenchmarkBulkWriterPut(b *testing.B) {
	const n = 1 << 18
	r := rand.New(rand.NewPCG(4, 4))
	rows := make([]uint64, n)
	for i := range rows {
		rows[i] = r.Uint64()
	}
	slices.Sort(rows)
	quals := make([][]byte, n)
	for i := range quals {
		quals[i] = fmt.Appendf(nil, "d%d", r.IntN(1e7))
	}
	val := make([]byte, 9)
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	dir := b.TempDir()
	var row [8]byte
	for b.Loop() {
		w, err := s.NewBulkWriter(storage.TableFP, dir, 0)
		if err != nil {
			b.Fatal(err)
		}
		for i, x := range rows {
			binary.BigEndian.PutUint64(row[:], x)
			if err := w.Put(row[:], quals[i], val); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Abort(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/cell")
}
