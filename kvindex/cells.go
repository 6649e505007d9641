package kvindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/simdex/simdex/fingerprint"
)

// Limits on documents. They keep one docs cell small (well under HBase's
// tuned read path) and ids usable as row keys.
const (
	MaxIDBytes        = 256
	MaxAttrs          = 64
	MaxAttrKeyBytes   = 128
	MaxAttrValueBytes = 4096
)

var (
	minTime = time.Unix(0, 0).UTC().AddDate(-100, 0, 0) // 1870
	maxTime = time.Unix(0, 0).UTC().AddDate(200, 0, 0)  // 2170
)

// Document is what the index stores per document id.
type Document struct {
	// ID is 1..MaxIDBytes bytes of UTF-8 without control characters.
	ID string
	// Fingerprint is the body simhash the index searches.
	Fingerprint fingerprint.Fingerprint
	// TitleFingerprint is the title simhash (0 when unknown).
	TitleFingerprint fingerprint.Fingerprint
	// ExactHash is the hash of the normalized body (0 when unknown); equal
	// hashes at distance 0 are reported as exact duplicates.
	ExactHash uint64
	// Time orders documents: among near-duplicates the earliest (Time, ID)
	// is the original. The zero time means "now" on insert. Stored with
	// nanosecond precision; must lie in 1870..2170.
	Time time.Time
	// Attrs are free attributes returned with the document.
	Attrs map[string]string
	// Sketch is the MinHash sketch of the normalized body (nil when the
	// document was inserted as a bare fingerprint, or stored in a docs cell
	// of format 0x01): the second check on candidates compares it.
	Sketch fingerprint.Sketch
	// Chars is the length of the normalized body in characters (0 when
	// unknown); the decision rule picks its thresholds by it.
	Chars int
	// Bands is the LSH band signature of the body (nil for a bare
	// fingerprint). In an index with bands (Index.HasBands) a document is
	// also stored in its NumBands band rows, and the docs cell keeps the
	// hashes so delete and replace can remove those cells; an index
	// without bands ignores them.
	Bands fingerprint.Bands
	// Text is the normalized body of a short document ("" when not kept):
	// the decision rule aligns short texts with it. Stored in docs cells
	// of format 0x04 (at most MaxTextBytes bytes of UTF-8).
	Text string
	// Body is the whole normalized body of a document being inserted, for
	// Config.Confirm (which sentences of it are template); never stored,
	// empty on every document the index reads.
	Body string
}

// MaxChars bounds Document.Chars (the fingerprinter's default MaxBytes).
const MaxChars = 16 << 20

// MaxTextBytes bounds Document.Text: the text is kept for short documents
// only (under the decision rule's TextChars, 4000 characters by default;
// a longer text in bytes is not kept).
const MaxTextBytes = 16384

// ValidateID reports whether id can be a document id.
func ValidateID(id string) error {
	// ASCII ids (nearly all) are checked in one pass over the bytes.
	ascii := len(id) > 0 && len(id) <= MaxIDBytes
	for i := 0; ascii && i < len(id); i++ {
		b := id[i]
		ascii = b >= 0x20 && b < 0x7f
	}
	if ascii {
		return nil
	}
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrBadID)
	case len(id) > MaxIDBytes:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrBadID, len(id), MaxIDBytes)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: not valid UTF-8", ErrBadID)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: control character %U", ErrBadID, r)
		}
	}
	return nil
}

// validate checks a document for storage (after its zero time was filled).
func (d *Document) validate() error {
	if err := ValidateID(d.ID); err != nil {
		return err
	}
	if d.Time.Before(minTime) || d.Time.After(maxTime) {
		return fmt.Errorf("%w: time %s outside %d..%d", ErrBadDocument, d.Time.Format(time.RFC3339), minTime.Year(), maxTime.Year())
	}
	if err := d.Sketch.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadDocument, err)
	}
	if err := d.Bands.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadDocument, err)
	}
	if d.Chars < 0 || d.Chars > MaxChars {
		return fmt.Errorf("%w: chars %d outside 0..%d", ErrBadDocument, d.Chars, MaxChars)
	}
	if len(d.Text) > MaxTextBytes || !utf8.ValidString(d.Text) {
		return fmt.Errorf("%w: text of %d bytes: want at most %d bytes of UTF-8", ErrBadDocument, len(d.Text), MaxTextBytes)
	}
	if len(d.Attrs) > MaxAttrs {
		return fmt.Errorf("%w: %d attributes, at most %d", ErrBadDocument, len(d.Attrs), MaxAttrs)
	}
	if len(d.Attrs) > 0 { // ranging over a nil map still sets up an iterator: 3% of a bulk load's parsing
		for k, v := range d.Attrs {
			switch {
			case k == "" || len(k) > MaxAttrKeyBytes:
				return fmt.Errorf("%w: attribute name of %d bytes, want 1..%d", ErrBadDocument, len(k), MaxAttrKeyBytes)
			case len(v) > MaxAttrValueBytes:
				return fmt.Errorf("%w: attribute %q: value of %d bytes, at most %d", ErrBadDocument, k, len(v), MaxAttrValueBytes)
			case !utf8.ValidString(k) || !utf8.ValidString(v):
				return fmt.Errorf("%w: attribute %q: not valid UTF-8", ErrBadDocument, k)
			}
		}
	}
	return nil
}

// docs cell: the single cell of a docs row.
var docQualifier = []byte("d")

// Docs cell formats. 0x01 has no sketch; 0x02 (since recipe 3) adds the
// body's length and sketch; 0x03 adds the band hashes after the sketch (a
// document stored in an index with bands); 0x04 adds the normalized text of
// a short document after the (possibly empty) band hashes. A document
// without a sketch is still written as 0x01, one without bands as 0x02 and
// one without text as 0x03, so older documents keep their bytes. 0x05 (an
// index of format 5) is 0x01 without the title fingerprint and exact hash,
// for a bare fingerprint, where both are zero: a bulk load of precomputed
// fingerprints writes 16 bytes less per document.
const (
	docFormat        = 0x01
	docFormatSketch  = 0x02
	docFormatBands   = 0x03
	docFormatText    = 0x04
	docFormatCompact = 0x05
)

// encodeDoc is the docs cell value (docs/FORMAT.md, "docs table"):
//
//	byte 0      format 0x01..0x04 (0x05 below)
//	bytes 1-8   fingerprint, big-endian
//	bytes 9-16  title fingerprint
//	bytes 17-24 exact hash
//	bytes 25-32 time, Unix nanoseconds, big-endian two's complement
//	0x02, 0x03: uvarint chars; byte n (0..64); n sketch values, 4 bytes
//	            each, big-endian, strictly ascending
//	0x03, 0x04: byte m (fingerprint.NumBands = 32, or 33..44 in an index of
//	            format 4: the band hashes and then m - 32 text keys; 0x04
//	            also 0); m hashes, 8 bytes each, big-endian, in band
//	            order, then the text keys in key order
//	0x04 only:  uvarint len (1..MaxTextBytes), the normalized text (UTF-8)
//	uvarint     number of attributes, then per attribute sorted by name:
//	            uvarint len, name, uvarint len, value
//
// or, when compact (an index of format 5) and d is a bare fingerprint (no
// title fingerprint, exact hash, sketch, length, bands or text):
//
//	byte 0      format 0x05
//	bytes 1-8   fingerprint, big-endian
//	bytes 9-16  time, Unix nanoseconds, big-endian two's complement
//	uvarint     number of attributes, then the attributes as above
func encodeDoc(d Document, compact bool) []byte {
	return appendDoc(make([]byte, 0, 48+len(d.Sketch)*4+len(d.Bands)*8+len(d.Text)+len(d.Attrs)*16), &d, compact)
}

// bareFingerprint reports whether d's docs cell may be of format 0x05.
func bareFingerprint(d *Document) bool {
	return d.TitleFingerprint == 0 && d.ExactHash == 0 && len(d.Sketch) == 0 && d.Chars == 0 && len(d.Bands) == 0 && d.Text == ""
}

var errCell = errors.New("bad cell")

// docCellFingerprint is the fingerprint a docs cell carries, read without
// decoding the rest of the cell; ok is false when the cell is too short or
// of an unknown format.
func docCellFingerprint(v []byte) (fp uint64, ok bool) {
	switch {
	case len(v) >= 18 && v[0] == docFormatCompact, len(v) >= 34 && v[0] >= docFormat && v[0] <= docFormatText:
		return binary.BigEndian.Uint64(v[1:]), true
	}
	return 0, false
}

func decodeDoc(id string, v []byte) (Document, error) {
	var d Document
	var p []byte
	switch {
	case len(v) >= 18 && v[0] == docFormatCompact:
		d = Document{
			ID:          id,
			Fingerprint: fingerprint.Fingerprint(binary.BigEndian.Uint64(v[1:])),
			Time:        time.Unix(0, int64(binary.BigEndian.Uint64(v[9:]))).UTC(),
		}
		p = v[17:]
	case len(v) >= 34 && v[0] >= docFormat && v[0] <= docFormatText:
		d = Document{
			ID:               id,
			Fingerprint:      fingerprint.Fingerprint(binary.BigEndian.Uint64(v[1:])),
			TitleFingerprint: fingerprint.Fingerprint(binary.BigEndian.Uint64(v[9:])),
			ExactHash:        binary.BigEndian.Uint64(v[17:]),
			Time:             time.Unix(0, int64(binary.BigEndian.Uint64(v[25:]))).UTC(),
		}
		p = v[33:]
	default:
		return Document{}, fmt.Errorf("%w: docs cell of %d bytes, format %#x", errCell, len(v), first(v))
	}
	if v[0] >= docFormatSketch && v[0] <= docFormatText {
		chars, k := binary.Uvarint(p)
		if k <= 0 || chars > MaxChars {
			return Document{}, fmt.Errorf("%w: chars", errCell)
		}
		d.Chars, p = int(chars), p[k:]
		if len(p) < 1 || int(p[0]) > fingerprint.SketchSize || len(p) < 1+4*int(p[0]) {
			return Document{}, fmt.Errorf("%w: sketch length", errCell)
		}
		n := int(p[0])
		p = p[1:]
		if n > 0 {
			d.Sketch = make(fingerprint.Sketch, n)
			for i := range d.Sketch {
				d.Sketch[i] = binary.BigEndian.Uint32(p[4*i:])
			}
			if err := d.Sketch.Validate(); err != nil {
				return Document{}, fmt.Errorf("%w: %v", errCell, err)
			}
		}
		p = p[4*n:]
	}
	if v[0] == docFormatBands || v[0] == docFormatText {
		if len(p) < 1 {
			return Document{}, fmt.Errorf("%w: bands length", errCell)
		}
		m := int(p[0])
		if (m < fingerprint.NumBands || m > fingerprint.NumBands+fingerprint.MaxTextKeys) && (v[0] == docFormatBands || m != 0) || len(p) < 1+8*m {
			return Document{}, fmt.Errorf("%w: bands length", errCell)
		}
		if m > 0 {
			d.Bands = make(fingerprint.Bands, m)
			for i := range d.Bands {
				d.Bands[i] = binary.BigEndian.Uint64(p[1+8*i:])
			}
		}
		p = p[1+8*m:]
	}
	if v[0] == docFormatText {
		n, k := binary.Uvarint(p)
		if k <= 0 || n == 0 || n > MaxTextBytes || n > uint64(len(p)-k) {
			return Document{}, fmt.Errorf("%w: text length", errCell)
		}
		text := p[k : k+int(n)]
		if !utf8.Valid(text) {
			return Document{}, fmt.Errorf("%w: text is not UTF-8", errCell)
		}
		d.Text, p = string(text), p[k+int(n):]
	}
	n, k := binary.Uvarint(p)
	if k <= 0 || n > MaxAttrs {
		return Document{}, fmt.Errorf("%w: attribute count", errCell)
	}
	p = p[k:]
	if n > 0 {
		d.Attrs = make(map[string]string, n)
	}
	for i := uint64(0); i < n; i++ {
		var key, val []byte
		var err error
		if key, p, err = lenPrefixed(p, MaxAttrKeyBytes); err != nil {
			return Document{}, err
		}
		if val, p, err = lenPrefixed(p, MaxAttrValueBytes); err != nil {
			return Document{}, err
		}
		d.Attrs[string(key)] = string(val)
	}
	if len(p) != 0 {
		return Document{}, fmt.Errorf("%w: %d trailing bytes", errCell, len(p))
	}
	return d, nil
}

func lenPrefixed(p []byte, max int) (field, rest []byte, err error) {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(max) || n > uint64(len(p)-k) {
		return nil, nil, fmt.Errorf("%w: bad attribute length", errCell)
	}
	return p[k : k+int(n)], p[k+int(n):], nil
}

func first(v []byte) byte {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// fp cells: qualifier = document id; value (docs/FORMAT.md, "fp table"):
//
//	byte 0      format 0x01
//	bytes 1-8   document time, Unix nanoseconds, big-endian
//	bytes 9-16  exact hash
//
// or, in an index of format 5 for a document without an exact hash (a
// bare fingerprint), format 0x02: bytes 1-8 the time, nothing after.
const (
	fpFormat         = 0x01
	fpFormatNoExact  = 0x02
	fpCellLen        = 17
	fpCellLenNoExact = 9
)

func encodeFPCell(t time.Time, exact uint64, compact bool) []byte {
	return appendFPCell(make([]byte, 0, fpCellLen), t, exact, compact)
}

func decodeFPCell(v []byte) (time.Time, uint64, error) {
	switch {
	case len(v) == fpCellLen && v[0] == fpFormat:
		return time.Unix(0, int64(binary.BigEndian.Uint64(v[1:]))).UTC(), binary.BigEndian.Uint64(v[9:]), nil
	case len(v) == fpCellLenNoExact && v[0] == fpFormatNoExact:
		return time.Unix(0, int64(binary.BigEndian.Uint64(v[1:]))).UTC(), 0, nil
	}
	return time.Time{}, 0, fmt.Errorf("%w: fp cell of %d bytes, format %#x", errCell, len(v), first(v))
}
