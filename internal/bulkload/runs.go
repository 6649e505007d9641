package bulkload

import (
	"cmp"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"slices"
)

// Entries are spilled as runs of entry records (runfile.go has the
// format).

type entry struct {
	key uint64
	aux uint32
}

func entryCmp(a, b entry) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.aux, b.aux)
}

// sortEntries sorts by (key, aux): an LSD radix sort, the aux bytes first
// and then the key bytes (each pass stable), skipping the byte positions
// where every entry has the same byte (the high bytes of the bucket, and
// the top bytes of keys when a spill holds one row range).
//
// Big buffers of well-spread keys (every spill of a large load: keys are
// permuted fingerprints or hashes) take msdSortEntries instead: two passes
// instead of nine or ten.
func sortEntries(es []entry, scratch []entry) []entry {
	if len(es) < 1<<10 {
		slices.SortFunc(es, entryCmp)
		return scratch
	}
	if len(es) >= msdMinEntries {
		return msdSortEntries(es, scratch)
	}
	return lsdSortEntries(es, scratch)
}

// lsdSortEntries is the LSD radix sort of sortEntries.
func lsdSortEntries(es []entry, scratch []entry) []entry {
	if cap(scratch) < len(es) {
		scratch = make([]entry, len(es))
	}
	scratch = scratch[:len(es)]
	// One counting pass for all 12 byte positions.
	var counts [12][256]int
	for i := range es {
		k, a := es[i].key, es[i].aux
		for b := range 4 {
			counts[b][byte(a>>(8*b))]++
		}
		for b := range 8 {
			counts[4+b][byte(k>>(8*b))]++
		}
	}
	src, dst := es, scratch
	for pass := range 12 {
		c := &counts[pass]
		var digit func(e *entry) byte
		if pass < 4 {
			shift := uint(8 * pass)
			digit = func(e *entry) byte { return byte(e.aux >> shift) }
		} else {
			shift := uint(8 * (pass - 4))
			digit = func(e *entry) byte { return byte(e.key >> shift) }
		}
		if c[digit(&src[0])] == len(src) {
			continue // every entry has the same byte here
		}
		pos := 0
		for i, n := range c {
			c[i] = pos
			pos += n
		}
		if pass < 4 {
			shift := uint(8 * pass)
			for i := range src {
				b := byte(src[i].aux >> shift)
				dst[c[b]] = src[i]
				c[b]++
			}
		} else {
			shift := uint(8 * (pass - 4))
			for i := range src {
				b := byte(src[i].key >> shift)
				dst[c[b]] = src[i]
				c[b]++
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &es[0] {
		copy(es, src)
	}
	return scratch
}

// msdMinEntries is the buffer size from which msdSortEntries is used: at
// least a few entries per bucket of the key's top 16 bits.
const msdMinEntries = 1 << 18

// writeRun writes sorted entries to path, via a temporary file renamed into
// place (syncRuns makes it durable before a checkpoint names it).
func writeRun(path string, es []entry) (int64, error) {
	w, err := createRun(path, kindEntries)
	if err != nil {
		return 0, err
	}
	var prev uint64
	var prevAux int64
	for _, e := range es {
		d := e.key - prev
		if w.m == 0 {
			d, prevAux = e.key, 0 // a block's first key is whole
		}
		w.block = binary.AppendUvarint(w.block, d)
		w.block = binary.AppendVarint(w.block, int64(e.aux)-prevAux)
		prev, prevAux = e.key, int64(e.aux)
		if err := w.endRecord(); err != nil {
			return 0, w.abort(err)
		}
	}
	return w.finish()
}

// runReader streams the entries of one run, checking their order. It
// decodes decodeBatch entries at a time into ents, in one loop: the merge
// asks for every entry of a 10^8 load (4 x 10^8 of them), and decoding one
// entry per call spent much of each on the call and its state. The batch
// is small so that the batches of every run of a merge stay in the L2
// cache (43 runs at 10^8: 86 KB); whole 64 KB blocks decoded at once (6 MB)
// were no faster than one entry per call.
type runReader struct {
	br      *blockReader
	block   []byte // the current block's payload not yet decoded
	left    int    // records of block not yet decoded
	first   bool   // the next record decoded is its block's first
	ents    []entry
	pos     int // ents[pos] is the next entry
	cur     entry
	started bool // cur holds an entry
}

// decodeBatch is how many entries runReader decodes at a time.
const decodeBatch = 128

func openRun(path string) (*runReader, error) {
	br, err := openBlocks(path, kindEntries)
	if err != nil {
		return nil, err
	}
	return &runReader{br: br}, nil
}

func newRunReader(name string, rd io.Reader) (*runReader, error) {
	br, err := newBlockReader(name, rd, kindEntries)
	if err != nil {
		return nil, err
	}
	return &runReader{br: br}, nil
}

// next advances to the next entry; ok is false at the end (after every
// block's checksum and the record count were verified).
func (r *runReader) next() (ok bool, err error) {
	if r.pos == len(r.ents) {
		if err := r.fill(); err != nil || len(r.ents) == 0 {
			return false, err
		}
	}
	r.cur, r.started = r.ents[r.pos], true
	r.pos++
	return true, nil
}

// fill decodes the next entries into ents (empty at the end of the run),
// checking that they continue the run's order.
func (r *runReader) fill() error {
	if r.ents == nil {
		r.ents = make([]entry, 0, decodeBatch)
	}
	r.ents, r.pos = r.ents[:0], 0
	if r.left == 0 {
		m, block, err := r.br.next()
		if err != nil || m == 0 {
			return err
		}
		r.block, r.left, r.first = block, m, true
	}
	prev, started, first := r.cur, r.started, r.first
	block := r.block
	n := min(r.left, decodeBatch)
	for range n {
		d, k := binary.Uvarint(block)
		if k <= 0 {
			return r.br.errorf("truncated entry")
		}
		var aux uint64
		var k2 int
		if r.br.v2 {
			aux, k2 = binary.Uvarint(block[k:])
		} else {
			var da int64
			da, k2 = binary.Varint(block[k:])
			if !first {
				da += int64(prev.aux)
			}
			aux = uint64(da) // a negative sum is far above 1<<32-1: refused below
		}
		if k2 <= 0 || aux > 1<<32-1 {
			return r.br.errorf("bad aux")
		}
		block = block[k+k2:]
		key := d
		if !first {
			key = prev.key + d
			if key < prev.key {
				return r.br.errorf("key overflow")
			}
		}
		e := entry{key: key, aux: uint32(aux)}
		if started && entryCmp(e, prev) < 0 {
			return r.br.errorf("entries out of order")
		}
		r.ents = append(r.ents, e)
		prev, started, first = e, true, false
	}
	r.block, r.left, r.first = block, r.left-n, false
	if r.left == 0 && len(block) != 0 {
		return r.br.errorf("%d bytes after the block's records", len(block))
	}
	return nil
}

func (r *runReader) close() error { return r.br.close() }

// merger is a k-way merge of runs in (key, aux) order: a loser tree
// (tournament tree) over the runs. Each pop replays one leaf-to-root path,
// ceil(log2 k) comparisons of entries held in a flat slice, where a
// binary heap makes up to two per level through the run readers' pointers
// (10 runs of a 10^7 load: 4 comparisons instead of up to 8; a heap took
// 4.6 s of a 49 s profile).
//
// Leaves are the runs, at tree positions k..2k-1; internal node i (1 <= i
// < k) has children 2i and 2i+1 and holds the loser of the match played
// there; win is the overall winner. An exhausted run plays as +infinity.
// Equal entries may come out of either run first: they are identical.
type merger struct {
	rs   []*runReader // the runs, by leaf; nil once exhausted and closed
	cur  []mergeSlot  // cur[i]: run i's current entry, or exhausted
	tree []int        // tree[i], 1 <= i < k: the losing leaf at node i
	win  int          // the leaf holding the smallest entry
	live int          // runs not yet exhausted
}

// mergeSlot is a leaf's current entry with aux widened to 64 bits, so that
// an exhausted run is an entry after every real one (exhausted): beats is
// one comparison of two pairs, without checking the runs.
type mergeSlot struct{ key, aux uint64 }

// exhausted sorts after every entry: aux 1<<32 is above every uint32.
var exhausted = mergeSlot{key: ^uint64(0), aux: 1 << 32}

// beats reports whether leaf a's entry comes before leaf b's.
func (m *merger) beats(a, b int) bool {
	x, y := m.cur[a], m.cur[b]
	return x.key < y.key || (x.key == y.key && x.aux < y.aux)
}

// build plays the matches below node and returns their winner.
func (m *merger) build(node int) int {
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

// newMerger opens every run; the caller closes the merger.
func newMerger(paths []string) (*merger, error) {
	m := &merger{}
	for _, p := range paths {
		r, err := openRun(p)
		if err != nil {
			return nil, errors.Join(err, m.close())
		}
		ok, err := r.next()
		if err != nil {
			return nil, errors.Join(err, r.close(), m.close())
		}
		if !ok {
			if err := r.close(); err != nil {
				return nil, errors.Join(err, m.close())
			}
			continue
		}
		m.rs = append(m.rs, r)
		m.cur = append(m.cur, mergeSlot{r.cur.key, uint64(r.cur.aux)})
	}
	m.live = len(m.rs)
	if m.live > 0 {
		m.tree = make([]int, len(m.rs))
		m.win = m.build(1)
	}
	return m, nil
}

// next returns the smallest remaining entry.
func (m *merger) next() (entry, bool, error) {
	if m.live == 0 {
		return entry{}, false, nil
	}
	w := m.win
	r := m.rs[w]
	e := entry{key: m.cur[w].key, aux: uint32(m.cur[w].aux)}
	ok, err := r.next()
	if err != nil {
		return entry{}, false, err
	}
	if ok {
		m.cur[w] = mergeSlot{r.cur.key, uint64(r.cur.aux)}
	} else {
		m.cur[w] = exhausted
		m.rs[w] = nil
		m.live--
		if err := r.close(); err != nil {
			return entry{}, false, err
		}
	}
	// Replay w's path: at each node the stored loser plays the current
	// winner. Random keys make each match a coin toss, so the match is
	// branch-free: a 128-bit subtraction's borrow says whether the loser
	// l comes first, and masks swap it with the winner. With runReader's
	// batches, BenchmarkMerger takes 41-47 ns per entry at 43 runs against
	// 61-70 with a branch and one entry per call (31-35 against 44-53 at
	// 10); either change alone gains nothing measurable.
	wk, wa := m.cur[w].key, m.cur[w].aux
	wl := uint64(w)
	for node := (w + len(m.rs)) / 2; node > 0; node /= 2 {
		l := uint64(m.tree[node])
		lk, la := m.cur[l].key, m.cur[l].aux
		_, b := bits.Sub64(la, wa, 0)
		_, b = bits.Sub64(lk, wk, b) // 1: (lk, la) < (wk, wa)
		mask := -b
		x := (wl ^ l) & mask
		m.tree[node] = int(l ^ x)
		wl ^= x
		wk ^= (wk ^ lk) & mask
		wa ^= (wa ^ la) & mask
	}
	m.win = int(wl)
	return e, true, nil
}

func (m *merger) close() error {
	var errs []error
	for _, r := range m.rs {
		if r != nil {
			errs = append(errs, r.close())
		}
	}
	m.rs, m.live = nil, 0
	return errors.Join(errs...)
}

// msdSortEntries sorts by (key, aux): it places the entries by the key's
// top 16 bits in two 8-bit passes, the first by the top byte into scratch
// (256 destinations: the writes stay in cache), the second each of those
// buckets (a few thousand entries, in L2) by the next byte back into es;
// then each of the 65,536 final buckets is sorted on its own (insertion
// sort for the handful of entries random keys give it, the comparison sort
// for a crowded one, so clustered keys stay O(n log n)). One placement pass
// into 65,536 destinations would miss the cache on most writes and need a
// copy back. The insertion sort shifts entries and compares with
// entryLess: swapping pairs through the three-way entryCmp makes it most
// of the sort's time (BenchmarkSortEntries: 26-30 ns per entry, against
// 57-62 with swaps through entryCmp).
func msdSortEntries(es []entry, scratch []entry) []entry {
	if cap(scratch) < len(es) {
		scratch = make([]entry, len(es))
	}
	scratch = scratch[:len(es)]
	var top [257]int
	for i := range es {
		top[es[i].key>>56+1]++
	}
	for b := 1; b <= 256; b++ {
		top[b] += top[b-1]
	}
	next := top
	for i := range es {
		b := es[i].key >> 56
		scratch[next[b]] = es[i]
		next[b]++
	}
	for b := range 256 {
		msdSecondByte(scratch[top[b]:top[b+1]], es[top[b]:top[b+1]])
	}
	return scratch
}

// msdSecondByte places src (entries of one top byte) by the key's second
// byte into dst and sorts each resulting bucket.
func msdSecondByte(src, dst []entry) {
	var sub [257]int32
	for i := range src {
		sub[int(byte(src[i].key>>48))+1]++
	}
	for d := 1; d <= 256; d++ {
		sub[d] += sub[d-1]
	}
	at := sub
	for i := range src {
		d := byte(src[i].key >> 48)
		dst[at[d]] = src[i]
		at[d]++
	}
	for d := range 256 {
		bucket := dst[sub[d]:sub[d+1]]
		if len(bucket) <= 48 {
			insertionSortEntries(bucket)
		} else {
			slices.SortFunc(bucket, entryCmp)
		}
	}
}

func entryLess(a, b entry) bool { return a.key < b.key || a.key == b.key && a.aux < b.aux }

func insertionSortEntries(es []entry) {
	for i := 1; i < len(es); i++ {
		x := es[i]
		j := i
		for j > 0 && entryLess(x, es[j-1]) {
			es[j] = es[j-1]
			j--
		}
		es[j] = x
	}
}
