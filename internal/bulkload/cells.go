package bulkload

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/bits"
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
// Cell runs use the run file format of runfile.go with cell records.
// Cells are in (row, qualifier) order; cells with the same key are in input
// order, and across runs a later run holds later input, so the merge keeps
// the last one of equal keys, as a sequence of puts would.

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

// cellBuf collects one table's cells between spills: a spill is due before
// refs would pass maxRefs or once arena reaches maxArena.
type cellBuf struct {
	arena             []byte
	refs              []cellRef
	maxRefs, maxArena int
	sink              byte // touch's loads end here
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

// sort orders the cells by (row, qualifier, input order): an MSD radix
// sort on the 8-byte row prefix (bytes where all cells of a bucket agree
// cost a counting pass, not a placement), then a comparison sort of each
// run of equal prefixes (rows longer than 8 bytes that share them, or one
// row's several cells). scratch is reused across calls. Random 8-byte rows
// (the fp cells) are placed in two passes where an LSD sort makes eight
// (BenchmarkCellSort).
func (c *cellBuf) sort(scratch []cellRef) []cellRef {
	refs := c.refs
	if len(refs) < 2 {
		return scratch
	}
	if cap(scratch) < len(refs) {
		scratch = make([]cellRef, len(refs))
	}
	scratch = scratch[:len(refs)]
	msdSortPrefixes(refs, scratch, 56)
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

// msdSortPrefixes sorts a by pfx, looking at the bytes from bit shift
// down (the bytes above it are equal across a); tmp is scratch of a's
// length. Cells of equal prefixes end in any order.
func msdSortPrefixes(a, tmp []cellRef, shift uint) {
	for {
		if len(a) <= 48 {
			for i := 1; i < len(a); i++ {
				x := a[i]
				j := i
				for j > 0 && x.pfx < a[j-1].pfx {
					a[j] = a[j-1]
					j--
				}
				a[j] = x
			}
			return
		}
		var at [257]int
		for i := range a {
			at[int(byte(a[i].pfx>>shift))+1]++
		}
		if at[int(byte(a[0].pfx>>shift))+1] == len(a) {
			// One value at this byte: on to the next without moving.
			if shift == 0 {
				return
			}
			shift -= 8
			continue
		}
		for d := 1; d <= 256; d++ {
			at[d] += at[d-1]
		}
		bounds := at
		for i := range a {
			d := byte(a[i].pfx >> shift)
			tmp[at[d]] = a[i]
			at[d]++
		}
		copy(a, tmp)
		if shift == 0 {
			return
		}
		for d := range 256 {
			lo, hi := bounds[d], bounds[d+1]
			if hi-lo > 1 {
				msdSortPrefixes(a[lo:hi], tmp[lo:hi], shift-8)
			}
		}
		return
	}
}

func cellKeyCmp(ar, aq, br, bq []byte) int {
	if x := bytes.Compare(ar, br); x != 0 {
		return x
	}
	return bytes.Compare(aq, bq)
}

// writeCellRun writes c's cells (sorted) to path, via a temporary file
// renamed into place (syncRuns makes it durable before a checkpoint names
// it).
func writeCellRun(path string, c *cellBuf) (int64, error) {
	w, err := createRun(path, kindCells)
	if err != nil {
		return 0, err
	}
	refs := c.refs
	var sink byte
	for i, r := range refs {
		if i%touchAhead == 0 && i+touchAhead/2 < len(refs) {
			sink += c.touch(refs[i+touchAhead/2:])
		}
		row, qual, val := c.parts(r)
		w.block = binary.AppendUvarint(w.block, uint64(len(row)))
		w.block = append(w.block, row...)
		w.block = binary.AppendUvarint(w.block, uint64(len(qual)))
		w.block = append(w.block, qual...)
		w.block = binary.AppendUvarint(w.block, uint64(len(val)))
		w.block = append(w.block, val...)
		if err := w.endRecord(); err != nil {
			return 0, w.abort(err)
		}
	}
	c.sink = sink
	return w.finish()
}

// touchAhead is how many cells writeCellRun's gather loads ahead of the
// one it copies.
const touchAhead = 16

// touch loads the first and last byte of the first touchAhead cells of
// refs and returns their sum (kept, so the loads are not dropped). In
// sorted order the cells are at random places of an arena far larger than
// the caches, and a copy that waits for one cache miss at a time spent
// most of writeCellRun's time: these loads are independent of each other,
// so the CPU overlaps their misses, and the copies find the lines in the
// cache.
func (c *cellBuf) touch(refs []cellRef) byte {
	var s byte
	refs = refs[:min(len(refs), touchAhead)]
	for _, r := range refs {
		end := r.off + r.rl + r.ql + r.vl
		if end > r.off {
			s += c.arena[r.off] + c.arena[end-1]
		}
	}
	return s
}

// cellRunReader streams one cell run, checking order. The slices of the
// current cell point into the reader's block buffers: they stay valid
// until the second call of next after the one that returned them (the
// blocks alternate between two buffers).
type cellRunReader struct {
	br             *blockReader
	block          []byte // the current block's payload not yet decoded
	left           int    // records left in block
	row, qual, val []byte
	// pfx is row's first 8 bytes (rowPrefix8): it orders most pairs of
	// cells in the merge and the order check without comparing slices.
	pfx     uint64
	started bool
}

func openCellRun(path string) (*cellRunReader, error) {
	br, err := openBlocks(path, kindCells)
	if err != nil {
		return nil, err
	}
	return &cellRunReader{br: br}, nil
}

func newCellRunReader(name string, rd io.Reader) (*cellRunReader, error) {
	br, err := newBlockReader(name, rd, kindCells)
	if err != nil {
		return nil, err
	}
	return &cellRunReader{br: br}, nil
}

// part takes one length-prefixed part off the block.
func (r *cellRunReader) part() ([]byte, error) {
	n, k := binary.Uvarint(r.block)
	if k <= 0 {
		return nil, r.br.errorf("truncated cell")
	}
	if n > maxCellPart || n > uint64(len(r.block)-k) {
		return nil, r.br.errorf("cell part of %d bytes", n)
	}
	p := r.block[k : k+int(n) : k+int(n)]
	r.block = r.block[k+int(n):]
	return p, nil
}

// next advances to the next cell; ok is false at the end (after every
// block's checksum and the record count were verified).
func (r *cellRunReader) next() (ok bool, err error) {
	if r.left == 0 {
		m, block, err := r.br.next()
		if err != nil || m == 0 {
			return false, err
		}
		r.block, r.left = block, m
	}
	row, err := r.part()
	if err != nil {
		return false, err
	}
	qual, err := r.part()
	if err != nil {
		return false, err
	}
	val, err := r.part()
	if err != nil {
		return false, err
	}
	pfx := rowPrefix8(row)
	if r.started && (pfx < r.pfx || pfx == r.pfx && cellKeyCmp(r.row, r.qual, row, qual) > 0) {
		return false, r.br.errorf("cells out of order")
	}
	r.left--
	if r.left == 0 && len(r.block) != 0 {
		return false, r.br.errorf("%d bytes after the block's records", len(r.block))
	}
	r.row, r.qual, r.val, r.pfx, r.started = row, qual, val, pfx, true
	return true, nil
}

func (r *cellRunReader) close() error { return r.br.close() }

// cellMerger is a k-way merge of cell runs that yields each key once, with
// the value of its last occurrence (the latest input). It is a loser tree
// like merger (runs.go), ordered by (row, qualifier, run number): equal
// keys come out in run order, i.e. input order.
type cellMerger struct {
	rs   []*cellRunReader // every run, by run number (= leaf)
	done []bool           // done[i]: run i is exhausted
	pfx  []uint64         // pfx[i]: run i's current row prefix; MaxUint64 once done
	tree []int            // tree[i], 1 <= i < len(rs): the losing leaf at node i
	win  int              // the leaf holding the smallest cell
	live int              // runs not exhausted
	row  []byte
	q    []byte
	v    []byte
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
		m.done = append(m.done, !ok)
		m.pfx = append(m.pfx, math.MaxUint64)
		if ok {
			m.live++
			m.pfx[len(m.pfx)-1] = r.pfx
		}
	}
	if m.live > 0 {
		m.tree = make([]int, len(m.rs))
		m.win = m.build(1)
	}
	return m, nil
}

// beats reports whether leaf a's cell comes before leaf b's.
func (m *cellMerger) beats(a, b int) bool {
	if m.done[b] {
		return !m.done[a]
	}
	if m.done[a] {
		return false
	}
	x, y := m.rs[a], m.rs[b]
	if x.pfx != y.pfx {
		return x.pfx < y.pfx
	}
	if c := cellKeyCmp(x.row, x.qual, y.row, y.qual); c != 0 {
		return c < 0
	}
	return a < b
}

// build plays the matches below node and returns their winner.
func (m *cellMerger) build(node int) int {
	k := len(m.rs)
	if node >= k {
		return node - k
	}
	a, b := m.build(2*node), m.build(2*node+1)
	if m.beats(b, a) {
		a, b = b, a
	}
	m.tree[node] = b
	return a
}

// pop takes the smallest cell into m.row, m.q, m.v and advances its run.
// The slices stay the run's: valid until that run advances again (the
// cell runs' two alternating block buffers), which the merger does only
// after it has replaced them or returned them to a caller that is done
// with them.
func (m *cellMerger) pop() error {
	w := m.win
	top := m.rs[w]
	m.row, m.q, m.v = top.row, top.qual, top.val
	ok, err := top.next()
	if err != nil {
		return err
	}
	m.pfx[w] = top.pfx
	if !ok {
		m.done[w] = true
		m.pfx[w] = math.MaxUint64
		m.live--
	}
	// Replay w's path. Where the two rows' first 8 bytes differ (nearly
	// every match of the fp cells' random rows) the match is branch-free,
	// as in merger.next: a coin toss as a branch costs more than the
	// comparison. Equal prefixes (the docs cells' ids, exhausted runs)
	// take beats.
	wp := m.pfx[w]
	for node := (w + len(m.rs)) / 2; node > 0; node /= 2 {
		l := m.tree[node]
		lp := m.pfx[l]
		if lp == wp {
			if m.beats(l, w) {
				m.tree[node], w = w, l
			}
			continue
		}
		_, b := bits.Sub64(lp, wp, 0) // 1: lp < wp
		mask := -b
		x := (uint64(w) ^ uint64(l)) & mask
		m.tree[node] = int(uint64(l) ^ x)
		w = int(uint64(w) ^ x)
		wp ^= (wp ^ lp) & mask
	}
	m.win = w
	return nil
}

// next returns the next distinct key and its latest value; the slices are
// valid until the next call. dups counts the earlier occurrences dropped.
func (m *cellMerger) next() (row, qual, val []byte, dups int, ok bool, err error) {
	if m.live == 0 {
		return nil, nil, nil, 0, false, nil
	}
	if err := m.pop(); err != nil {
		return nil, nil, nil, 0, false, err
	}
	for m.live > 0 {
		top := m.rs[m.win]
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
	m.rs, m.live = nil, 0
	return errors.Join(errs...)
}
