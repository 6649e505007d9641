package bulkload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCellRunsMergeKeepsLast: cells spread over several runs, with keys
// repeated within and across runs, merge into each key once, in key order,
// with the value of its last occurrence in input order (the map oracle),
// for several run counts (the loser tree's shapes), some runs empty.
func TestCellRunsMergeKeepsLast(t *testing.T) {
	for _, runs := range []int{1, 2, 3, 4, 5, 7, 9, 16} {
		t.Run(fmt.Sprint(runs), func(t *testing.T) { testCellRunsMerge(t, runs) })
	}
}

func testCellRunsMerge(t *testing.T, runs int) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, uint64(runs)))
	want := map[string]string{}
	var paths []string
	seq := 0
	for run := range runs {
		var c cellBuf
		size := 500 + 3*run // remainders of writeCellRun's batches of 16
		if run%3 == 2 {
			size = 0
		}
		for range size {
			row := make([]byte, r.IntN(10)) // short rows: prefixes of others, 0x00 bytes
			for i := range row {
				row[i] = byte(r.IntN(3))
			}
			qual := []byte{byte(r.IntN(4))}
			val := fmt.Appendf(nil, "v%d", seq)
			seq++
			c.add(row, qual, val)
			want[string(row)+"\xff|"+string(qual)] = string(val)
		}
		c.sort(nil)
		p := filepath.Join(dir, fmt.Sprintf("run%d", run))
		if _, err := writeCellRun(p, &c); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	m, err := newCellMerger(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	var prevRow, prevQual []byte
	n, dups := 0, 0
	for {
		row, qual, val, d, ok, err := m.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if n > 0 && cellKeyCmp(prevRow, prevQual, row, qual) >= 0 {
			t.Fatalf("cell %x/%x not after %x/%x", row, qual, prevRow, prevQual)
		}
		k := string(row) + "\xff|" + string(qual)
		if want[k] != string(val) {
			t.Fatalf("cell %x/%x = %s, want the last value %s", row, qual, val, want[k])
		}
		prevRow, prevQual = bytes.Clone(row), bytes.Clone(qual)
		n++
		dups += d
	}
	if n != len(want) || n+dups != seq {
		t.Errorf("%d cells (%d duplicates dropped), want %d of %d", n, dups, len(want), seq)
	}
}

// FuzzCellRunReader: arbitrary bytes never panic the cell-run decoder, and
// what it decodes is in key order.
func FuzzCellRunReader(f *testing.F) {
	dir := f.TempDir()
	p := filepath.Join(dir, "seed")
	var c cellBuf
	c.add([]byte("a"), []byte("q"), []byte("v1"))
	c.add([]byte("a\x00"), []byte(""), nil)
	c.add([]byte("b"), []byte("q"), []byte("v3"))
	c.sort(nil)
	if _, err := writeCellRun(p, &c); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(p)
	f.Add(seed)
	f.Add(seed[:len(seed)-3])
	f.Add([]byte("SDXRUN02c"))
	f.Add(append([]byte("SDXRUN02c"), 1, 0xff, 0xff, 0xff, 0xff, 0x0f))
	f.Add(append([]byte("SDXRUN02c"), 1, 6, 1, 'a', 1, 'q', 0xff, 0x01, 0, 0, 0, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := newCellRunReader("fuzz", bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrRun) {
				t.Fatalf("error %v does not wrap ErrRun", err)
			}
			return
		}
		var prevRow, prevQual []byte
		for i := 0; ; i++ {
			ok, err := r.next()
			if err != nil {
				if !errors.Is(err, ErrRun) {
					t.Fatalf("error %v does not wrap ErrRun", err)
				}
				return
			}
			if !ok {
				return
			}
			if i > 0 && cellKeyCmp(prevRow, prevQual, r.row, r.qual) > 0 {
				t.Fatalf("decoded cells out of order")
			}
			prevRow, prevQual = bytes.Clone(r.row), bytes.Clone(r.qual)
		}
	})
}

// BenchmarkWriteCellRun: one spill's worth of fp cells (random rows, so the
// sorted order visits the arena at random) written as a run.
func BenchmarkWriteCellRun(b *testing.B) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(9, 9))
	var c cellBuf
	var row [8]byte
	val := make([]byte, 30)
	for i := range n {
		binary.BigEndian.PutUint64(row[:], r.Uint64())
		c.add(row[:], fmt.Appendf(nil, "doc-%012d", i), val)
	}
	c.sort(nil)
	p := filepath.Join(b.TempDir(), "run")
	for b.Loop() {
		if _, err := writeCellRun(p, &c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/cell")
}

// BenchmarkCellSort sorts a spill's worth of cells: fp cells (random
// 8-byte rows) and docs cells (rows "d0", "d1", ... in a random order).
func BenchmarkCellSort(b *testing.B) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(5, 5))
	for _, kind := range []string{"fp", "docs"} {
		b.Run(kind, func(b *testing.B) {
			var c cellBuf
			var row [8]byte
			for i := range n {
				if kind == "fp" {
					binary.BigEndian.PutUint64(row[:], r.Uint64())
					c.add(row[:], fmt.Appendf(nil, "d%d", i), nil)
				} else {
					c.add(fmt.Appendf(nil, "d%d", r.IntN(1e7)), []byte("d"), nil)
				}
			}
			orig := slices.Clone(c.refs)
			var scratch []cellRef
			for b.Loop() {
				copy(c.refs, orig)
				scratch = c.sort(scratch)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/cell")
		})
	}
}

// TestCellSort: the radix sort orders cells as a comparison sort by (row,
// qualifier, input order) does, for rows of random bytes (0x00 and 0xff
// included), short rows that prefix others, long rows sharing their first
// 8 bytes, and one row's many cells.
func TestCellSort(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	alphabets := map[string][]byte{"any": nil, "edges": {0, 1, 0xfe, 0xff}, "digits": []byte("0123456789")}
	for name, alpha := range alphabets {
		for _, n := range []int{2, 40, 49, 1000, 70000} {
			var c cellBuf
			for i := range n {
				row := make([]byte, r.IntN(14))
				if i%7 == 0 {
					row = append([]byte("doc-0000"), row...) // shared 8-byte prefix
				}
				for k := range row {
					if alpha == nil {
						row[k] = byte(r.Uint32())
					} else if k >= 8 || i%7 != 0 {
						row[k] = alpha[r.IntN(len(alpha))]
					}
				}
				if i%50 == 0 {
					row = []byte("hot") // one row's many cells
				}
				c.add(row, []byte{byte(r.IntN(3))}, fmt.Appendf(nil, "%d", i))
			}
			want := slices.Clone(c.refs)
			slices.SortStableFunc(want, func(a, b cellRef) int {
				ar, aq, _ := c.parts(a)
				br, bq, _ := c.parts(b)
				return cellKeyCmp(ar, aq, br, bq)
			})
			c.sort(nil)
			if !slices.Equal(c.refs, want) {
				t.Fatalf("%s, %d cells: order differs from the stable comparison sort", name, n)
			}
		}
	}
}

// BenchmarkCellMerger merges 10 runs (a 10^7 load spills 10 times) or 43
// (10^8 at 2 GiB) of 1.3 M fp cells in all (random 8-byte rows, ids as
// qualifiers), file reading and block decoding included.
func BenchmarkCellMerger(b *testing.B) {
	for _, runs := range []int{10, 43} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) { benchmarkCellMerger(b, runs) })
	}
}

func benchmarkCellMerger(b *testing.B, runs int) {
	dir := b.TempDir()
	r := rand.New(rand.NewPCG(10, 10))
	var paths []string
	val := make([]byte, 17)
	n := 0
	per := (10 << 17) / runs
	for i := range runs {
		var c cellBuf
		var row [8]byte
		for j := range per {
			binary.BigEndian.PutUint64(row[:], r.Uint64())
			c.add(row[:], fmt.Appendf(nil, "d%d", i*per+j), val)
		}
		c.sort(nil)
		p := filepath.Join(dir, runName(i, "fpcells"))
		if _, err := writeCellRun(p, &c); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
		n += len(c.refs)
	}
	for b.Loop() {
		m, err := newCellMerger(paths)
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, _, _, _, ok, err := m.next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
		}
		m.close()
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(n), "ns/cell")
}
