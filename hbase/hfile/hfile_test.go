package hfile

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/tiny.hfile")

// tinyCells are the cells of the golden file: two rows, three qualifiers,
// one value longer than a block.
func tinyCells() []Cell {
	return []Cell{
		{Row: []byte("r1"), Family: []byte("c"), Qualifier: []byte("a"), Timestamp: 1700000000000, Value: []byte("one")},
		{Row: []byte("r1"), Family: []byte("c"), Qualifier: []byte("b"), Timestamp: 1700000000000, Value: []byte{}},
		{Row: []byte("r2"), Family: []byte("c"), Qualifier: []byte("a"), Timestamp: 1600000000000, Value: bytes.Repeat([]byte("xy"), 100)},
	}
}

func write(t testing.TB, cfg Config, cells []Cell) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if err := w.Append(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var tinyCfg = Config{BlockSize: 40, BytesPerChecksum: 512, Now: time.UnixMilli(1700000001234)}

// TestGolden pins the bytes of a tiny file (the format is persisted:
// HBase reads it, see TestHBaseReads). Regenerate with -update only after
// checking the new file with scripts/hbase/hfile.sh.
func TestGolden(t *testing.T) {
	got := write(t, tinyCfg, tinyCells())
	path := filepath.Join("testdata", "tiny.hfile")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("tiny.hfile changed (%d bytes, golden %d): the on-disk format changed", len(got), len(want))
	}
	f, err := Read(want)
	if err != nil {
		t.Fatal(err)
	}
	if f.Blocks != 2 {
		t.Errorf("blocks = %d, want 2 (the 40-byte block size closes the first block after the second cell)", f.Blocks)
	}
}

func randCells(r *rand.Rand, n int) []Cell {
	seen := map[string]bool{}
	var cells []Cell
	for len(cells) < n {
		c := Cell{
			Row:       []byte(fmt.Sprintf("row%05d", r.IntN(n))),
			Family:    []byte("c"),
			Qualifier: []byte(fmt.Sprintf("q%d", r.IntN(4))),
			Timestamp: r.Int64N(1 << 41),
			Value:     make([]byte, r.IntN(300)),
		}
		for i := range c.Value {
			c.Value[i] = byte(r.Uint32())
		}
		k := string(appendKey(nil, &c))
		if seen[k] {
			continue
		}
		seen[k] = true
		cells = append(cells, c)
	}
	slices.SortFunc(cells, func(a, b Cell) int { return compareKeys(appendKey(nil, &a), appendKey(nil, &b)) })
	return cells
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name  string
		n     int
		block int
		chunk int
	}{
		{"one cell", 1, 0, 0},
		{"one block", 50, 0, 0},
		{"many blocks", 3000, 4096, 512},
		{"cells bigger than blocks and chunks", 200, 100, 512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cells := randCells(r, tc.n)
			data := write(t, Config{BlockSize: tc.block, BytesPerChecksum: tc.chunk}, cells)
			f, err := Read(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Cells) != len(cells) {
				t.Fatalf("%d cells back, wrote %d", len(f.Cells), len(cells))
			}
			for i := range cells {
				a, b := cells[i], f.Cells[i]
				if !bytes.Equal(a.Row, b.Row) || !bytes.Equal(a.Family, b.Family) || !bytes.Equal(a.Qualifier, b.Qualifier) || a.Timestamp != b.Timestamp || !bytes.Equal(a.Value, b.Value) {
					t.Fatalf("cell %d: got %+v, wrote %+v", i, b, a)
				}
			}
			if tc.block > 0 && f.Blocks < 2 {
				t.Errorf("%d blocks: want several", f.Blocks)
			}
		})
	}
}

func TestAppendErrors(t *testing.T) {
	c := func(row, q string, ts int64) Cell {
		return Cell{Row: []byte(row), Family: []byte("c"), Qualifier: []byte(q), Timestamp: ts, Value: []byte("v")}
	}
	for _, tc := range []struct {
		name  string
		cells []Cell
		want  error
	}{
		{"row order", []Cell{c("b", "q", 1), c("a", "q", 1)}, ErrOrder},
		{"qualifier order", []Cell{c("a", "r", 1), c("a", "q", 1)}, ErrOrder},
		{"timestamps ascend", []Cell{c("a", "q", 1), c("a", "q", 2)}, ErrOrder},
		{"duplicate key", []Cell{c("a", "q", 1), c("a", "q", 1)}, ErrOrder},
		{"empty row", []Cell{c("", "q", 1)}, ErrInvalid},
		{"negative timestamp", []Cell{c("a", "q", -1)}, ErrInvalid},
		{"two families", []Cell{c("a", "q", 1), {Row: []byte("b"), Family: []byte("d"), Timestamp: 1}}, ErrInvalid},
		{"no family", []Cell{{Row: []byte("a")}}, ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWriter(&bytes.Buffer{}, Config{})
			if err != nil {
				t.Fatal(err)
			}
			var last error
			for _, cell := range tc.cells {
				if last = w.Append(cell); last != nil {
					break
				}
			}
			if !errors.Is(last, tc.want) {
				t.Fatalf("got %v, want %v", last, tc.want)
			}
		})
	}
	// Descending timestamps within one column are in order.
	w, _ := NewWriter(&bytes.Buffer{}, Config{})
	if err := w.Append(c("a", "q", 2)); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(c("a", "q", 1)); err != nil {
		t.Fatalf("newer before older version: %v", err)
	}
	w, _ = NewWriter(&bytes.Buffer{}, Config{})
	if err := w.Close(); !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty close: %v", err)
	}
	if _, err := NewWriter(&bytes.Buffer{}, Config{BytesPerChecksum: 10}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad config: %v", err)
	}
}

// TestReadRejectsDamage flips bytes all over a file: every flip must be
// caught (checksums cover every block; the trailer is parsed strictly),
// never panic.
func TestReadRejectsDamage(t *testing.T) {
	data := write(t, tinyCfg, tinyCells())
	f, err := Read(data)
	if err != nil {
		t.Fatal(err)
	}
	blocksEnd := len(data) - trailerSize
	for i := 0; i < blocksEnd; i++ {
		d := bytes.Clone(data)
		d[i] ^= 0x41
		if _, err := Read(d); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at %d of %d (blocks): err %v", i, blocksEnd, err)
		}
	}
	for _, n := range []int{0, 1, trailerSize - 1, len(data) - 1} {
		if _, err := Read(data[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	_ = f
}

func TestVLong(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 127, -112, -113, 128, 255, 256, 1 << 20, -1 << 20, 1<<63 - 1, -1 << 63} {
		b := appendVLong(nil, v)
		got, n, err := readVLong(b)
		if err != nil || got != v || n != len(b) {
			t.Errorf("%d: encoded %x, read %d (%d bytes, err %v)", v, b, got, n, err)
		}
	}
}

func FuzzRead(f *testing.F) {
	data := write(f, tinyCfg, tinyCells())
	f.Add(data)
	f.Add(data[:len(data)-1])
	f.Add(bytes.Repeat([]byte{0}, trailerSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Read(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		// Whatever parses must re-encode to cells in order.
		for i := 1; i < len(file.Cells); i++ {
			a, c := file.Cells[i-1], file.Cells[i]
			if compareKeys(appendKey(nil, &a), appendKey(nil, &c)) >= 0 {
				t.Fatal("cells out of order")
			}
		}
	})
}

func BenchmarkWrite(b *testing.B) {
	cells := randCells(rand.New(rand.NewPCG(3, 4)), 10000)
	var bytesPer int
	for _, c := range cells {
		bytesPer += len(c.Row) + len(c.Qualifier) + len(c.Value)
	}
	b.SetBytes(int64(bytesPer))
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		w, _ := NewWriter(&buf, Config{})
		for _, c := range cells {
			if err := w.Append(c); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(cells))*float64(b.N)/b.Elapsed().Seconds(), "cells/s")
}
