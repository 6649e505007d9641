package sparkjob

// Batch self-dedup on Spark (spark/simdex_dedup.py): every pair of
// documents of a set within Hamming distance k, found by the
// block-permutation join of Manku, Jain and Das Sarma (WWW 2007, batch
// mode), optionally with the pairs that share an LSH band row, confirmed
// by the decision rule, and the connected components of the confirmed
// pairs as cluster ids. The Spark side only moves rows: every key, every
// decoded document and every verdict comes from the functions below.
//
//  1. DedupMap (one worker per input partition): encodes each line with
//     bulkload.Encoder, as a load would store it, and writes one document
//     frame per record: its fingerprint, its block keys (one per table of
//     the layout: Permuter.Prefix of the permuted fingerprint), its LSH
//     band hashes (texts the rule can relate at any distance, when asked),
//     its text keys, the same keys scoped to its source (kvindex.
//     SourceTextKey, when its attributes name one: DedupConfig.SourceAttr)
//     and its docs cell (the stored document the judge reads).
//  2. The job groups documents by (table, prefix): two fingerprints within
//     k <= K agree on the prefix of at least one table, so every pair
//     within k meets in some group. A pair is emitted by the first table
//     whose prefixes its two fingerprints share (OwnerTable), so it is
//     emitted once without a distinct; with bands, pairs beyond k that
//     share a band are emitted by their first shared band.
//  3. The job counts the documents that keyed each text key and each
//     scoped key (what an index's text-key rows and the rows scoped to a
//     source would hold) and gives each side of a pair the counts of its
//     keys, overall and among its source's documents, from which the judge
//     learns its template, as a check of its text naming its source would.
//  4. DedupJudge (one worker per partition of candidate pairs): decodes
//     both docs cells and judges the pair (JudgeSides): the rule of
//     package decide on the two stored documents, each with its template
//     (detect.Judge.SourceTemplate: what many of the set's documents
//     share, or many of its source's), each side taken as the query in
//     turn, as a load's self-dedup report judges them.
//  5. The job labels the connected components of the confirmed pairs with
//     their smallest document id (Components on the driver, or min-label
//     propagation on Spark).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/detect"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// Dedup frames, after the frame header of frames.go:
//
//	'd' document  order (8) | fingerprint (8) | tables (1) | a block key (8)
//	              per table | bands (1) | a band hash (8) per band |
//	              text keys (1) | a text key (8) per key |
//	              scoped keys (1) | a scoped key (8) per key: the i-th is
//	              kvindex.SourceTextKey of the document's source and the
//	              i-th text key (0 keys: no source) |
//	              uvarint length + id | docs cell (the rest)
//	'p' pair      uvarint length + id, uvarint length + docs cell, for
//	              each side; then, for each side, uvarint n and n times a
//	              text key (8) and uvarint the number of documents that
//	              keyed it (absent: no counts, no template); then, for each
//	              side, uvarint n and n times a text key (8) and uvarint
//	              the number of the documents of its source that keyed it
//	              (absent, or n = 0: no source, its template learned from
//	              the overall counts alone)
//	'c' confirmed JSON of a PairRow
//	'x' reject    JSON {"where": ..., "reason": ...} (frames.go)
//	'e' end       JSON of the worker's counts (frames.go)
//
// Block keys, band hashes, text keys and scoped keys are 64-bit values the
// job compares for equality only. The scoped keys are counted like text
// keys but make no pairs: an index's scoped rows name no candidates
// either (their documents are in the overall rows).
const (
	FrameDocument  = 'd'
	FramePair      = 'p'
	FrameConfirmed = 'c'
)

// DedupConfig configures the dedup workers.
type DedupConfig struct {
	// Layout is the block-permutation layout of the block keys
	// (cmd/simdex-spark's default is fingerprint.DefaultLayout).
	Layout fingerprint.Layout
	// K is the largest distance of a pair, 0..Layout.K.
	K int
	// Format of the input lines: bulkload.FormatDocs or FormatFingerprints.
	Format string
	// Bands makes DedupMap write the LSH band hashes of texts the rule can
	// relate at any distance (decide.Rule.AnyDistance), and makes pairs of
	// the documents beyond k that share a band or a text key held by at
	// most kvindex.TextKeyMaxDocs documents: the candidates a check finds
	// through an index's band and text-key rows.
	Bands bool
	// Policy says which relations confirm a pair, in either direction
	// (JudgePair); cmd/simdex-spark's default is DefaultDedupPolicy.
	Policy decide.Policy
	// NewFingerprinter builds the fingerprinter (documents only; default
	// fingerprint.New(fingerprint.DefaultConfig())).
	NewFingerprinter func() (*fingerprint.Fingerprinter, error)
	// SourceAttr is the document attribute that names its source (a site,
	// a mailing list), as kvindex.Config.SourceAttr names it for a new
	// index (the server's and cmd/bulkload's --source-attr): "" is
	// kvindex.DefaultSourceAttr, kvindex.NoSourceAttr none. DedupMap keys a
	// document that names one under its source too, so the judge learns
	// the source's template as a check naming the source would.
	SourceAttr string
	// FailAfter, when positive, makes a worker fail after that many input
	// lines or pairs, as a killed task would (for tests of retries).
	FailAfter int64
}

// DefaultDedupPolicy is what confirms a pair by default: a self-dedup is
// undirected, so a pair counts when either document relates to the other
// (near-identical, or one an excerpt of the other), as in a load's
// self-dedup report.
const DefaultDedupPolicy = decide.PolicyCopy

// Validate reports the first unusable setting.
func (c DedupConfig) Validate() error {
	if err := c.Layout.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if c.K < 0 || c.K > c.Layout.K {
		return fmt.Errorf("%w: k=%d: want 0..%d (the layout's K; a larger k needs a layout with a larger K)", ErrConfig, c.K, c.Layout.K)
	}
	if c.Format != bulkload.FormatDocs && c.Format != bulkload.FormatFingerprints {
		return fmt.Errorf("%w: format %q: want docs or fp", ErrConfig, c.Format)
	}
	if len(c.SourceAttr) > kvindex.MaxAttrKeyBytes {
		return fmt.Errorf("%w: source attribute of %d bytes, at most %d", ErrConfig, len(c.SourceAttr), kvindex.MaxAttrKeyBytes)
	}
	return nil
}

// memMeta is a storage.Store that holds an index's meta row and nothing
// else: the index a dedup worker encodes and decodes documents with is
// created in it, so documents are encoded as a new index would store them.
type memMeta struct{ cells []storage.Cell }

func (s *memMeta) Get(_ context.Context, keys []storage.RowKey) ([]storage.Row, error) {
	out := make([]storage.Row, len(keys))
	for i, k := range keys {
		out[i].Key = k.Key
		if k.Table == storage.TableMeta && string(k.Key) == "simdex" {
			out[i].Cells = slices.Clone(s.cells)
		}
	}
	return out, nil
}

func (s *memMeta) Mutate(_ context.Context, muts []storage.Mutation) error {
	for _, m := range muts {
		if m.Table != storage.TableMeta || string(m.Row) != "simdex" || m.Kind != storage.Put {
			return fmt.Errorf("%w: a dedup worker's index writes nothing but its meta row", storage.ErrStore)
		}
		s.cells = slices.DeleteFunc(s.cells, func(c storage.Cell) bool { return bytes.Equal(c.Qualifier, m.Qualifier) })
		s.cells = append(s.cells, storage.Cell{Qualifier: slices.Clone(m.Qualifier), Value: slices.Clone(m.Value)})
	}
	slices.SortFunc(s.cells, func(a, b storage.Cell) int { return bytes.Compare(a.Qualifier, b.Qualifier) })
	return nil
}

func (s *memMeta) Scan(context.Context, storage.Table, []byte, []byte, func(storage.Row) error) error {
	return nil
}

func (s *memMeta) Close() error { return nil }

// DedupIndex returns the index dedup workers encode and decode documents
// with: a new index (current format, bands and text keys; sourceAttr as
// DedupConfig.SourceAttr) over a store that holds only its meta row. Its
// SourceOf names a document's source.
func DedupIndex(ctx context.Context, sourceAttr string) (*kvindex.Index, error) {
	return kvindex.Open(ctx, &memMeta{}, kvindex.Config{Layout: fingerprint.DefaultLayout, BucketWidth: kvindex.DefaultBucketWidth,
		Bands: kvindex.BandsOn, RecipeVersion: fingerprint.RecipeVersion, SourceAttr: sourceAttr})
}

// DedupDoc is one document of a dedup: its id, the order of its record in
// the job's input, and the stored document (decoded from Cell).
type DedupDoc struct {
	ID    string
	Order uint64
	Doc   kvindex.Document
	// Cell is the document's docs cell, as a load stores it.
	Cell []byte
}

// dedupEncoder encodes input lines into DedupDocs.
type dedupEncoder struct {
	cfg   DedupConfig
	ix    *kvindex.Index
	enc   *bulkload.Encoder
	perms []fingerprint.Permuter
	rule  decide.Rule
}

func newDedupEncoder(ctx context.Context, cfg DedupConfig) (*dedupEncoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ix, err := DedupIndex(ctx, cfg.SourceAttr)
	if err != nil {
		return nil, err
	}
	var fpr *fingerprint.Fingerprinter
	if cfg.Format == bulkload.FormatDocs {
		if cfg.NewFingerprinter == nil {
			cfg.NewFingerprinter = func() (*fingerprint.Fingerprinter, error) { return fingerprint.New(fingerprint.DefaultConfig()) }
		}
		if fpr, err = cfg.NewFingerprinter(); err != nil {
			return nil, err
		}
	}
	return &dedupEncoder{cfg: cfg, ix: ix, enc: bulkload.NewEncoder(ix, fpr), perms: cfg.Layout.Permuters(), rule: decide.DefaultRule()}, nil
}

// encode makes one input line into its document; errors as
// bulkload.Encoder's (ErrNotRecord for a line that is no record).
func (e *dedupEncoder) encode(line []byte, order uint64) (DedupDoc, error) {
	rec, err := e.enc.Encode(line, e.cfg.Format)
	if err != nil {
		return DedupDoc{}, err
	}
	for _, c := range rec.Cells {
		if c.Table == storage.TableDocs {
			d, err := e.ix.DecodeDocument(storage.Row{Key: c.Row, Cells: []storage.Cell{{Qualifier: c.Qualifier, Value: c.Value}}})
			if err != nil {
				return DedupDoc{}, err
			}
			return DedupDoc{ID: rec.ID, Order: order, Doc: d, Cell: c.Value}, nil
		}
	}
	return DedupDoc{}, fmt.Errorf("sparkjob: record %q has no docs cell", rec.ID)
}

// BlockKeys returns a fingerprint's block key in each table of the layout:
// the prefix of its permuted form.
func BlockKeys(perms []fingerprint.Permuter, fp fingerprint.Fingerprint) []uint64 {
	out := make([]uint64, len(perms))
	for t, p := range perms {
		out[t] = p.Prefix(p.Permute(fp))
	}
	return out
}

// OwnerTable is the first table in which a and b have the same block key
// (-1 when none): the table whose group emits the pair.
func OwnerTable(perms []fingerprint.Permuter, a, b fingerprint.Fingerprint) int {
	for t, p := range perms {
		if p.Prefix(p.Permute(a)) == p.Prefix(p.Permute(b)) {
			return t
		}
	}
	return -1
}

// DedupBands returns the LSH band hashes a document is grouped by when
// bands are on: its stored LSH bands, when the rule can relate a text of
// its length at any distance (as a check looks up a text's band rows);
// nil otherwise. Band i is the i-th value.
func DedupBands(rule decide.Rule, d kvindex.Document) []uint64 {
	lsh := d.Bands.LSH()
	if len(lsh) == 0 || !rule.AnyDistance(d.Chars) {
		return nil
	}
	return lsh
}

// DedupMapStats are a dedup map worker's counts, its end frame.
type DedupMapStats struct {
	Lines      int64 `json:"lines"`
	Records    int64 `json:"records"`
	Rejected   int64 `json:"rejected"`
	InputBytes int64 `json:"input_bytes"`
	WithBands  int64 `json:"with_bands"`
}

// DedupMap reads input lines "order TAB where TAB line" (as Map) and
// writes a document frame per record, a reject frame per bad line, then
// the end frame.
func DedupMap(ctx context.Context, cfg DedupConfig, in io.Reader, out io.Writer) (DedupMapStats, error) {
	var st DedupMapStats
	e, err := newDedupEncoder(ctx, cfg)
	if err != nil {
		return st, err
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	br := bufio.NewReaderSize(in, 1<<20)
	var line, buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return st, err
		}
		if len(line) > 0 {
			st.Lines++
			if cfg.FailAfter > 0 && st.Lines > cfg.FailAfter {
				return st, ErrFailAsked
			}
			if buf, err = e.line(bytes.TrimRight(line, "\r\n"), bw, buf, &st); err != nil {
				return st, err
			}
			line = line[:0]
		}
		if err != nil { // io.EOF
			break
		}
		if st.Lines%1024 == 0 && ctx.Err() != nil {
			return st, ctx.Err()
		}
	}
	end, _ := json.Marshal(st)
	if err := writeFrame(bw, FrameEnd, end); err != nil {
		return st, err
	}
	return st, bw.Flush()
}

// line handles one input line of DedupMap.
func (e *dedupEncoder) line(line []byte, w io.Writer, buf []byte, st *DedupMapStats) ([]byte, error) {
	orderField, rest, ok1 := bytes.Cut(line, []byte{'\t'})
	where, raw, ok2 := bytes.Cut(rest, []byte{'\t'})
	if !ok1 || !ok2 {
		return buf, fmt.Errorf("%w: input line without order and where fields", ErrConfig)
	}
	order, err := strconv.ParseUint(string(orderField), 10, 64)
	if err != nil {
		return buf, fmt.Errorf("%w: order %q: %v", ErrConfig, orderField, err)
	}
	st.InputBytes += int64(len(raw)) + 1
	d, err := e.encode(raw, order)
	switch {
	case errors.Is(err, bulkload.ErrNotRecord):
		return buf, nil
	case err != nil:
		st.Rejected++
		b, _ := json.Marshal(struct {
			Where  string `json:"where"`
			Reason string `json:"reason"`
		}{string(where), err.Error()})
		return buf, writeFrame(w, FrameReject, b)
	}
	st.Records++
	var bands []uint64
	if e.cfg.Bands {
		bands = DedupBands(e.rule, d.Doc)
	}
	if len(bands) > 0 {
		st.WithBands++
	}
	textKeys := d.Doc.Bands.TextKeys()
	buf = appendDocFrame(buf[:0], d, BlockKeys(e.perms, d.Doc.Fingerprint), bands, textKeys, ScopedKeys(e.ix.SourceOf(d.Doc.Attrs), textKeys))
	return buf, writeFrame(w, FrameDocument, buf)
}

// ScopedKeys returns text keys scoped to source (kvindex.SourceTextKey of
// each, in order): the rows an index keys a document of that source
// under besides its text keys' own. Nil without a source.
func ScopedKeys(source string, textKeys []uint64) []uint64 {
	if source == "" || len(textKeys) == 0 {
		return nil
	}
	out := make([]uint64, len(textKeys))
	for i, k := range textKeys {
		out[i] = kvindex.SourceTextKey(source, k)
	}
	return out
}

func appendDocFrame(b []byte, d DedupDoc, keys, bands, textKeys, scoped []uint64) []byte {
	b = binary.BigEndian.AppendUint64(b, d.Order)
	b = binary.BigEndian.AppendUint64(b, uint64(d.Doc.Fingerprint))
	for _, vs := range [][]uint64{keys, bands, textKeys, scoped} {
		b = append(b, byte(len(vs)))
		for _, v := range vs {
			b = binary.BigEndian.AppendUint64(b, v)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(d.ID)))
	b = append(b, d.ID...)
	return append(b, d.Cell...)
}

// docFrame is a decoded document frame.
type docFrame struct {
	order    uint64
	fp       fingerprint.Fingerprint
	keys     []uint64
	bands    []uint64
	textKeys []uint64
	scoped   []uint64 // textKeys scoped to the document's source (none without)
	id       string
	cell     []byte
}

func parseDocFrame(p []byte) (docFrame, error) {
	var f docFrame
	bad := fmt.Errorf("sparkjob: corrupt document frame")
	if len(p) < 17 {
		return f, bad
	}
	f.order, f.fp = binary.BigEndian.Uint64(p), fingerprint.Fingerprint(binary.BigEndian.Uint64(p[8:]))
	p = p[16:]
	for _, dst := range []*[]uint64{&f.keys, &f.bands, &f.textKeys, &f.scoped} {
		if len(p) < 1 || len(p) < 1+8*int(p[0]) {
			return f, bad
		}
		n := int(p[0])
		p = p[1:]
		for i := range n {
			*dst = append(*dst, binary.BigEndian.Uint64(p[8*i:]))
		}
		p = p[8*n:]
	}
	if len(f.scoped) != 0 && len(f.scoped) != len(f.textKeys) {
		return f, bad
	}
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return f, bad
	}
	f.id, f.cell = string(p[k:k+int(n)]), p[k+int(n):]
	return f, nil
}

// The relations of a confirmed pair (id_a < id_b).
const (
	PairNearIdentical = "near_identical" // the same text, give or take edits
	PairAIsExcerpt    = "a_is_excerpt"   // document a is mostly contained in b
	PairBIsExcerpt    = "b_is_excerpt"   // document b is mostly contained in a
)

// PairRow is one confirmed pair, as the job writes it.
type PairRow struct {
	IDA         string  `json:"id_a"`
	IDB         string  `json:"id_b"`
	Distance    int     `json:"distance"`
	Relation    string  `json:"relation"`
	Resemblance float64 `json:"resemblance"`
	Clause      string  `json:"clause"`
}

// JudgePair is JudgeSides without templates (detect.SideOf of each).
func JudgePair(rule decide.Rule, policy decide.Policy, a, b kvindex.Document, k int) (PairRow, bool) {
	return JudgeSides(rule, policy, a, b, detect.SideOf(a), detect.SideOf(b), k)
}

// JudgeSides decides whether two documents of a set are duplicates: the
// rule judges each as the query (sa, sb: its side with its template,
// StoredSide) against the other as stored, and the pair is confirmed when
// policy counts either verdict. k is the distance the pairs were found
// within: a pair found beyond it (through a band) is judged by the
// clauses that ignore the distance, as a check's band candidates are.
// a.ID must be below b.ID.
func JudgeSides(rule decide.Rule, policy decide.Policy, a, b kvindex.Document, sa, sb decide.Side, k int) (PairRow, bool) {
	dist := fingerprint.Distance(a.Fingerprint, b.Fingerprint)
	row := PairRow{IDA: a.ID, IDB: b.ID, Distance: dist}
	if v := rule.Judge(sa, sb, dist, k); v.Duplicate(policy) {
		row.Resemblance, row.Clause = v.Resemblance, v.Clause
		switch v.Relation {
		case decide.QueryIsExcerpt:
			row.Relation = PairAIsExcerpt
		case decide.StoredIsExcerpt:
			row.Relation = PairBIsExcerpt
		default:
			row.Relation = PairNearIdentical
		}
		return row, true
	}
	if v := rule.Judge(sb, sa, dist, k); v.Duplicate(policy) {
		row.Resemblance, row.Clause = v.Resemblance, v.Clause
		switch v.Relation {
		case decide.QueryIsExcerpt:
			row.Relation = PairBIsExcerpt
		case decide.StoredIsExcerpt:
			row.Relation = PairAIsExcerpt
		default:
			row.Relation = PairNearIdentical
		}
		return row, true
	}
	return row, false
}

// StoredSide is the rule's view of document d of a set as a query: its
// side, with the template learned from counts (the number of the set's
// documents that keyed each of its text keys, and of its source's
// documents, SetKeyCounts), as a check of its text naming its source
// learns it from an index's text-key rows and those scoped to the source
// (detect.Judge.StoredSides). j.Sketcher nil or counts.Docs nil: no
// template.
func StoredSide(j detect.Judge, d kvindex.Document, counts kvindex.KeyCounts) decide.Side {
	s := detect.SideOf(d)
	if counts.Docs != nil && d.Text != "" {
		s.Template, _ = j.SourceTemplate(d.Text, counts)
	}
	return s
}

// SetKeyCounts counts, over a set of documents, the documents that keyed
// each text key (each document's Bands.TextKeys()) and, among the
// documents of each source (sources[i] is docs[i]'s, "" for none), those
// that keyed it, as an index's text-key rows and the rows scoped to a
// source would hold them, and returns each document's counts by its
// position: KeyCounts.Docs by key, and for a document with a source
// KeyCounts.Source by the same (unscoped) keys. Sources are told apart by
// their scoped keys (kvindex.SourceTextKey), as the index's rows and the
// Spark job tell them apart.
func SetKeyCounts(docs []kvindex.Document, sources []string) []kvindex.KeyCounts {
	n, scopedN := map[uint64]int{}, map[uint64]int{}
	for i, d := range docs {
		for _, k := range d.Bands.TextKeys() {
			n[k]++
		}
		for _, k := range ScopedKeys(sources[i], d.Bands.TextKeys()) {
			scopedN[k]++
		}
	}
	out := make([]kvindex.KeyCounts, len(docs))
	for i, d := range docs {
		ks := d.Bands.TextKeys()
		if len(ks) == 0 {
			continue
		}
		out[i].Docs = make(map[uint64]int, len(ks))
		for _, k := range ks {
			out[i].Docs[k] = n[k]
		}
		if scoped := ScopedKeys(sources[i], ks); scoped != nil {
			out[i].Source = make(map[uint64]int, len(ks))
			for j, k := range ks {
				out[i].Source[k] = scopedN[scoped[j]]
			}
		}
	}
	return out
}

// DedupJudgeStats are a judge worker's counts, its end frame.
type DedupJudgeStats struct {
	Pairs     int64 `json:"pairs"`
	Confirmed int64 `json:"confirmed"`
	// BeyondK: pairs judged that are further apart than k (band and
	// text-key pairs).
	BeyondK int64 `json:"beyond_k"`
	// TextKeyMaxDocs is kvindex.TextKeyMaxDocs: a text key held by more
	// documents makes no pairs (a check skips such a row). The job reads it
	// from the end frame of a judge fed nothing.
	TextKeyMaxDocs int `json:"text_key_max_docs"`
}

// DedupJudge reads pair frames and writes a confirmed frame per pair the
// rule confirms (JudgePair under cfg.Policy), then the end frame.
func DedupJudge(ctx context.Context, cfg DedupConfig, in io.Reader, out io.Writer) (DedupJudgeStats, error) {
	st := DedupJudgeStats{TextKeyMaxDocs: kvindex.TextKeyMaxDocs}
	if err := cfg.Validate(); err != nil {
		return st, err
	}
	ix, err := DedupIndex(ctx, cfg.SourceAttr)
	if err != nil {
		return st, err
	}
	docQ, err := docsQualifier(ix)
	if err != nil {
		return st, err
	}
	j, err := dedupJudge(cfg)
	if err != nil {
		return st, err
	}
	br := bufio.NewReaderSize(in, 1<<20)
	bw := bufio.NewWriterSize(out, 1<<20)
	var buf []byte
	for {
		kind, p, err := readFrame(br, buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, err
		}
		buf = p
		if kind != FramePair {
			return st, fmt.Errorf("%w: frame %q in a judge's input", ErrConfig, kind)
		}
		st.Pairs++
		if cfg.FailAfter > 0 && st.Pairs > cfg.FailAfter {
			return st, ErrFailAsked
		}
		a, b, err := decodePair(ix, docQ, p)
		if err != nil {
			return st, err
		}
		if a.doc.ID > b.doc.ID {
			a, b = b, a
		}
		row, ok := JudgeSides(j.Rule, cfg.Policy, a.doc, b.doc, StoredSide(j, a.doc, a.counts), StoredSide(j, b.doc, b.counts), cfg.K)
		if row.Distance > cfg.K {
			st.BeyondK++
		}
		if ok {
			st.Confirmed++
			j, _ := json.Marshal(row)
			if err := writeFrame(bw, FrameConfirmed, j); err != nil {
				return st, err
			}
		}
		if st.Pairs%1024 == 0 && ctx.Err() != nil {
			return st, ctx.Err()
		}
	}
	end, _ := json.Marshal(st)
	if err := writeFrame(bw, FrameEnd, end); err != nil {
		return st, err
	}
	return st, bw.Flush()
}

// dedupJudge is the judge of a dedup: the default rule, and for texts the
// fingerprinter that sketches template sentences.
func dedupJudge(cfg DedupConfig) (detect.Judge, error) {
	j := detect.Judge{Rule: decide.DefaultRule(), Policy: cfg.Policy}
	if cfg.Format == bulkload.FormatDocs {
		newFP := cfg.NewFingerprinter
		if newFP == nil {
			newFP = func() (*fingerprint.Fingerprinter, error) { return fingerprint.New(fingerprint.DefaultConfig()) }
		}
		fpr, err := newFP()
		if err != nil {
			return j, err
		}
		j.Sketcher = fpr
	}
	return j, nil
}

// PairSide is one side of a pair frame: the document's id, its docs cell,
// the number of the set's documents that keyed each of its text keys
// (nil: none known) and, for a document with a source, the number of that
// source's documents that keyed each of them (by the unscoped key; nil:
// no source).
type PairSide struct {
	ID         string
	Cell       []byte
	KeyDocs    map[uint64]int
	SourceDocs map[uint64]int
}

// AppendPairFrame appends a pair frame's payload. The source counts are
// written only when a side has them, so a pair without sources is encoded
// as before they were counted.
func AppendPairFrame(b []byte, x, y PairSide) []byte {
	for _, f := range [][]byte{[]byte(x.ID), x.Cell, []byte(y.ID), y.Cell} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	counts := []map[uint64]int{x.KeyDocs, y.KeyDocs}
	if len(x.SourceDocs) > 0 || len(y.SourceDocs) > 0 {
		counts = append(counts, x.SourceDocs, y.SourceDocs)
	}
	for _, kd := range counts {
		b = binary.AppendUvarint(b, uint64(len(kd)))
		for _, k := range slices.Sorted(maps.Keys(kd)) {
			b = binary.BigEndian.AppendUint64(b, k)
			b = binary.AppendUvarint(b, uint64(kd[k]))
		}
	}
	return b
}

// pairSide is a decoded side of a pair frame.
type pairSide struct {
	doc    kvindex.Document
	counts kvindex.KeyCounts
}

func decodePair(ix *kvindex.Index, docQ, p []byte) (a, b pairSide, err error) {
	bad := fmt.Errorf("sparkjob: corrupt pair frame")
	var f [4][]byte
	for i := range f {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			return a, b, bad
		}
		f[i], p = p[k:k+int(n)], p[k+int(n):]
	}
	if a.doc, err = ix.DecodeDocument(storage.Row{Key: f[0], Cells: []storage.Cell{{Qualifier: docQ, Value: f[1]}}}); err != nil {
		return a, b, err
	}
	if b.doc, err = ix.DecodeDocument(storage.Row{Key: f[2], Cells: []storage.Cell{{Qualifier: docQ, Value: f[3]}}}); err != nil {
		return a, b, err
	}
	// The counts sections, each optional from where the frame ends: the
	// overall counts of a and b, then the source counts of a and b.
	for _, dst := range []*map[uint64]int{&a.counts.Docs, &b.counts.Docs, &a.counts.Source, &b.counts.Source} {
		if len(p) == 0 {
			break
		}
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k)/9 {
			return a, b, bad
		}
		p = p[k:]
		if n == 0 {
			continue
		}
		m := make(map[uint64]int, n)
		for range n {
			if len(p) < 9 {
				return a, b, bad
			}
			key := binary.BigEndian.Uint64(p)
			c, k := binary.Uvarint(p[8:])
			if k <= 0 || c > math.MaxInt32 {
				return a, b, bad
			}
			m[key] = int(c)
			p = p[8+k:]
		}
		*dst = m
	}
	if len(p) != 0 {
		return a, b, bad
	}
	return a, b, nil
}

// docsQualifier is the qualifier of ix's docs cells, as the encoder
// writes them.
func docsQualifier(ix *kvindex.Index) ([]byte, error) {
	rec, err := bulkload.NewEncoder(ix, nil).Encode([]byte("q,0000000000000001,0"), bulkload.FormatFingerprints)
	if err != nil {
		return nil, err
	}
	for _, c := range rec.Cells {
		if c.Table == storage.TableDocs {
			return c.Qualifier, nil
		}
	}
	return nil, fmt.Errorf("sparkjob: the encoder wrote no docs cell")
}
