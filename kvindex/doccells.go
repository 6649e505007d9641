package kvindex

import (
	"encoding/binary"
	"errors"
	"slices"
	"time"
)

// This file holds allocation-free encoders of a document's fp and docs
// cells, for bulk loaders that encode millions of documents into reused
// buffers (DocCells allocates the cells and their mutations: about five
// allocations per document, a tenth of a precomputed-fingerprint load's
// CPU). The bytes are exactly DocCells' (a test compares them).

// DocQualifier is the qualifier of the single cell of a docs-table row.
const DocQualifier = "d"

// ErrHasBandCells is returned by AppendDocCells for a document that has
// band cells in this index: those go through DocCells.
var ErrHasBandCells = errors.New("kvindex: document has band cells: use DocCells")

// AppendDocCells validates d like DocCells and appends the values of
// its two cells to dst: first the fp cell's (row FPRowKey(d.Fingerprint),
// qualifier d.ID), fpLen bytes, then the docs cell's (row d.ID, qualifier
// DocQualifier), up to the end of out. A document that would have band
// cells in this index gets ErrHasBandCells. It does not allocate unless dst
// must grow or d has more than one attribute.
func (w *BulkWriter) AppendDocCells(dst []byte, d *Document) (out []byte, fpLen int, err error) {
	ix := w.ix
	c := *d
	c.Time = c.Time.UTC()
	c.Bands = ix.storedBands(c.Bands, c.Chars)
	if !ix.text {
		c.Text = "" // as DocCells: an index of format 1 or 2 has no 0x04 cells
	}
	if err := c.validate(); err != nil {
		return dst, 0, err
	}
	if ix.bands && len(c.Bands) > 0 {
		return dst, 0, ErrHasBandCells
	}
	n := len(dst)
	dst = appendFPCell(dst, c.Time, c.ExactHash, ix.compact)
	return appendDoc(dst, &c, ix.compact), len(dst) - n, nil
}

// appendFPCell appends encodeFPCell's bytes to dst.
func appendFPCell(dst []byte, t time.Time, exact uint64, compact bool) []byte {
	if compact && exact == 0 {
		dst = append(dst, fpFormatNoExact)
		return binary.BigEndian.AppendUint64(dst, uint64(t.UnixNano()))
	}
	dst = append(dst, fpFormat)
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.UnixNano()))
	return binary.BigEndian.AppendUint64(dst, exact)
}

// appendDoc appends encodeDoc's bytes (the docs cell value, format in
// encodeDoc's comment) to dst.
func appendDoc(b []byte, d *Document, compact bool) []byte {
	if compact && bareFingerprint(d) {
		b = append(b, docFormatCompact)
		b = binary.BigEndian.AppendUint64(b, uint64(d.Fingerprint))
		b = binary.BigEndian.AppendUint64(b, uint64(d.Time.UnixNano()))
		return appendAttrs(b, d.Attrs)
	}
	start := len(b)
	b = append(b, docFormat)
	b = binary.BigEndian.AppendUint64(b, uint64(d.Fingerprint))
	b = binary.BigEndian.AppendUint64(b, uint64(d.TitleFingerprint))
	b = binary.BigEndian.AppendUint64(b, d.ExactHash)
	b = binary.BigEndian.AppendUint64(b, uint64(d.Time.UnixNano()))
	if len(d.Sketch) > 0 || d.Chars > 0 || len(d.Bands) > 0 || d.Text != "" {
		b[start] = docFormatSketch
		b = binary.AppendUvarint(b, uint64(d.Chars))
		b = append(b, byte(len(d.Sketch)))
		for _, v := range d.Sketch {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		if len(d.Bands) > 0 || d.Text != "" {
			b[start] = docFormatBands
			b = append(b, byte(len(d.Bands)))
			for _, h := range d.Bands {
				b = binary.BigEndian.AppendUint64(b, h)
			}
		}
		if d.Text != "" {
			b[start] = docFormatText
			b = binary.AppendUvarint(b, uint64(len(d.Text)))
			b = append(b, d.Text...)
		}
	}
	return appendAttrs(b, d.Attrs)
}

// appendAttrs appends the attribute count and the attributes sorted by
// name, the tail of every docs cell.
func appendAttrs(b []byte, attrs map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(attrs)))
	switch len(attrs) {
	case 0:
		return b
	case 1:
		for k, v := range attrs {
			b = appendAttr(b, k, v)
		}
		return b
	}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = appendAttr(b, k, attrs[k])
	}
	return b
}

func appendAttr(b []byte, k, v string) []byte {
	b = binary.AppendUvarint(b, uint64(len(k)))
	b = append(b, k...)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}
