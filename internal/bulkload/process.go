package bulkload

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// item is one line of a batch.
type item struct {
	line int64
	text []byte
	// textOff and textLen place text in its batch's arena.
	textOff, textLen int
	long             bool
	rec              record
	err              error
	muts             []storage.Mutation
	owned            bool
	// A precomputed fingerprint's line takes the allocation-free path:
	// id is the record's id (a slice of the batch's arena; rec.id is
	// empty), vals its fp cell value (fpLen bytes) then its docs cell
	// value, in a buffer the item keeps across batches.
	fast  bool
	id    []byte
	vals  []byte
	fpLen int
}

// processBatch parses and fingerprints the batch's lines in parallel.
func (l *loader) processBatch(batch []item, format string) {
	w := min(l.cfg.Workers, len(batch))
	var wg sync.WaitGroup
	for k := range w {
		wg.Go(func() {
			// The worker's document for processFPItem, reused from line
			// to line.
			var doc kvindex.Document
			for i := k; i < len(batch); i += w {
				l.processItem(&batch[i], format, &doc)
			}
		})
	}
	wg.Wait()
}

// processItem parses one line (a document's is fingerprinted too) and
// encodes the record's cells, or sets it.err.
func (l *loader) processItem(it *item, format string, doc *kvindex.Document) {
	if it.long {
		it.err = fmt.Errorf("line longer than %d bytes", MaxLineBytes)
		return
	}
	if format != FormatDocs {
		l.processFPItem(it, doc)
		return
	}
	l.processDocItem(it)
}

// processDocItem is processItem for a JSON document line: the document is
// fingerprinted, and its cells (fp, docs and, when the index keeps band
// rows, band cells) are encoded as the mutations an online insert writes.
func (l *loader) processDocItem(it *item) {
	rec, err := parseDocLine(it.text)
	var text string // a short document's normalized text, for its docs cell (decide.Rule.KeepText)
	if err == nil {
		var res fingerprint.Result
		res, err = l.fpr.Fingerprint(fingerprint.Document{Title: rec.title, Body: rec.text})
		rec.fp, rec.titleFP, rec.exact = res.Simhash, res.TitleSimhash, res.ExactHash
		rec.sketch, rec.chars, rec.bands = res.Sketch, res.Chars, res.Bands
		text = decide.DefaultRule().KeepText(res.Chars, res.Text, kvindex.MaxTextBytes)
		rec.title, rec.text = "", ""
	}
	it.text = nil
	if err != nil {
		it.err = err
		return
	}
	it.rec = rec
	it.owned = l.docShard(uint64(rec.fp)) == l.cfg.Shard
	d := kvindex.Document{ID: rec.id, Fingerprint: rec.fp, TitleFingerprint: rec.titleFP, ExactHash: rec.exact, Time: rec.at, Attrs: rec.attrs, Sketch: rec.sketch, Chars: rec.chars, Bands: rec.bands, Text: text}
	// DocCells validates the id first (a bad one is rejected with
	// ValidateID's error), then the time and attributes.
	muts, err := l.bw.DocCells(d)
	if err != nil {
		it.err = err
		return
	}
	if it.owned {
		it.muts = muts
	}
}

// processFPItem is processItem for a precomputed fingerprint's line,
// without allocating: the id stays in the batch's arena and the cells are
// encoded into the item's buffer. d is scratch space for the document.
func (l *loader) processFPItem(it *item, d *kvindex.Document) {
	id, fp, at, err := parseFPFields(it.text)
	it.text = nil
	if err != nil {
		it.err = err
		return
	}
	it.rec = record{fp: fp, at: at}
	it.owned = l.docShard(uint64(fp)) == l.cfg.Shard
	// The string shares id's bytes, which stay unchanged until the batch
	// is committed; AppendDocCells keeps no reference to it.
	*d = kvindex.Document{ID: unsafe.String(unsafe.SliceData(id), len(id)), Fingerprint: fp, Time: at}
	// AppendDocCells validates the id and time as DocCells does (the
	// same errors).
	vals, fpLen, err := l.bw.AppendDocCells(it.vals[:0], d)
	if err != nil {
		it.err = err
		return
	}
	it.fast, it.id, it.vals, it.fpLen = true, id, vals, fpLen
}
