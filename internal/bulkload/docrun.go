package bulkload

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"

	"github.com/simdex/simdex/kvindex"
)

// A document run holds the fp and docs cells of the documents read between
// two checkpoints when the loader writes them after the index rows
// (Config.IndexFirst), in input order. Layout (version 1):
//
//	bytes 0..7   magic "SDXDOC01"
//	records, one per document:
//	  uvarint    m, the number of cells (1..maxDocCells)
//	  m times    byte table (kvindex.Table: 1 fp, 2 docs, 0 index, 3 meta)
//	             uvarint len(row), row (non-empty)
//	             uvarint len(qualifier), qualifier
//	             uvarint len(value), value
//	uvarint      0 (end of records)
//	uvarint      n, the number of records
//	4 bytes      CRC-32C (Castagnoli) of everything between the magic and
//	             this trailer, big-endian
//
// Every cell is a Put without a timestamp (what Index.DocMutations
// returns). The file is written under a temporary name while the batches
// come in and renamed when the spill that ends its run is checkpointed, so
// a run named in a checkpoint is complete; a reader checks the CRC before
// it hands out the first record.

var docRunMagic = []byte("SDXDOC01")

// maxDocCells bounds the cells of one record (a document has two).
const maxDocCells = 16

// maxDocField bounds a row, qualifier or value in a document run (docs
// cells are far smaller; HBase's own cell limit is 10 MB).
const maxDocField = 16 << 20

// docRunWriter appends records to a document run.
type docRunWriter struct {
	path string
	f    *os.File
	bw   *bufio.Writer
	crc  hash.Hash32
	n    int64
	buf  []byte
}

// createDocRun starts the run at path (written as path+".tmp" until
// finish).
func createDocRun(path string) (*docRunWriter, error) {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return nil, err
	}
	w := &docRunWriter{path: path, f: f, bw: bufio.NewWriterSize(f, 1<<20), crc: crc32.New(castagnoli)}
	if _, err := w.bw.Write(docRunMagic); err != nil {
		return nil, errors.Join(err, w.abort())
	}
	return w, nil
}

// add appends one document's cells.
func (w *docRunWriter) add(muts []kvindex.Mutation) error {
	if len(muts) == 0 || len(muts) > maxDocCells {
		return fmt.Errorf("bulkload: document run: %d cells in one record", len(muts))
	}
	b := binary.AppendUvarint(w.buf[:0], uint64(len(muts)))
	for _, m := range muts {
		if m.Kind != kvindex.Put || !m.Timestamp.IsZero() || !m.Table.Valid() || len(m.Row) == 0 {
			return fmt.Errorf("bulkload: document run: cell %s/%q is not a plain put", m.Table, m.Row)
		}
		if len(m.Row) > maxDocField || len(m.Qualifier) > maxDocField || len(m.Value) > maxDocField {
			return fmt.Errorf("bulkload: document run: cell %s/%q too large", m.Table, m.Row)
		}
		b = append(b, byte(m.Table))
		for _, f := range [][]byte{m.Row, m.Qualifier, m.Value} {
			b = binary.AppendUvarint(b, uint64(len(f)))
			b = append(b, f...)
		}
	}
	w.buf = b
	w.n++
	w.crc.Write(b)
	_, err := w.bw.Write(b)
	return err
}

// finish writes the trailer, syncs and renames the run to its name.
func (w *docRunWriter) finish() error {
	b := binary.AppendUvarint(nil, 0)
	b = binary.AppendUvarint(b, uint64(w.n))
	w.crc.Write(b)
	b = binary.BigEndian.AppendUint32(b, w.crc.Sum32())
	if _, err := w.bw.Write(b); err != nil {
		return errors.Join(err, w.abort())
	}
	if err := w.bw.Flush(); err != nil {
		return errors.Join(err, w.abort())
	}
	if err := errors.Join(w.f.Sync(), w.f.Close()); err != nil {
		return errors.Join(err, os.Remove(w.path+".tmp"))
	}
	return os.Rename(w.path+".tmp", w.path)
}

// abort drops the unfinished run.
func (w *docRunWriter) abort() error {
	return errors.Join(w.f.Close(), os.Remove(w.path+".tmp"))
}

// crcReader reads through a bufio.Reader and keeps the CRC-32C of every
// byte consumed (so read-ahead does not count).
type crcReader struct {
	br  *bufio.Reader
	crc uint32
	one [1]byte
}

func (c *crcReader) ReadByte() (byte, error) {
	b, err := c.br.ReadByte()
	if err == nil {
		c.one[0] = b
		c.crc = crc32.Update(c.crc, castagnoli, c.one[:])
	}
	return b, err
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.br.Read(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	return n, err
}

// readDocRun decodes the run at path, checking its structure, record count
// and CRC first, then calls fn per record in order (the cells belong to
// fn). An error of fn stops it and is returned as is.
func readDocRun(path string, fn func([]kvindex.Mutation) error) error {
	if err := readDocRunOnce(path, nil); err != nil {
		return err
	}
	return readDocRunOnce(path, fn)
}

func readDocRunOnce(path string, fn func([]kvindex.Mutation) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("bulkload: %w", err)
	}
	defer f.Close()
	return decodeDocRun(f, fn)
}

// decodeDocRun decodes a whole run; with a nil fn it only checks it.
func decodeDocRun(r io.Reader, fn func([]kvindex.Mutation) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	magic := make([]byte, len(docRunMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != string(docRunMagic) {
		return fmt.Errorf("%w: not a document run (magic %q)", ErrRun, magic)
	}
	cr := &crcReader{br: br}
	var n uint64
	for {
		m, err := binary.ReadUvarint(cr)
		if err != nil {
			return fmt.Errorf("%w: document run: %v", ErrRun, noEOF(err))
		}
		if m == 0 {
			break
		}
		if m > maxDocCells {
			return fmt.Errorf("%w: document run: record of %d cells", ErrRun, m)
		}
		rec := make([]kvindex.Mutation, 0, m)
		for range m {
			tb, err := cr.ReadByte()
			if err != nil {
				return fmt.Errorf("%w: document run: %v", ErrRun, noEOF(err))
			}
			mu := kvindex.Mutation{Kind: kvindex.Put, Table: kvindex.Table(tb)}
			if !mu.Table.Valid() {
				return fmt.Errorf("%w: document run: table %d", ErrRun, tb)
			}
			for i, field := range []*[]byte{&mu.Row, &mu.Qualifier, &mu.Value} {
				l, err := binary.ReadUvarint(cr)
				if err != nil {
					return fmt.Errorf("%w: document run: %v", ErrRun, noEOF(err))
				}
				if l > maxDocField || i == 0 && l == 0 {
					return fmt.Errorf("%w: document run: field of %d bytes", ErrRun, l)
				}
				// Read what is there, not what the length claims
				// (a damaged length must not allocate 16 MiB).
				b, err := io.ReadAll(io.LimitReader(cr, int64(l)))
				if err != nil {
					return fmt.Errorf("%w: document run: %v", ErrRun, err)
				}
				if uint64(len(b)) != l {
					return fmt.Errorf("%w: document run: %v", ErrRun, io.ErrUnexpectedEOF)
				}
				*field = b
			}
			rec = append(rec, mu)
		}
		n++
		if fn != nil {
			if err := fn(rec); err != nil {
				return err
			}
		}
	}
	count, err := binary.ReadUvarint(cr)
	if err != nil {
		return fmt.Errorf("%w: document run trailer: %v", ErrRun, noEOF(err))
	}
	if count != n {
		return fmt.Errorf("%w: document run: %d records, trailer says %d", ErrRun, n, count)
	}
	want := cr.crc
	var sum [4]byte
	if _, err := io.ReadFull(br, sum[:]); err != nil {
		return fmt.Errorf("%w: document run: missing CRC: %v", ErrRun, noEOF(err))
	}
	if got := binary.BigEndian.Uint32(sum[:]); got != want {
		return fmt.Errorf("%w: document run: CRC %08x, want %08x", ErrRun, got, want)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return fmt.Errorf("%w: document run: bytes after the CRC", ErrRun)
	}
	return nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
