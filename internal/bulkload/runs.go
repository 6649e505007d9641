package bulkload

import (
	"bufio"
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

// sortEntries sorts by (key, aux): an LSD radix sort, the aux bytes first
// and then the key bytes (each pass stable), skipping the byte positions
// where every entry has the same byte (the high bytes of the bucket, and
// the top bytes of keys when a spill holds one row range).
func sortEntries(es []entry, scratch []entry) []entry {
	if len(es) < 1<<10 {
		slices.SortFunc(es, entryCmp)
		return scratch
	}
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

// runReader streams the entries of one run. It decodes from a block
// buffer and checksums whole blocks (not byte by byte), checks order while
// reading and the checksum when the last entry has been read.
type runReader struct {
	name string
	rd   io.Reader
	buf  []byte // buf[pos:end] is read but not decoded
	pos  int
	end  int
	eof  bool
	crc  uint32 // of the bytes before buf[pos] (after the magic)
	left uint64
	prev uint64
	cur  entry
	// started is set once the first entry was read.
	started bool
	c       io.Closer
}

// runBlock is the read size; a refill keeps at least maxEntryBytes.
const (
	runBlock      = 1 << 20
	maxEntryBytes = 2 * binary.MaxVarintLen64
)

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
	r := &runReader{name: name, rd: rd, buf: make([]byte, runBlock+maxEntryBytes)}
	magic := make([]byte, len(runMagic))
	if _, err := io.ReadFull(rd, magic); err != nil || string(magic) != string(runMagic) {
		return nil, fmt.Errorf("%w: %s: bad magic", ErrRun, name)
	}
	if err := r.fill(); err != nil {
		return nil, err
	}
	n, k := binary.Uvarint(r.buf[r.pos:r.end])
	if k <= 0 {
		return nil, fmt.Errorf("%w: %s: bad count", ErrRun, name)
	}
	r.pos += k
	r.left = n
	return r, nil
}

// fill checksums the decoded bytes, moves the rest to the front and reads
// until the buffer holds at least maxEntryBytes + 4 bytes or the input
// ends.
func (r *runReader) fill() error {
	r.crc = crc32.Update(r.crc, castagnoli, r.buf[:r.pos])
	n := copy(r.buf, r.buf[r.pos:r.end])
	r.pos, r.end = 0, n
	for !r.eof && r.end < len(r.buf) {
		m, err := r.rd.Read(r.buf[r.end:])
		r.end += m
		if err == io.EOF {
			r.eof = true
		} else if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrRun, r.name, err)
		}
		if r.end >= maxEntryBytes+4 && m == 0 {
			break
		}
	}
	return nil
}

// next advances to the next entry; ok is false at the end (after the
// checksum was verified).
func (r *runReader) next() (ok bool, err error) {
	if r.end-r.pos < maxEntryBytes+4 && !r.eof {
		if err := r.fill(); err != nil {
			return false, err
		}
	}
	if r.left == 0 {
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
	b := r.buf[r.pos:r.end]
	d, k := binary.Uvarint(b)
	if k <= 0 {
		return false, fmt.Errorf("%w: %s: truncated entry", ErrRun, r.name)
	}
	aux, k2 := binary.Uvarint(b[k:])
	if k2 <= 0 || aux > 1<<32-1 {
		return false, fmt.Errorf("%w: %s: bad aux", ErrRun, r.name)
	}
	r.pos += k + k2
	key := r.prev + d
	if key < r.prev {
		return false, fmt.Errorf("%w: %s: key overflow", ErrRun, r.name)
	}
	e := entry{key: key, aux: uint32(aux)}
	if d == 0 && r.started && e.aux < r.cur.aux {
		return false, fmt.Errorf("%w: %s: entries out of order", ErrRun, r.name)
	}
	r.cur, r.prev, r.started = e, key, true
	r.left--
	return true, nil
}

func (r *runReader) close() error {
	if r.c == nil {
		return nil
	}
	return r.c.Close()
}

// merger is a k-way merge of runs in (key, aux) order: a binary heap of
// the runs' current entries, hand-rolled (container/heap's interface calls
// cost more than the comparisons here).
type merger struct {
	h []*runReader
}

func (m *merger) less(i, j int) bool { return entryCmp(m.h[i].cur, m.h[j].cur) < 0 }

func (m *merger) down(i int) {
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
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
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
	if !ok {
		m.h[0] = m.h[len(m.h)-1]
		m.h = m.h[:len(m.h)-1]
		if err := top.close(); err != nil {
			return entry{}, false, err
		}
	}
	if len(m.h) > 1 {
		m.down(0)
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
