package hbase

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase/hfile"
)

// writeHFile writes cells of family f into dir/name and returns the path.
func writeHFile(t *testing.T, dir, name string, cells []hfile.Cell) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := hfile.NewWriter(f, hfile.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if err := w.Append(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(w.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	return path
}

func hcell(row, q string, ts int64, v string) hfile.Cell {
	return hfile.Cell{Row: []byte(row), Family: []byte("f"), Qualifier: []byte(q), Timestamp: ts, Value: []byte(v)}
}

// TestBulkLoadHFiles imports HFiles written by package hfile into a real,
// pre-split table through PrepareBulkLoad/BulkLoadHFile/CleanupBulkLoad,
// and reads the cells back with their timestamps; files that do not fit a
// region and paths the server cannot read give their errors.
func TestBulkLoadHFiles(t *testing.T) {
	c, ctx, table := testTable(t) // split at g, n, t
	regions, err := c.Regions(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	var bounds []string
	for _, r := range regions {
		bounds = append(bounds, fmt.Sprintf("[%s,%s)", r.Start, r.End))
	}
	if got := fmt.Sprint(bounds); got != "[[,g) [g,n) [n,t) [t,)]" {
		t.Fatalf("regions %s", got)
	}
	token, err := c.PrepareBulkLoad(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Recent: the test family has a 10-day TTL.
	ts := time.Now().Add(-time.Hour).UnixMilli()
	files := map[string][]hfile.Cell{
		"a": {hcell("a1", "q", ts, "va1"), hcell("a2", "q", ts+1, "va2")},
		"h": {hcell("h1", "p", ts, "vh1p"), hcell("h1", "q", ts, "vh1q"), hcell("m9", "q", ts-5, "vm9")},
	}
	for name, cells := range files {
		path := writeHFile(t, dir, name, cells)
		err := c.BulkLoadHFiles(ctx, table, cells[0].Row, cells[len(cells)-1].Row, []FamilyPath{{Family: []byte("f"), Path: path}}, token)
		if err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
	}
	check := func(cells []hfile.Cell) {
		t.Helper()
		for _, want := range cells {
			res, err := c.Get(ctx, table, &Get{Row: want.Row, Columns: []Column{{Family: []byte("f"), Qualifiers: [][]byte{want.Qualifier}}}, MaxVersions: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Cells) != 1 || !bytes.Equal(res.Cells[0].Value, want.Value) || res.Cells[0].Timestamp != uint64(want.Timestamp) {
				t.Fatalf("row %s: got %d cells (%+v), want one %q at %d", want.Row, len(res.Cells), res.Cells, want.Value, want.Timestamp)
			}
		}
	}
	for _, cells := range files {
		check(cells)
	}

	// The same cells imported again (a resumed load): still one version
	// each, same values.
	again := writeHFile(t, dir, "h-again", files["h"])
	if err := c.BulkLoadHFiles(ctx, table, []byte("h1"), []byte("m9"), []FamilyPath{{Family: []byte("f"), Path: again}}, token); err != nil {
		t.Fatal(err)
	}
	check(files["h"])

	// A file across the boundary at n: refused by the client's check...
	across := writeHFile(t, dir, "across", []hfile.Cell{hcell("m1", "q", ts, "x"), hcell("o1", "q", ts, "y")})
	err = c.BulkLoadHFiles(ctx, table, []byte("m1"), []byte("o1"), []FamilyPath{{Family: []byte("f"), Path: across}}, token)
	if !errors.Is(err, ErrBulkLoadSplit) {
		t.Fatalf("file across regions: %v", err)
	}
	// ...and after a split the client did not see: the cached region
	// [g,n) is gone, the file's rows now span two regions.
	if err := c.SplitRegion(ctx, table, []byte("j")); err != nil {
		t.Fatal(err)
	}
	split := writeHFile(t, dir, "split", []hfile.Cell{hcell("h5", "q", ts, "x"), hcell("k5", "q", ts, "y")})
	err = c.BulkLoadHFiles(ctx, table, []byte("h5"), []byte("k5"), []FamilyPath{{Family: []byte("f"), Path: split}}, token)
	if !errors.Is(err, ErrBulkLoadSplit) {
		t.Fatalf("file across a new split: %v", err)
	}
	for _, row := range []string{"m1", "h5"} {
		if res, err := c.Get(ctx, table, &Get{Row: []byte(row)}); err != nil || len(res.Cells) != 0 {
			t.Fatalf("a refused file's cells are visible: %v %v", res, err)
		}
	}
	check(files["h"])
	// A path the region server cannot read.
	err = c.BulkLoadHFiles(ctx, table, []byte("a"), []byte("b"), []FamilyPath{{Family: []byte("f"), Path: filepath.Join(dir, "no-such-file")}}, token)
	if !errors.Is(err, ErrBulkLoadUnreadable) {
		t.Fatalf("missing file: %v", err)
	}
	if err := c.CleanupBulkLoad(ctx, table, token); err != nil {
		t.Fatal(err)
	}
}
