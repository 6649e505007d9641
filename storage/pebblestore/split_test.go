package pebblestore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/simdex/simdex/storage"
)

// randomBytes draws bytes biased towards the ones the key encoding treats
// specially (0x00, 0x01, 0xFF).
func randomBytes(r *rand.Rand, maxLen int) []byte {
	b := make([]byte, r.IntN(maxLen+1))
	for i := range b {
		switch r.IntN(4) {
		case 0:
			b[i] = 0x00
		case 1:
			b[i] = 0x01
		case 2:
			b[i] = 0xFF
		default:
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

// TestSplitRow checks Split against the key encoding: the prefix of every
// cell key is its row prefix, and bytewise order of whole keys equals the
// order of (prefix, suffix) that Pebble requires of a Split.
func TestSplitRow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	type key struct{ prefix, suffix, full []byte }
	var keys []key
	for range 400 {
		tb := storage.Tables[r.IntN(len(storage.Tables))]
		p := rowPrefix(nil, tb, randomBytes(r, 6))
		s := randomBytes(r, 6)
		keys = append(keys, key{p, s, slices.Concat(p, s)})
	}
	for _, k := range keys {
		if n := splitRow(k.full); n != len(k.prefix) {
			t.Fatalf("splitRow(%x) = %d, want %d", k.full, n, len(k.prefix))
		}
		if n := splitRow(k.prefix); n != len(k.prefix) {
			t.Fatalf("splitRow(prefix %x) = %d, want %d", k.prefix, n, len(k.prefix))
		}
	}
	for _, a := range keys {
		for _, b := range keys {
			want := bytes.Compare(a.prefix, b.prefix)
			if want == 0 {
				want = bytes.Compare(a.suffix, b.suffix)
			}
			if got := comparer.Compare(a.full, b.full); got != want {
				t.Fatalf("Compare(%x, %x) = %d, (prefix, suffix) order says %d", a.full, b.full, got, want)
			}
		}
	}
	// Keys the store never writes: the whole key is the prefix.
	for _, k := range []string{"", "\x00", "\x05abc", "\x00\x01"} {
		if n := splitRow([]byte(k)); n != len(k) {
			t.Errorf("splitRow(%x) = %d, want %d", k, n, len(k))
		}
	}
	if comparer.Name != pebble.DefaultComparer.Name {
		t.Errorf("comparer name %q: stores written before the filters use %q and must still open", comparer.Name, pebble.DefaultComparer.Name)
	}
}

// mainOptions are the Pebble options of the store before row-prefix
// filters (no Split, no filter policy): what a store written by an older
// binary was written with.
func mainOptions() *pebble.Options {
	return &pebble.Options{Merger: &pebble.Merger{Name: "simdex.add.v1", Merge: newAdder},
		Logger: pebbleLogger{slog.New(slog.NewTextHandler(io.Discard, nil))}}
}

// TestOpensStoreWrittenWithoutFilters writes a store as the store did
// before row-prefix filters, opens it with them (reads, writes, compacts),
// and opens the result again the old way: both directions read every cell.
func TestOpensStoreWrittenWithoutFilters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	want := map[string]string{} // Pebble key -> value
	put := func(db *pebble.DB, tb storage.Table, row, qual, val string) {
		k := append(rowPrefix(nil, tb, []byte(row)), qual...)
		if err := db.Set(k, []byte(val), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		want[string(k)] = val
	}
	old, err := pebble.Open(dir, mainOptions())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		put(old, storage.TableBands, fmt.Sprintf("band\x00%03d", i), fmt.Sprintf("doc%d", i), "")
		put(old, storage.TableDocs, fmt.Sprintf("doc%d", i), "d", fmt.Sprintf("v%d", i))
	}
	if err := old.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("open a store written without filters: %v", err)
	}
	rows, err := s.Get(ctx, []storage.RowKey{
		{Table: storage.TableBands, Key: []byte("band\x00007")},
		{Table: storage.TableBands, Key: []byte("band\x00999")}, // absent
		{Table: storage.TableDocs, Key: []byte("doc42")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows[0].Cells) != 1 || string(rows[0].Cells[0].Qualifier) != "doc7" || len(rows[1].Cells) != 0 ||
		len(rows[2].Cells) != 1 || string(rows[2].Cells[0].Value) != "v42" {
		t.Fatalf("rows of the old store read back as %+v", rows)
	}
	// New writes, flushed into filtered sstables and compacted with the old.
	var muts []storage.Mutation
	for i := range 100 {
		row, q := fmt.Sprintf("new\x00%03d", i), fmt.Sprintf("doc%d", i)
		muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableBands, Row: []byte(row), Qualifier: []byte(q), Value: []byte{}})
		want[string(append(rowPrefix(nil, storage.TableBands, []byte(row)), q...))] = ""
	}
	if err := s.Mutate(ctx, muts); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.DB().Compact(ctx, []byte{0}, []byte{0xff}, true); err != nil {
		t.Fatal(err)
	}
	rows, err = s.Get(ctx, []storage.RowKey{{Table: storage.TableBands, Key: []byte("new\x00050")}, {Table: storage.TableBands, Key: []byte("band\x00150")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows[0].Cells) != 1 || len(rows[1].Cells) != 1 {
		t.Fatalf("after compaction: %+v", rows)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Back to the old options: every cell is there, filters are ignored.
	old, err = pebble.Open(dir, mainOptions())
	if err != nil {
		t.Fatalf("open with the old options after filtered writes: %v", err)
	}
	defer old.Close()
	got := map[string]string{}
	it, err := old.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		got[string(it.Key())] = string(it.Value())
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("old options read %d cells, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("cell %x = %q, want %q", k, got[k], v)
		}
	}
}

// TestAbsentRowsUseFilters reads absent rows from flushed sstables: the
// filters rule them out (Pebble's filter hit counter rises), rows that
// exist are still read whole, absent rows are not cached and band rows
// bypass the cache (other tables' rows with cells are cached).
func TestAbsentRowsUseFilters(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var muts []storage.Mutation
	for i := range 2000 {
		muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableBands, Row: fmt.Appendf(nil, "b%06d", i*2),
			Qualifier: []byte("x"), Value: []byte{}})
	}
	muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: []byte("i1"), Qualifier: []byte("q"), Value: []byte{}})
	if err := s.Mutate(ctx, muts); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	var keys []storage.RowKey
	for i := range 500 {
		keys = append(keys, storage.RowKey{Table: storage.TableBands, Key: fmt.Appendf(nil, "b%06d", i*2+1)}) // between stored rows
	}
	keys = append(keys, storage.RowKey{Table: storage.TableBands, Key: []byte("b000010")},
		storage.RowKey{Table: storage.TableIndex, Key: []byte("i1")}, storage.RowKey{Table: storage.TableIndex, Key: []byte("i2")})
	before := s.DB().Metrics().Filter.Hits
	entries := s.CacheStats().Entries
	rows, err := s.Get(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows[:500] {
		if len(r.Cells) != 0 {
			t.Fatalf("absent row %s has cells %+v", keys[i].Key, r.Cells)
		}
	}
	if r := rows[500]; len(r.Cells) != 1 || string(r.Cells[0].Qualifier) != "x" {
		t.Fatalf("stored band row read as %+v", r)
	}
	if r := rows[501]; len(r.Cells) != 1 || string(r.Cells[0].Qualifier) != "q" || len(rows[502].Cells) != 0 {
		t.Fatalf("index rows read as %+v %+v", r, rows[502])
	}
	// At ~1% false positives, nearly all 500 absent rows are answered by
	// the filter; 400 leaves room for the filter's randomness.
	if hits := s.DB().Metrics().Filter.Hits - before; hits < 400 {
		t.Errorf("filter ruled out %d of 500 absent rows", hits)
	}
	if got := s.CacheStats().Entries - entries; got != 2 {
		t.Errorf("row cache gained %d entries, want 2 (the stored and the absent index row, no band row)", got)
	}
}
