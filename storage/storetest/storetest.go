// Package storetest is the contract suite for storage.Store. Every backend
// (the embedded Pebble store, HBase) runs it unchanged:
//
//	func TestContract(t *testing.T) { storetest.Run(t, openMyStore) }
package storetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/storage"
)

// Run runs the contract. open returns a new, empty store for one subtest
// and arranges its cleanup (Close may be called by the suite first; a second
// Close must be harmless).
func Run(t *testing.T, open func(t *testing.T) storage.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s storage.Store)
	}{
		{"MissingRows", testMissingRows},
		{"PutGetSorted", testPutGetSorted},
		{"Replace", testReplace},
		{"DeleteCell", testDeleteCell},
		{"DeleteRowKeepsNeighbours", testDeleteRow},
		{"BinaryKeys", testBinaryKeys},
		{"TablesAreSeparate", testTables},
		{"EmptyAndLargeValues", testValues},
		{"AddCounters", testAdd},
		{"ScanOrderAndBounds", testScan},
		{"ScanCallbackError", testScanStop},
		{"MutationOrder", testMutationOrder},
		{"CanceledContext", testCanceled},
		{"Closed", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

func put(t storage.Table, row, q, v string) storage.Mutation {
	return storage.Mutation{Kind: storage.Put, Table: t, Row: []byte(row), Qualifier: []byte(q), Value: []byte(v)}
}

func mustMutate(t *testing.T, s storage.Store, muts ...storage.Mutation) {
	t.Helper()
	if err := s.Mutate(ctx, muts); err != nil {
		t.Fatalf("Mutate: %v", err)
	}
}

func getRow(t *testing.T, s storage.Store, tb storage.Table, row string) map[string]string {
	t.Helper()
	rows, err := s.Get(ctx, []storage.RowKey{{Table: tb, Key: []byte(row)}})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if len(rows) != 1 {
		t.Fatalf("Get returned %d rows for 1 key", len(rows))
	}
	out := map[string]string{}
	for _, c := range rows[0].Cells {
		out[string(c.Qualifier)] = string(c.Value)
	}
	return out
}

func want(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("row = %q, want %q", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Fatalf("row = %q, want %q", got, want)
		}
	}
}

func testMissingRows(t *testing.T, s storage.Store) {
	mustMutate(t, s, put(storage.TableDocs, "b", "q", "v"))
	keys := []storage.RowKey{{Table: storage.TableDocs, Key: []byte("a")}, {Table: storage.TableDocs, Key: []byte("b")}, {Table: storage.TableDocs, Key: []byte("c")}}
	rows, err := s.Get(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows for 3 keys", len(rows))
	}
	for i, r := range rows {
		if !bytes.Equal(r.Key, keys[i].Key) {
			t.Errorf("row %d has key %q, want %q", i, r.Key, keys[i].Key)
		}
	}
	if len(rows[0].Cells) != 0 || len(rows[2].Cells) != 0 || len(rows[1].Cells) != 1 {
		t.Fatalf("cells per row = %d,%d,%d; want 0,1,0", len(rows[0].Cells), len(rows[1].Cells), len(rows[2].Cells))
	}
	// The same row twice in one call answers twice.
	rows, err = s.Get(ctx, []storage.RowKey{keys[1], keys[1]})
	if err != nil || len(rows) != 2 || len(rows[0].Cells) != 1 || len(rows[1].Cells) != 1 {
		t.Fatalf("repeated key: %v %v", rows, err)
	}
}

func testPutGetSorted(t *testing.T, s storage.Store) {
	quals := []string{"x\x00", "b", "d\xff", "a", "bb", "\x00", "x"}
	var muts []storage.Mutation
	for _, q := range quals {
		muts = append(muts, put(storage.TableIndex, "row", q, "v"+q))
	}
	mustMutate(t, s, muts...)
	rows, err := s.Get(ctx, []storage.RowKey{{Table: storage.TableIndex, Key: []byte("row")}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range rows[0].Cells {
		got = append(got, string(c.Qualifier))
		if string(c.Value) != "v"+string(c.Qualifier) {
			t.Errorf("cell %q = %q", c.Qualifier, c.Value)
		}
	}
	sorted := slices.Clone(quals)
	slices.Sort(sorted)
	if !slices.Equal(got, sorted) {
		t.Fatalf("qualifiers %q, want sorted %q", got, sorted)
	}
}

func testReplace(t *testing.T, s storage.Store) {
	mustMutate(t, s, put(storage.TableDocs, "r", "q", "one"))
	mustMutate(t, s, put(storage.TableDocs, "r", "q", "two"))
	want(t, getRow(t, s, storage.TableDocs, "r"), map[string]string{"q": "two"})
}

func testDeleteCell(t *testing.T, s storage.Store) {
	mustMutate(t, s, put(storage.TableFP, "r", "a", "1"), put(storage.TableFP, "r", "b", "2"))
	mustMutate(t, s,
		storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableFP, Row: []byte("r"), Qualifier: []byte("a")},
		storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableFP, Row: []byte("r"), Qualifier: []byte("missing")},
	)
	want(t, getRow(t, s, storage.TableFP, "r"), map[string]string{"b": "2"})
}

func testDeleteRow(t *testing.T, s storage.Store) {
	for _, r := range []string{"a", "a\x00", "ab", "b", ""} {
		if r == "" {
			continue
		}
		mustMutate(t, s, put(storage.TableDocs, r, "q", r), put(storage.TableDocs, r, "q2", r))
	}
	mustMutate(t, s, storage.Mutation{Kind: storage.DeleteRow, Table: storage.TableDocs, Row: []byte("a")})
	want(t, getRow(t, s, storage.TableDocs, "a"), map[string]string{})
	for _, r := range []string{"a\x00", "ab", "b"} {
		want(t, getRow(t, s, storage.TableDocs, r), map[string]string{"q": r, "q2": r})
	}
	// A row can be written again after its deletion.
	mustMutate(t, s, put(storage.TableDocs, "a", "new", "1"))
	want(t, getRow(t, s, storage.TableDocs, "a"), map[string]string{"new": "1"})
}

func testBinaryKeys(t *testing.T, s storage.Store) {
	rows := []string{"\x00", "\x00\x00", "\x00\x01", "\x00\xff", "\xff", "\xff\xff", "\x01\x00\x02"}
	for i, r := range rows {
		mustMutate(t, s, put(storage.TableIndex, r, "q\x00", fmt.Sprint(i)))
	}
	for i, r := range rows {
		want(t, getRow(t, s, storage.TableIndex, r), map[string]string{"q\x00": fmt.Sprint(i)})
	}
	var got []string
	if err := s.Scan(ctx, storage.TableIndex, nil, nil, func(r storage.Row) error {
		got = append(got, string(r.Key))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(rows)
	slices.Sort(sorted)
	if !slices.Equal(got, sorted) {
		t.Fatalf("scan order %q, want %q", got, sorted)
	}
}

func testTables(t *testing.T, s storage.Store) {
	for _, tb := range storage.Tables {
		mustMutate(t, s, put(tb, "same", "q", tb.String()))
	}
	for _, tb := range storage.Tables {
		want(t, getRow(t, s, tb, "same"), map[string]string{"q": tb.String()})
		n := 0
		if err := s.Scan(ctx, tb, nil, nil, func(storage.Row) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("scan of %s saw %d rows, want 1", tb, n)
		}
	}
}

func testValues(t *testing.T, s storage.Store) {
	big := bytes.Repeat([]byte{0, 1, 2, 0xff}, 256<<10) // 1 MiB
	mustMutate(t, s,
		storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: []byte("r"), Qualifier: []byte("empty"), Value: []byte{}},
		storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: []byte("r"), Qualifier: []byte("big"), Value: big},
	)
	got := getRow(t, s, storage.TableIndex, "r")
	if v, ok := got["empty"]; !ok || v != "" {
		t.Fatalf("empty cell: %q %v", v, ok)
	}
	if got["big"] != string(big) {
		t.Fatalf("big cell: %d bytes back, want %d", len(got["big"]), len(big))
	}
}

func counter(t *testing.T, s storage.Store, q string) int64 {
	t.Helper()
	v, ok := getRow(t, s, storage.TableMeta, "c")[q]
	if !ok {
		return 0
	}
	if len(v) != 8 {
		t.Fatalf("counter %q has %d bytes", q, len(v))
	}
	return int64(binary.BigEndian.Uint64([]byte(v)))
}

func testAdd(t *testing.T, s storage.Store) {
	add := func(q string, d int64) storage.Mutation {
		return storage.Mutation{Kind: storage.Add, Table: storage.TableMeta, Row: []byte("c"), Qualifier: []byte(q), Delta: d}
	}
	mustMutate(t, s, add("n", 5), add("n", -2))
	if got := counter(t, s, "n"); got != 3 {
		t.Fatalf("counter = %d, want 3", got)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if err := s.Mutate(ctx, []storage.Mutation{add("n", 1), add("m", -1)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := counter(t, s, "n"); got != 203 {
		t.Fatalf("after 200 concurrent adds counter = %d, want 203", got)
	}
	if got := counter(t, s, "m"); got != -200 {
		t.Fatalf("counter m = %d, want -200", got)
	}
	// A deleted counter starts again from 0.
	mustMutate(t, s, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableMeta, Row: []byte("c"), Qualifier: []byte("n")})
	mustMutate(t, s, add("n", 7))
	if got := counter(t, s, "n"); got != 7 {
		t.Fatalf("counter after delete+add = %d, want 7", got)
	}
}

func testScan(t *testing.T, s storage.Store) {
	var keys []string
	for i := 0; i < 300; i++ {
		k := fmt.Sprintf("k%03d", i)
		keys = append(keys, k)
		mustMutate(t, s, put(storage.TableFP, k, "a", k), put(storage.TableFP, k, "b", k))
	}
	scan := func(start, end []byte) []string {
		var got []string
		err := s.Scan(ctx, storage.TableFP, start, end, func(r storage.Row) error {
			if len(r.Cells) != 2 {
				return fmt.Errorf("row %q has %d cells", r.Key, len(r.Cells))
			}
			got = append(got, string(r.Key))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := scan(nil, nil); !slices.Equal(got, keys) {
		t.Fatalf("full scan: %d rows, want %d in order", len(got), len(keys))
	}
	if got := scan([]byte("k100"), []byte("k200")); !slices.Equal(got, keys[100:200]) {
		t.Fatalf("scan [k100,k200): %q..., %d rows", first(got), len(got))
	}
	if got := scan([]byte("k1"), []byte("k100")); len(got) != 0 {
		t.Fatalf("scan [k1,k100): %q", got)
	}
	if got := scan([]byte("k250"), nil); !slices.Equal(got, keys[250:]) {
		t.Fatalf("scan [k250,): %d rows", len(got))
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func testScanStop(t *testing.T, s storage.Store) {
	for i := 0; i < 10; i++ {
		mustMutate(t, s, put(storage.TableDocs, fmt.Sprint(i), "q", "v"))
	}
	stop := errors.New("stop here")
	n := 0
	err := s.Scan(ctx, storage.TableDocs, nil, nil, func(storage.Row) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("Scan returned %v, want the callback's error as is", err)
	}
	if n != 3 {
		t.Fatalf("callback ran %d times after stopping at 3", n)
	}
}

func testMutationOrder(t *testing.T, s storage.Store) {
	// Within one call, later mutations win.
	mustMutate(t, s,
		put(storage.TableDocs, "r", "q", "first"),
		storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableDocs, Row: []byte("r"), Qualifier: []byte("q")},
		put(storage.TableDocs, "r", "q", "last"),
		put(storage.TableDocs, "r2", "q", "x"),
		storage.Mutation{Kind: storage.DeleteRow, Table: storage.TableDocs, Row: []byte("r2")},
	)
	want(t, getRow(t, s, storage.TableDocs, "r"), map[string]string{"q": "last"})
	want(t, getRow(t, s, storage.TableDocs, "r2"), map[string]string{})
}

func testCanceled(t *testing.T, s storage.Store) {
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Get(c, []storage.RowKey{{Table: storage.TableDocs, Key: []byte("a")}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with canceled ctx: %v", err)
	}
	if err := s.Mutate(c, []storage.Mutation{put(storage.TableDocs, "a", "q", "v")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Mutate with canceled ctx: %v", err)
	}
	if err := s.Scan(c, storage.TableDocs, nil, nil, func(storage.Row) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Scan with canceled ctx: %v", err)
	}
	d, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel2()
	if _, err := s.Get(d, []storage.RowKey{{Table: storage.TableDocs, Key: []byte("a")}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get past deadline: %v", err)
	}
	want(t, getRow(t, s, storage.TableDocs, "a"), map[string]string{})
}

func testClosed(t *testing.T, s storage.Store) {
	mustMutate(t, s, put(storage.TableDocs, "a", "q", "v"))
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := s.Get(ctx, []storage.RowKey{{Table: storage.TableDocs, Key: []byte("a")}}); !errors.Is(err, storage.ErrStore) {
		t.Errorf("Get after Close: %v, want ErrStore", err)
	}
	if err := s.Mutate(ctx, []storage.Mutation{put(storage.TableDocs, "a", "q", "v")}); !errors.Is(err, storage.ErrStore) {
		t.Errorf("Mutate after Close: %v, want ErrStore", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
