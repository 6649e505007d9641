package bulkload

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/simdex/simdex/internal/pagecache"
)

// A sorted run is one spill of an in-memory buffer, written to a file of
// the checkpoint directory. Both record kinds (index entries and fp/docs
// cells) share one file format, version 3:
//
//	bytes 0..7   magic "SDXRUN03" (or "SDXRUN02", below)
//	byte 8       record kind: 'e' entries, 'c' cells
//	blocks, each:
//	  uvarint    m, the number of records in the block, >= 1
//	  uvarint    len, the payload's length in bytes
//	  len bytes  the payload: m records (below)
//	  4 bytes    CRC-32C (Castagnoli) of the block's m, len and payload
//	             varints and bytes, big-endian
//	the end block:
//	  uvarint    0
//	  uvarint    the number of records in the file
//	  4 bytes    CRC-32C of these two varints, big-endian
//
// An entry record (entries sorted by (key, aux)) is uvarint key - the
// previous key of the block (the block's first: the key itself), then
// the zigzag varint of aux - the previous aux of the block (the block's
// first: aux - 0). Index runs (one per table) hold key = the fingerprint
// permuted for the table (prefix in the high bits, residual in the low
// bits) and aux = the time bucket; the id and fingerprint runs hold key =
// xxhash64(id) or the fingerprint, aux = 0.
//
// A cell record is uvarint len(row), row, uvarint len(qualifier),
// qualifier, uvarint len(value), value; cells are in (row, qualifier)
// order, equal keys in input order.
//
// Each block is checked before any of its records is used, so a damaged
// run is refused without decoding garbage, and a reader decodes from the
// block in memory (no per-record reads). Runs are written to a temporary
// name and renamed; the checkpoint that names a spill's runs is saved only
// after syncRuns has synced them and the directory (on a goroutine, while
// reading goes on: spill.go's syncSpill), so a run named in a
// checkpoint is complete even after a power loss.
// Version 2 (SDXRUN02) differs in the entry record only: uvarint aux
// whole. An index run's aux is a time bucket (~20,000 for 2026 in days,
// three varint bytes) and neighbouring entries' buckets are a few apart:
// the delta is one byte, a fifth of a 10^7 load's ~10-byte entries.
// Version 2 runs (of a checkpoint directory an older binary began) are
// still read. Version 1 (SDXRUN01/SDXCEL01: one checksum over the whole
// file) is not: such a directory is refused by its magic.

var runMagic = []byte("SDXRUN03")

// runMagicV2 is version 2's magic.
var runMagicV2 = []byte("SDXRUN02")

const (
	kindEntries byte = 'e'
	kindCells   byte = 'c'
	// runBlockTarget is the payload size at which a block is closed.
	runBlockTarget = 64 << 10
	// maxRunBlock bounds a block's payload when reading (a damaged length
	// must not allocate gigabytes): one cell at the part limit fits.
	maxRunBlock = runBlockTarget + 3*(maxCellPart+binary.MaxVarintLen64)
)

// ErrRun is wrapped by errors decoding a run file.
var ErrRun = errors.New("bulkload: bad run file")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// runWriter writes one run file block by block. The record codecs append
// a record to block and call endRecord.
type runWriter struct {
	path, tmp string
	f         *os.File
	bw        *bufio.Writer
	block     []byte // the open block's payload
	m         int    // records in the open block
	total     uint64
	size      int64
	hdr       []byte
}

func createRun(path string, kind byte) (*runWriter, error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	w := &runWriter{path: path, tmp: tmp, f: f, bw: bufio.NewWriterSize(f, 1<<20), block: make([]byte, 0, runBlockTarget+1024)}
	w.bw.Write(runMagic) // errors stick in bw and surface at the next write or Flush
	w.bw.WriteByte(kind)
	w.size = int64(len(runMagic)) + 1
	return w, nil
}

// endRecord counts the record just appended to block and writes the block
// once it reaches the target size.
func (w *runWriter) endRecord() error {
	w.m++
	if len(w.block) >= runBlockTarget {
		return w.flushBlock()
	}
	return nil
}

func (w *runWriter) flushBlock() error {
	if w.m == 0 {
		return nil
	}
	w.hdr = binary.AppendUvarint(w.hdr[:0], uint64(w.m))
	w.hdr = binary.AppendUvarint(w.hdr, uint64(len(w.block)))
	crc := crc32.Update(crc32.Update(0, castagnoli, w.hdr), castagnoli, w.block)
	w.bw.Write(w.hdr)
	w.bw.Write(w.block)
	_, err := w.bw.Write(binary.BigEndian.AppendUint32(w.hdr[:0], crc))
	w.size += int64(len(w.hdr)+len(w.block)) + 4
	w.total += uint64(w.m)
	w.block, w.m = w.block[:0], 0
	return err
}

// finish writes the last block and the end block, closes and renames the
// file into place. It does not sync: syncRuns does, before a checkpoint
// names the run.
func (w *runWriter) finish() (int64, error) {
	if err := w.flushBlock(); err != nil {
		return 0, w.abort(err)
	}
	end := binary.AppendUvarint(nil, 0)
	end = binary.AppendUvarint(end, w.total)
	end = binary.BigEndian.AppendUint32(end, crc32.Checksum(end, castagnoli))
	w.bw.Write(end)
	w.size += int64(len(end))
	if err := w.bw.Flush(); err != nil {
		return 0, w.abort(err)
	}
	if err := w.f.Close(); err != nil {
		return 0, errors.Join(err, os.Remove(w.tmp))
	}
	if err := os.Rename(w.tmp, w.path); err != nil {
		return 0, err
	}
	return w.size, nil
}

// syncRuns makes the run files at paths and their directory dir durable
// (fsync of each file's data, then of the directory's entries, which the
// renames changed).
func syncRuns(dir string, paths []string) error {
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = f.Sync()
		if err == nil {
			// The run is on disk: its pages can go (see droppingReader).
			pagecache.Drop(f.Fd(), 0, 0)
		}
		if err := errors.Join(err, f.Close()); err != nil {
			return fmt.Errorf("syncing %s: %w", p, err)
		}
	}
	return syncDir(dir)
}

// dropEvery is how many bytes of a run a droppingReader reads between
// two requests to drop the pages behind it.
const dropEvery = 4 << 20

// droppingReader reads a run file front to back and drops the cached
// pages of what it has read (see package pagecache). A load writes each
// run once (syncRuns drops its pages once it is on disk) and reads it
// once, so cached run pages would only grow the page cache by the runs'
// total size, ~9 GB at 10^8 fingerprints. With both drops a load's page
// cache stays at a few hundred MB of pages that are reused at once.
type droppingReader struct {
	f       *os.File
	read    int64 // bytes read so far
	dropped int64 // bytes [0, dropped) were dropped
}

func (r *droppingReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.read += int64(n)
	if r.read-r.dropped >= dropEvery {
		pagecache.Drop(r.f.Fd(), r.dropped, r.read-r.dropped)
		r.dropped = r.read
	}
	return n, err
}

func (w *runWriter) abort(err error) error {
	return errors.Join(err, w.f.Close(), os.Remove(w.tmp))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// blockReader reads the blocks of one run file and checks each one before
// handing it out. Two block buffers alternate, so the records of the
// previous block stay valid while the next one is decoded (the readers'
// order checks and the mergers rely on that).
type blockReader struct {
	name  string
	v2    bool // a version 2 file: entries' aux is whole
	rd    *bufio.Reader
	bufs  [2][]byte
	cur   int
	seen  uint64 // records in the blocks read so far
	ended bool
	hdr   []byte
	c     io.Closer
}

func newBlockReader(name string, rd io.Reader, kind byte) (*blockReader, error) {
	br, ok := rd.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(rd, 256<<10)
	}
	r := &blockReader{name: name, rd: br}
	head := make([]byte, len(runMagic)+1)
	if _, err := io.ReadFull(br, head); err != nil {
		return nil, fmt.Errorf("%w: %s: bad magic", ErrRun, name)
	}
	switch string(head[:len(runMagic)]) {
	case string(runMagic):
	case string(runMagicV2):
		r.v2 = true
	default:
		return nil, fmt.Errorf("%w: %s: bad magic", ErrRun, name)
	}
	if head[len(runMagic)] != kind {
		return nil, fmt.Errorf("%w: %s: record kind %q, want %q", ErrRun, name, head[len(runMagic)], kind)
	}
	return r, nil
}

func (r *blockReader) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrRun, r.name, fmt.Sprintf(format, args...))
}

// next returns the next block's record count and payload, or m = 0 after
// the end block (whose count it has checked). The payload is valid until
// the call after next.
func (r *blockReader) next() (m int, payload []byte, err error) {
	if r.ended {
		return 0, nil, nil
	}
	m64, err := binary.ReadUvarint(r.rd)
	if err != nil {
		return 0, nil, r.errorf("block header: %v", err)
	}
	n, err := binary.ReadUvarint(r.rd)
	if err != nil {
		return 0, nil, r.errorf("block header: %v", err)
	}
	r.hdr = binary.AppendUvarint(r.hdr[:0], m64)
	r.hdr = binary.AppendUvarint(r.hdr, n)
	if m64 == 0 {
		if err := r.checkCRC(crc32.Checksum(r.hdr, castagnoli)); err != nil {
			return 0, nil, err
		}
		if n != r.seen {
			return 0, nil, r.errorf("end block counts %d records, the blocks hold %d", n, r.seen)
		}
		if _, err := r.rd.ReadByte(); err != io.EOF {
			return 0, nil, r.errorf("trailing bytes")
		}
		r.ended = true
		return 0, nil, nil
	}
	if n > maxRunBlock || m64 > n {
		return 0, nil, r.errorf("block of %d records in %d bytes", m64, n)
	}
	r.cur ^= 1
	buf := r.bufs[r.cur]
	if cap(buf) < int(n) {
		buf = make([]byte, n, max(int(n), runBlockTarget+1024))
	}
	buf = buf[:n]
	r.bufs[r.cur] = buf
	if _, err := io.ReadFull(r.rd, buf); err != nil {
		return 0, nil, r.errorf("truncated block: %v", err)
	}
	if err := r.checkCRC(crc32.Update(crc32.Checksum(r.hdr, castagnoli), castagnoli, buf)); err != nil {
		return 0, nil, err
	}
	r.seen += m64
	return int(m64), buf, nil
}

func (r *blockReader) checkCRC(want uint32) error {
	var b [4]byte
	if _, err := io.ReadFull(r.rd, b[:]); err != nil {
		return r.errorf("missing checksum")
	}
	if binary.BigEndian.Uint32(b[:]) != want {
		return r.errorf("checksum mismatch")
	}
	return nil
}

func (r *blockReader) close() error {
	if r.c == nil {
		return nil
	}
	err := r.c.Close()
	r.c = nil
	return err
}

// openBlocks opens a run file of the given record kind.
func openBlocks(path string, kind byte) (*blockReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	pagecache.Sequential(f.Fd())
	r, err := newBlockReader(path, bufio.NewReaderSize(&droppingReader{f: f}, 256<<10), kind)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	r.c = f
	return r, nil
}
