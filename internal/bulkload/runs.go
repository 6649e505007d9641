package bulkload

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// A sorted run is one spill of the in-memory buffer: entries sorted by
// (key, aux), written to a file of the checkpoint directory. Layout
// (version 1):
//
//	bytes 0..7   magic "SDXRUN01"
//	uvarint      n, the number of entries
//	n times      uvarint key - previous key (the first: the key itself)
//	             uvarint aux
//	4 bytes      CRC-32C (Castagnoli) of everything between the magic and
//	             this trailer, big-endian
//
// Index runs (one per table) hold key = the fingerprint permuted for the
// table (prefix in the high bits, residual in the low bits) and aux = the
// time bucket; the id and fingerprint runs hold key = xxhash64(id) or the
// fingerprint, aux = 0. Runs are written to a temporary name, synced and
// renamed, so a run named in a checkpoint is complete.

var runMagic = []byte("SDXRUN01")

// ErrRun is wrapped by errors decoding a run file.
var ErrRun = errors.New("bulkload: bad run file")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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

// sortEntries sorts by (key, aux): an LSD radix sort on the key (stable)
// after ordering by aux, which beats a comparison sort at these sizes.
func sortEntries(es []entry, scratch []entry) []entry {
	if len(es) < 1<<12 {
		slices.SortFunc(es, entryCmp)
		return scratch
	}
	sameAux := true
	for i := range es {
		if es[i].aux != es[0].aux {
			sameAux = false
			break
		}
	}
	if !sameAux {
		// Rare in backfills (many buckets in one spill): comparison sort.
		slices.SortFunc(es, entryCmp)
		return scratch
	}
	if cap(scratch) < len(es) {
		scratch = make([]entry, len(es))
	}
	scratch = scratch[:len(es)]
	src, dst := es, scratch
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		clear(count[:])
		for i := range src {
			count[byte(src[i].key>>shift)]++
		}
		if count[byte(src[0].key>>shift)] == len(src) {
			continue // every key has the same byte here
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for i := range src {
			b := byte(src[i].key >> shift)
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &es[0] {
		copy(es, src)
	}
	return scratch
}

// writeRun writes sorted entries to path (via a temporary file, synced and
// renamed).
func writeRun(path string, es []entry) (int64, error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, err
	}
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(f, 1<<20)
	w := io.MultiWriter(bw, crc)
	size := int64(len(runMagic))
	fail := func(err error) (int64, error) {
		return 0, errors.Join(err, f.Close(), os.Remove(tmp))
	}
	if _, err := bw.Write(runMagic); err != nil {
		return fail(err)
	}
	var buf []byte
	buf = binary.AppendUvarint(buf[:0], uint64(len(es)))
	var prev uint64
	for i, e := range es {
		if len(buf) > 64<<10 {
			if _, err := w.Write(buf); err != nil {
				return fail(err)
			}
			size += int64(len(buf))
			buf = buf[:0]
		}
		d := e.key - prev
		if i == 0 {
			d = e.key
		}
		buf = binary.AppendUvarint(buf, d)
		buf = binary.AppendUvarint(buf, uint64(e.aux))
		prev = e.key
	}
	if _, err := w.Write(buf); err != nil {
		return fail(err)
	}
	size += int64(len(buf))
	if err := binary.Write(bw, binary.BigEndian, crc.Sum32()); err != nil {
		return fail(err)
	}
	size += 4
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

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// runReader streams the entries of one run. It checks order while reading
// and the checksum when the last entry has been read.
type runReader struct {
	name string
	br   *bufio.Reader
	crc  hash.Hash32
	left uint64
	prev uint64
	cur  entry
	// started is set once the first entry was read.
	started bool
	c       io.Closer
}

type crcByteReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	one [1]byte
}

func (c *crcByteReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.one[0] = b
		c.crc.Write(c.one[:])
	}
	return b, err
}

func openRun(path string) (*runReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newRunReader(path, f)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	r.c = f
	return r, nil
}

func newRunReader(name string, rd io.Reader) (*runReader, error) {
	r := &runReader{name: name, br: bufio.NewReaderSize(rd, 256<<10), crc: crc32.New(castagnoli)}
	magic := make([]byte, len(runMagic))
	if _, err := io.ReadFull(r.br, magic); err != nil || string(magic) != string(runMagic) {
		return nil, fmt.Errorf("%w: %s: bad magic", ErrRun, name)
	}
	n, err := binary.ReadUvarint(&crcByteReader{r: r.br, crc: r.crc})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: count: %v", ErrRun, name, err)
	}
	r.left = n
	return r, nil
}

// next advances to the next entry; ok is false at the end (after the
// checksum was verified).
func (r *runReader) next() (ok bool, err error) {
	if r.left == 0 {
		var sum [4]byte
		if _, err := io.ReadFull(r.br, sum[:]); err != nil {
			return false, fmt.Errorf("%w: %s: missing checksum", ErrRun, r.name)
		}
		if binary.BigEndian.Uint32(sum[:]) != r.crc.Sum32() {
			return false, fmt.Errorf("%w: %s: checksum mismatch", ErrRun, r.name)
		}
		if _, err := r.br.ReadByte(); err != io.EOF {
			return false, fmt.Errorf("%w: %s: trailing bytes", ErrRun, r.name)
		}
		return false, nil
	}
	cb := &crcByteReader{r: r.br, crc: r.crc}
	d, err := binary.ReadUvarint(cb)
	if err != nil {
		return false, fmt.Errorf("%w: %s: truncated entry: %v", ErrRun, r.name, err)
	}
	aux, err := binary.ReadUvarint(cb)
	if err != nil || aux > 1<<32-1 {
		return false, fmt.Errorf("%w: %s: bad aux (%v)", ErrRun, r.name, err)
	}
	k := r.prev + d
	if k < r.prev {
		return false, fmt.Errorf("%w: %s: key overflow", ErrRun, r.name)
	}
	e := entry{key: k, aux: uint32(aux)}
	if d == 0 && r.started && e.aux < r.cur.aux {
		return false, fmt.Errorf("%w: %s: entries out of order", ErrRun, r.name)
	}
	r.cur, r.prev, r.started = e, k, true
	r.left--
	return true, nil
}

func (r *runReader) close() error {
	if r.c == nil {
		return nil
	}
	return r.c.Close()
}

// merger is a k-way merge of runs in (key, aux) order.
type merger struct {
	h mergeHeap
}

type mergeHeap []*runReader

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return entryCmp(h[i].cur, h[j].cur) < 0 }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(*runReader)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
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
		m.h = append(m.h, r)
	}
	heap.Init(&m.h)
	return m, nil
}

// next returns the smallest remaining entry.
func (m *merger) next() (entry, bool, error) {
	if len(m.h) == 0 {
		return entry{}, false, nil
	}
	top := m.h[0]
	e := top.cur
	ok, err := top.next()
	if err != nil {
		return entry{}, false, err
	}
	if ok {
		heap.Fix(&m.h, 0)
	} else {
		heap.Pop(&m.h)
		if err := top.close(); err != nil {
			return entry{}, false, err
		}
	}
	return e, true, nil
}

func (m *merger) close() error {
	var errs []error
	for _, r := range m.h {
		errs = append(errs, r.close())
	}
	m.h = nil
	return errors.Join(errs...)
}
