package bulkload

import (
	"errors"
	"fmt"
	"time"

	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// ErrNotRecord is returned by Encoder for a line that is not a record (a
// blank line, a comment line of fingerprint input): a load skips it
// without listing it as a reject.
var ErrNotRecord = errSkip

// Record is one input line made into what a load writes for it: the
// document's id, fingerprint, time and time bucket, and its fp, band and
// docs cells exactly as Run buffers them (kvindex.BulkWriter.DocCells; a band cell's
// stored value is empty, its bucket is the cell's timestamp).
type Record struct {
	ID          string
	Fingerprint fingerprint.Fingerprint
	Time        time.Time
	Bucket      uint32
	Cells       []storage.Mutation
}

// Encoder turns input lines into Records the way Run parses, fingerprints
// and encodes them, for programs that run the per-record half of a load
// elsewhere (a worker of a distributed job) and write the sorted cells
// themselves. It is safe for concurrent use when its Fingerprinter is.
type Encoder struct {
	ix  Index
	fpr *fingerprint.Fingerprinter
}

// NewEncoder returns an Encoder of records for ix. fpr fingerprints
// documents; it may be nil when only fingerprint lines are encoded.
func NewEncoder(ix Index, fpr *fingerprint.Fingerprinter) *Encoder {
	return &Encoder{ix: ix, fpr: fpr}
}

// Encode parses one line of the given format (FormatDocs or
// FormatFingerprints, without its end of line) into its Record. A bad
// line's error is the reason Run lists in its rejects file; a line that is
// no record returns an error matching ErrNotRecord.
func (e *Encoder) Encode(line []byte, format string) (Record, error) {
	if len(line) > MaxLineBytes {
		return Record{}, fmt.Errorf("line longer than %d bytes", MaxLineBytes)
	}
	var d kvindex.Document
	switch format {
	case FormatDocs:
		rec, err := parseDocLine(line)
		if err != nil {
			return Record{}, err
		}
		if e.fpr == nil {
			return Record{}, errors.New("bulkload: encoder has no fingerprinter for documents")
		}
		res, err := e.fpr.Fingerprint(fingerprint.Document{Title: rec.title, Body: rec.text})
		if err != nil {
			return Record{}, err
		}
		d = kvindex.Document{ID: rec.id, Fingerprint: res.Simhash, TitleFingerprint: res.TitleSimhash, ExactHash: res.ExactHash,
			Time: rec.at, Attrs: rec.attrs, Sketch: res.Sketch, Chars: res.Chars, Bands: res.Bands,
			Text: decide.DefaultRule().KeepText(res.Chars, res.Text, kvindex.MaxTextBytes)}
	case FormatFingerprints:
		rec, err := parseFPLine(line)
		if err != nil {
			return Record{}, err
		}
		d = kvindex.Document{ID: rec.id, Fingerprint: rec.fp, Time: rec.at}
	default:
		return Record{}, fmt.Errorf("%w: format %q: want docs or fp", ErrConfig, format)
	}
	muts, err := e.ix.BulkWriter().DocCells(d)
	if err != nil {
		return Record{}, err
	}
	return Record{ID: d.ID, Fingerprint: d.Fingerprint, Time: d.Time.UTC(), Bucket: e.ix.Buckets().Of(d.Time), Cells: muts}, nil
}
