package bulkload

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// The fp and docs cells go through the same external sort as the index
// entries: each spill writes them as cell runs, sorted by (row,
// qualifier), and the merge phase writes every table in key order (as
// sorted string tables ingested by the embedded store, or as batches of
// puts). Rows are compared bytewise and then qualifiers bytewise, which is
// the key order of both stores (the embedded store's escaped keys keep it,
// HBase sorts by row then qualifier).
//
// Cell run layout (version 1):
//
//	bytes 0..7   magic "SDXCEL01"
//	uvarint      n, the number of cells
//	n times      uvarint len(row), row, uvarint len(qualifier), qualifier,
//	             uvarint len(value), value
//	4 bytes      CRC-32C of everything between the magic and this trailer,
//	             big-endian
//
// Cells are in (row, qualifier) order; cells with the same key are in input
// order, and across runs a later run holds later input, so the merge keeps
// the last one of equal keys, as a sequence of puts would.

var cellRunMagic = []byte("SDXCEL01")

// maxCellPart bounds each length in a cell run (a corrupt length must not
// allocate gigabytes).
const maxCellPart = 16 << 20

// cellRef is one cell of a cellBuf: its bytes are arena[off:off+rl+ql+vl]
// (row, qualifier, value); pfx is the row's first 8 bytes, big-endian and
// zero-padded, which decides most comparisons without touching the arena.
type cellRef struct {
	pfx        uint64
	off        uint32
	rl, ql, vl uint32
}

// cellBuf collects one table's cells between spills.
type cellBuf struct {
	arena []byte
	refs  []cellRef
}

func rowPrefix8(row []byte) uint64 {
	if len(row) >= 8 {
		return binary.BigEndian.Uint64(row)
	}
	var b [8]byte
	copy(b[:], row)
	return binary.BigEndian.Uint64(b[:])
}

func (c *cellBuf) add(row, qual, val []byte) {
	off := len(c.arena)
	c.arena = append(c.arena, row...)
	c.arena = append(c.arena, qual...)
	c.arena = append(c.arena, val...)
	c.refs = append(c.refs, cellRef{pfx: rowPrefix8(row), off: uint32(off), rl: uint32(len(row)), ql: uint32(len(qual)), vl: uint32(len(val))})
}

func (c *cellBuf) parts(r cellRef) (row, qual, val []byte) {
	a := c.arena[r.off:]
	return a[:r.rl], a[r.rl : r.rl+r.ql], a[r.rl+r.ql : r.rl+r.ql+r.vl]
}

func (c *cellBuf) reset() { c.arena, c.refs = c.arena[:0], c.refs[:0] }

// sort orders the cells by (row, qualifier, input order): a stable LSD
// radix sort on the 8-byte row prefix (skipping byte positions where all
// cells agree), then a comparison sort of each run of equal prefixes (rows
// longer than 8 bytes that share them, or one row's several cells).
// scratch is reused across calls.
func (c *cellBuf) sort(scratch []cellRef) []cellRef {
	refs := c.refs
	if len(refs) < 2 {
		return scratch
	}
	if cap(scratch) < len(refs) {
		scratch = make([]cellRef, len(refs))
	}
	scratch = scratch[:len(refs)]
	var counts [8][256]int
	for i := range refs {
		p := refs[i].pfx
		for b := range 8 {
			counts[b][byte(p>>(8*b))]++
		}
	}
	src, dst := refs, scratch
	for pass := range 8 {
		shift := uint(8 * pass)
		cnt := &counts[pass]
		if cnt[byte(src[0].pfx>>shift)] == len(src) {
			continue
		}
		pos := 0
		for i, n := range cnt {
			cnt[i] = pos
			pos += n
		}
		for i := range src {
			b := byte(src[i].pfx >> shift)
			dst[cnt[b]] = src[i]
			cnt[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &refs[0] {
		copy(refs, src)
	}
	full := func(a, b cellRef) int {
		ar, aq, _ := c.parts(a)
		br, bq, _ := c.parts(b)
		if x := cellKeyCmp(ar, aq, br, bq); x != 0 {
			return x
		}
		return cmp.Compare(a.off, b.off) // the arena grows in input order
	}
	for i := 0; i < len(refs); {
		j := i + 1
		for j < len(refs) && refs[j].pfx == refs[i].pfx {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(refs[i:j], full)
		}
		i = j
	}
	return scratch
}

func cellKeyCmp(ar, aq, br, bq []byte) int {
	if x := bytes.Compare(ar, br); x != 0 {
		return x
	}
	return bytes.Compare(aq, bq)
}

// writeCellRun writes c's cells (sorted) to path, via a temporary file that
// is synced and renamed.
func writeCellRun(path string, c *cellBuf) (int64, error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int64, error) {
		return 0, errors.Join(err, f.Close(), os.Remove(tmp))
	}
	bw := bufio.NewWriterSize(f, 4<<20)
	var crc uint32
	size := int64(len(cellRunMagic))
	if _, err := bw.Write(cellRunMagic); err != nil {
		return fail(err)
	}
	buf := binary.AppendUvarint(make([]byte, 0, 256<<10), uint64(len(c.refs)))
	for _, r := range c.refs {
		if len(buf) > 200<<10 {
			crc = crc32.Update(crc, castagnoli, buf)
			if _, err := bw.Write(buf); err != nil {
				return fail(err)
			}
			size += int64(len(buf))
			buf = buf[:0]
		}
		row, qual, val := c.parts(r)
		buf = binary.AppendUvarint(buf, uint64(len(row)))
		buf = append(buf, row...)
		buf = binary.AppendUvarint(buf, uint64(len(qual)))
		buf = append(buf, qual...)
		buf = binary.AppendUvarint(buf, uint64(len(val)))
		buf = append(buf, val...)
	}
	crc = crc32.Update(crc, castagnoli, buf)
	buf = binary.BigEndian.AppendUint32(buf, crc)
	if _, err := bw.Write(buf); err != nil {
		return fail(err)
	}
	size += int64(len(buf))
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return 0, errors.Join(err, os.Remove(tmp))
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, err
	}
	return size, syncDir(filepath.Dir(path))
}

// cellRunReader streams one cell run, checking order and, at the end, the
// checksum. It decodes from a block buffer and checksums whole blocks. The
// slices of the current cell are the reader's and valid until the next
// call.
type cellRunReader struct {
	name          string
	rd            io.Reader
	buf           []byte // buf[pos:end] is read but not decoded
	pos, end      int
	eof           bool
	crc           uint32 // of the bytes before buf[pos] (after the magic)
	left          uint64
	row, qual, vl []byte
	spareRow      []byte // the buffers of the cell before row and qual
	spareQual     []byte
	started       bool
	c             io.Closer
}

func openCellRun(path string) (*cellRunReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newCellRunReader(path, f)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	r.c = f
	return r, nil
}

func newCellRunReader(name string, rd io.Reader) (*cellRunReader, error) {
	r := &cellRunReader{name: name, rd: rd, buf: make([]byte, 1<<20)}
	magic := make([]byte, len(cellRunMagic))
	if _, err := io.ReadFull(rd, magic); err != nil || !bytes.Equal(magic, cellRunMagic) {
		return nil, fmt.Errorf("%w: %s: bad magic", ErrRun, name)
	}
	n, err := r.uvarint()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: count: %v", ErrRun, name, err)
	}
	r.left = n
	return r, nil
}

// ensure makes buf[pos:end] hold at least n bytes, unless the input ends
// first: it checksums the decoded bytes, moves the rest to the front
// (growing the buffer for a big cell) and reads.
func (r *cellRunReader) ensure(n int) error {
	if r.end-r.pos >= n || r.eof {
		return nil
	}
	r.crc = crc32.Update(r.crc, castagnoli, r.buf[:r.pos])
	if n > len(r.buf) {
		r.buf = append(r.buf[:r.end], make([]byte, n-len(r.buf))...)
	}
	m := copy(r.buf, r.buf[r.pos:r.end])
	r.pos, r.end = 0, m
	for r.end < n && !r.eof {
		k, err := r.rd.Read(r.buf[r.end:])
		r.end += k
		if err == io.EOF {
			r.eof = true
		} else if err != nil {
			return err
		}
	}
	return nil
}

func (r *cellRunReader) uvarint() (uint64, error) {
	if err := r.ensure(binary.MaxVarintLen64); err != nil {
		return 0, err
	}
	v, k := binary.Uvarint(r.buf[r.pos:r.end])
	if k <= 0 {
		return 0, errors.New("bad varint")
	}
	r.pos += k
	return v, nil
}

// part reads one length-prefixed part into dst[:0].
func (r *cellRunReader) part(dst []byte) ([]byte, error) {
	n, err := r.uvarint()
	if err != nil {
		return nil, err
	}
	if n > maxCellPart {
		return nil, fmt.Errorf("part of %d bytes", n)
	}
	if err := r.ensure(int(n)); err != nil {
		return nil, err
	}
	if r.end-r.pos < int(n) {
		return nil, io.ErrUnexpectedEOF
	}
	dst = append(dst[:0], r.buf[r.pos:r.pos+int(n)]...)
	r.pos += int(n)
	return dst, nil
}

// next advances to the next cell; ok is false at the end (after the checksum
// was verified).
func (r *cellRunReader) next() (ok bool, err error) {
	if r.left == 0 {
		if err := r.ensure(5); err != nil {
			return false, fmt.Errorf("%w: %s: %v", ErrRun, r.name, err)
		}
		r.crc = crc32.Update(r.crc, castagnoli, r.buf[:r.pos])
		rest := r.buf[r.pos:r.end]
		if len(rest) < 4 {
			return false, fmt.Errorf("%w: %s: missing checksum", ErrRun, r.name)
		}
		if binary.BigEndian.Uint32(rest) != r.crc {
			return false, fmt.Errorf("%w: %s: checksum mismatch", ErrRun, r.name)
		}
		if len(rest) > 4 {
			return false, fmt.Errorf("%w: %s: trailing bytes", ErrRun, r.name)
		}
		r.pos = r.end
		return false, nil
	}
	prevRow, prevQual := r.row, r.qual
	// The previous key is needed for the order check: read into the spare
	// buffers and swap.
	row, err := r.part(r.spareRow)
	if err != nil {
		return false, fmt.Errorf("%w: %s: truncated cell: %v", ErrRun, r.name, err)
	}
	qual, err := r.part(r.spareQual)
	if err != nil {
		return false, fmt.Errorf("%w: %s: truncated cell: %v", ErrRun, r.name, err)
	}
	val, err := r.part(r.vl)
	if err != nil {
		return false, fmt.Errorf("%w: %s: truncated cell: %v", ErrRun, r.name, err)
	}
	if r.started && cellKeyCmp(prevRow, prevQual, row, qual) > 0 {
		return false, fmt.Errorf("%w: %s: cells out of order", ErrRun, r.name)
	}
	r.spareRow, r.spareQual = prevRow, prevQual
	r.row, r.qual, r.vl, r.started = row, qual, val, true
	r.left--
	return true, nil
}

func (r *cellRunReader) close() error {
	if r.c == nil {
		return nil
	}
	return r.c.Close()
}

// cellMerger is a k-way merge of cell runs that yields each key once, with
// the value of its last occurrence (the latest input).
type cellMerger struct {
	rs []*cellRunReader // live readers; index = run number order kept in seq
	// h is a binary heap of indexes into rs by (row, qualifier, run).
	h   []int
	row []byte
	q   []byte
	v   []byte
	// onDropped, when set, sees each earlier occurrence of a key that
	// next drops (the slices are valid during the call).
	onDropped func(row, qual, val []byte)
}

func newCellMerger(paths []string) (*cellMerger, error) {
	m := &cellMerger{}
	for _, p := range paths {
		r, err := openCellRun(p)
		if err != nil {
			return nil, errors.Join(err, m.close())
		}
		m.rs = append(m.rs, r)
		ok, err := r.next()
		if err != nil {
			return nil, errors.Join(err, m.close())
		}
		if ok {
			m.h = append(m.h, len(m.rs)-1)
		}
	}
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

func (m *cellMerger) less(i, j int) bool {
	a, b := m.rs[m.h[i]], m.rs[m.h[j]]
	if c := cellKeyCmp(a.row, a.qual, b.row, b.qual); c != 0 {
		return c < 0
	}
	return m.h[i] < m.h[j]
}

func (m *cellMerger) down(i int) {
	n := len(m.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && m.less(r, l) {
			j = r
		}
		if !m.less(j, i) {
			return
		}
		m.h[i], m.h[j] = m.h[j], m.h[i]
		i = j
	}
}

// pop copies the smallest cell into m.row, m.q, m.v and advances its run.
func (m *cellMerger) pop() error {
	top := m.rs[m.h[0]]
	m.row = append(m.row[:0], top.row...)
	m.q = append(m.q[:0], top.qual...)
	m.v = append(m.v[:0], top.vl...)
	ok, err := top.next()
	if err != nil {
		return err
	}
	if !ok {
		m.h[0] = m.h[len(m.h)-1]
		m.h = m.h[:len(m.h)-1]
	}
	if len(m.h) > 0 {
		m.down(0)
	}
	return nil
}

// next returns the next distinct key and its latest value; the slices are
// valid until the next call. dups counts the earlier occurrences dropped.
func (m *cellMerger) next() (row, qual, val []byte, dups int, ok bool, err error) {
	if len(m.h) == 0 {
		return nil, nil, nil, 0, false, nil
	}
	if err := m.pop(); err != nil {
		return nil, nil, nil, 0, false, err
	}
	for len(m.h) > 0 {
		top := m.rs[m.h[0]]
		if !bytes.Equal(top.row, m.row) || !bytes.Equal(top.qual, m.q) {
			break
		}
		if m.onDropped != nil {
			m.onDropped(m.row, m.q, m.v)
		}
		if err := m.pop(); err != nil {
			return nil, nil, nil, 0, false, err
		}
		dups++
	}
	return m.row, m.q, m.v, dups, true, nil
}

func (m *cellMerger) close() error {
	var errs []error
	for _, r := range m.rs {
		errs = append(errs, r.close())
	}
	m.rs, m.h = nil, nil
	return errors.Join(errs...)
}
