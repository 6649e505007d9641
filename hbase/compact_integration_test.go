package hbase

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

// TestMajorCompact: Flush writes every region's memstore into a store
// file; MajorCompact turns each region's files into at most one, without
// the deleted cells and the older versions, while the live cells stay
// readable.
func TestMajorCompact(t *testing.T) {
	majorCompactCheck(t, newTestClient(t))
}

// majorCompactCheck writes, deletes and overwrites cells of a new
// two-region table across two flushes, major-compacts it through c and
// checks that each region is down to one file holding only the live
// cells. It returns the table, dropped when the test ends.
func majorCompactCheck(t *testing.T, c *Client) string {
	t.Helper()
	ctx := testCtx(t)
	table := createTable(t, c, "compact", []FamilyDescriptor{{Name: "f", Attributes: map[string]string{AttrVersions: "1"}}}, "m")
	put := func(row, val string) {
		t.Helper()
		if err := c.Put(ctx, table, &Put{Row: []byte(row), Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: []byte(val)}}}); err != nil {
			t.Fatalf("Put %s: %v", row, err)
		}
	}
	flush := func() {
		t.Helper()
		if err := c.Flush(ctx, table); err != nil {
			t.Fatalf("Flush: %v", err)
		}
	}
	files := func() []int {
		t.Helper()
		n, err := c.StoreFiles(ctx, table)
		if err != nil {
			t.Fatalf("StoreFiles: %v", err)
		}
		return n
	}
	put("a", "1")
	put("z", "1")
	flush()
	if err := c.Delete(ctx, table, &Delete{Row: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	put("z", "2")
	flush()
	if got := files(); !slices.Equal(got, []int{2, 2}) {
		t.Fatalf("store files after two flushes: %v, want [2 2]", got)
	}
	if err := c.MajorCompact(ctx, table); err != nil {
		t.Fatalf("MajorCompact: %v", err)
	}
	// The servers compact in the background: wait for every region to
	// be down to one file (or none, where every cell was deleted).
	waitStoreFiles(t, c, table, "at most 1 per region", func(n []int) bool { return slices.Max(n) <= 1 })
	for row, want := range map[string]string{"a": "", "z": "2"} {
		res, err := c.Get(ctx, table, &Get{Row: []byte(row), MaxVersions: 10})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want == "" && len(res.Cells) != 0:
			t.Errorf("row %s: %d cells after its delete, want none", row, len(res.Cells))
		case want != "" && (len(res.Cells) != 1 || !bytes.Equal(res.Cells[0].Value, []byte(want))):
			t.Errorf("row %s: %v, want the one value %q", row, res.Cells, want)
		}
	}
	if err := c.MajorCompact(ctx, "no_such_ns:nothing"); err == nil {
		t.Error("MajorCompact of a missing table: no error")
	}
	return table
}

// waitStoreFiles polls table until no region is compacting and its store
// files per region satisfy done (the servers may not report a requested
// compaction at once), for at most 90 s, and returns them.
func waitStoreFiles(t *testing.T, c *Client, table, want string, done func([]int) bool) []int {
	t.Helper()
	ctx := testCtx(t)
	deadline := time.Now().Add(90 * time.Second)
	for {
		busy, err := c.Compacting(ctx, table)
		if err != nil {
			t.Fatalf("Compacting: %v", err)
		}
		n, err := c.StoreFiles(ctx, table)
		if err != nil {
			t.Fatalf("StoreFiles: %v", err)
		}
		if !busy && done(n) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: store files %v (compacting %v) after 90 s, want %s", table, n, busy, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
