package hbase

import (
	"encoding/binary"
	"testing"
)

// FuzzSkipCells: splitting a cell block after n cells never panics, and
// what it returns covers the input exactly.
func FuzzSkipCells(f *testing.F) {
	two := appendCellKV(appendCellKV(nil, &Cell{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Value: []byte("v")}),
		&Cell{Row: []byte("s"), Family: []byte("f"), Value: make([]byte, 300)})
	f.Add(two, 2)
	f.Add(two, 1)
	f.Add(two, 3)
	f.Add([]byte{0, 0, 0, 9, 1}, 1)
	f.Add(binary.BigEndian.AppendUint32(nil, 0xffffffff), 1)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, buf []byte, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		cells, rest, err := skipCells(buf, n)
		if err != nil {
			return
		}
		if len(cells)+len(rest) != len(buf) {
			t.Fatalf("split %d + %d bytes of %d", len(cells), len(rest), len(buf))
		}
		cb := &cellBlock{buf: cells}
		for range n {
			if len(cb.buf) < 4 {
				t.Fatalf("fewer than %d cells in the split part", n)
			}
			l := binary.BigEndian.Uint32(cb.buf)
			cb.buf = cb.buf[4+l:]
		}
		if len(cb.buf) != 0 {
			t.Fatalf("%d bytes after %d cells", len(cb.buf), n)
		}
	})
}
