package sparkjob

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Frames: what a worker writes to its standard output, and what the write
// worker reads from its standard input. A frame is a kind byte, the
// payload's length (4 bytes, big-endian) and the payload.
//
//	'r' record  order (8 bytes) | fingerprint (8 bytes) | id
//	'x' reject  JSON {"where": ..., "reason": ...}
//	'b' run     part (4 bytes) | a sorted run (below)
//	'e' end     JSON of the worker's counts; the last frame of a worker
//	            that finished (a stream without it is incomplete)
//
// A run is a part's cells sorted by (row, qualifier, order), each as
// uvarint length + row, uvarint length + qualifier, uvarint length +
// value, then the order of the record it came from (8 bytes, big-endian).
// An index entry is a cell of its index row whose qualifier is the time
// bucket (4 bytes) and the residual (8 bytes), with an empty value; a band
// cell's value is its document's time bucket (4 bytes), which an
// HBase-bound writer makes the cell's timestamp; the stored value is
// empty.
const (
	FrameRecord = 'r'
	FrameReject = 'x'
	FrameRun    = 'b'
	FrameEnd    = 'e'
)

// maxFrame bounds a frame's payload.
const maxFrame = 1<<32 - 1

func writeFrame(w io.Writer, kind byte, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n > maxFrame {
		return fmt.Errorf("sparkjob: frame of %d bytes", n)
	}
	var h [5]byte
	h[0] = kind
	binary.BigEndian.PutUint32(h[1:], uint32(n))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// readFrame reads one frame into buf (reused); io.EOF at a clean end.
func readFrame(r *bufio.Reader, buf []byte) (kind byte, payload []byte, err error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, fmt.Errorf("sparkjob: truncated frame header")
		}
		return 0, nil, err
	}
	n := int(binary.BigEndian.Uint32(h[1:]))
	buf = slices.Grow(buf[:0], n)[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, nil, fmt.Errorf("sparkjob: truncated frame of %d bytes: %w", n, err)
	}
	return h[0], buf, nil
}

// cell is one cell of a run.
type cell struct {
	row, qual, val []byte
	order          uint64
}

func compareCells(a, b *cell) int {
	if c := bytes.Compare(a.row, b.row); c != 0 {
		return c
	}
	if c := bytes.Compare(a.qual, b.qual); c != 0 {
		return c
	}
	switch {
	case a.order < b.order:
		return -1
	case a.order > b.order:
		return 1
	}
	return 0
}

func appendCell(dst []byte, c *cell) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(c.row)))
	dst = append(dst, c.row...)
	dst = binary.AppendUvarint(dst, uint64(len(c.qual)))
	dst = append(dst, c.qual...)
	dst = binary.AppendUvarint(dst, uint64(len(c.val)))
	dst = append(dst, c.val...)
	return binary.BigEndian.AppendUint64(dst, c.order)
}

// runReader reads the cells of one run.
type runReader struct {
	r    *bufio.Reader
	bufs [3][]byte
}

// next reads the next cell into c (its slices valid until the next call);
// false at the run's end.
func (rr *runReader) next(c *cell) (bool, error) {
	for i := range rr.bufs {
		n, err := binary.ReadUvarint(rr.r)
		if err != nil {
			if i == 0 && errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, fmt.Errorf("sparkjob: corrupt run: %w", err)
		}
		if n > 64<<20 {
			return false, fmt.Errorf("sparkjob: corrupt run: field of %d bytes", n)
		}
		rr.bufs[i] = slices.Grow(rr.bufs[i][:0], int(n))[:n]
		if _, err := io.ReadFull(rr.r, rr.bufs[i]); err != nil {
			return false, fmt.Errorf("sparkjob: corrupt run: %w", err)
		}
	}
	var o [8]byte
	if _, err := io.ReadFull(rr.r, o[:]); err != nil {
		return false, fmt.Errorf("sparkjob: corrupt run: %w", err)
	}
	c.row, c.qual, c.val, c.order = rr.bufs[0], rr.bufs[1], rr.bufs[2], binary.BigEndian.Uint64(o[:])
	return true, nil
}
