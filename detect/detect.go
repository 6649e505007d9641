// Package detect answers "is this document a near-duplicate of one we
// have?" for every route that asks it: a check, a batch of checks and
// insert-if-unique (through kvindex.Config.Confirm). It takes the
// candidates the index finds (simhash rows within k, LSH band rows and
// text-key rows at any distance), reads the stored documents, learns from
// the query's text-key rows (overall, and scoped to its source when it
// names one) which of its sentences are template, and lets
// the rule (package decide) say how each stored document relates to the
// query; a policy says which relations make a duplicate. One pair gets one
// answer on every route, and a Go program embedding simdex gets the
// service's answer by calling Detector.Check.
package detect

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// Sketcher gives the sketch values of a piece of normalized text
// (*fingerprint.Fingerprinter).
type Sketcher interface {
	SketchValues(text string) []uint32
}

// Judge applies the rule and a policy to pairs; it needs no index, so an
// index's Config.Confirm can be made from it before the index is open.
type Judge struct {
	Rule decide.Rule
	// Policy is what insert-if-unique counts as a duplicate (a check
	// names its own in Options).
	Policy decide.Policy
	// Sketcher finds the sketch values of template sentences; nil turns
	// template detection off.
	Sketcher Sketcher
}

// Template returns what of a query's normalized text is template, given
// the number of stored documents in each of its text-key rows, and the
// template sentences themselves (for an explanation). A query that names
// a source learns its template with SourceTemplate.
func (j Judge) Template(text string, keyDocs map[uint64]int) (decide.Template, []string) {
	return j.SourceTemplate(text, kvindex.KeyCounts{Docs: keyDocs})
}

// SourceTemplate is Template given the counts of the text's key rows
// overall and in its source (decide.Rule.SourceTemplateKeys: what many
// documents share, or many of the source's).
func (j Judge) SourceTemplate(text string, counts kvindex.KeyCounts) (decide.Template, []string) {
	if j.Sketcher == nil || text == "" {
		return decide.Template{}, nil
	}
	keys := j.Rule.SourceTemplateKeys(counts.Docs, counts.Source)
	if len(keys) == 0 {
		return decide.Template{}, nil
	}
	var lines []string
	var b strings.Builder
	chars := 0
	for _, sp := range decide.TemplateSpans(text, keys) {
		part := text[sp[0]:sp[1]]
		b.WriteString(part)
		b.WriteByte('\n')
		chars += utf8.RuneCountInString(part)
		if part = strings.TrimSpace(part); part != "" && !slices.Contains(lines, part) {
			lines = append(lines, part)
		}
	}
	if len(lines) == 0 {
		return decide.Template{}, nil
	}
	return decide.Template{Keys: keys, Values: j.Sketcher.SketchValues(b.String()), Chars: chars}, lines
}

// Confirm is kvindex.Config.Confirm: the new document, its template
// learned from its key rows (and those scoped to the source its attributes
// name), judged against each candidate under the Judge's policy.
func (j Judge) Confirm(newDoc kvindex.Document, counts kvindex.KeyCounts, k int) func(kvindex.Document, int) bool {
	q := querySide(newDoc.Sketch, newDoc.Chars, newDoc.ExactHash, newDoc.Body, newDoc.Bands.TextKeys(), 1)
	q.Text = newDoc.Text
	q.Template, _ = j.SourceTemplate(newDoc.Body, counts)
	return func(stored kvindex.Document, distance int) bool {
		return j.Rule.Judge(q, SideOf(stored), distance, k).Duplicate(j.Policy)
	}
}

// SideOf is the rule's view of a stored document.
func SideOf(d kvindex.Document) decide.Side {
	s := decide.Side{Sketch: d.Sketch, Chars: d.Chars, ExactHash: d.ExactHash, Text: d.Text, Keys: d.Bands.TextKeys()}
	if d.Text != "" {
		s.Lead, _ = fingerprint.Sentences(d.Text)
	}
	return s
}

// querySide is the rule's view of a query (or a new document) whose whole
// normalized text is known. Its lead key costs a pass over the text, so it
// is found only for a query with candidates to judge.
func querySide(sketch fingerprint.Sketch, chars int, exact uint64, text string, keys []uint64, candidates int) decide.Side {
	s := decide.Side{Sketch: sketch, Chars: chars, ExactHash: exact, Text: text, Keys: keys}
	if candidates > 0 {
		s.Lead, _ = fingerprint.Sentences(text)
	}
	return s
}

// Index is what a Detector reads (*kvindex.Index).
type Index interface {
	LookupDocuments(ctx context.Context, qs []kvindex.Query, opt kvindex.LookupOptions) ([]kvindex.DocLookupResult, error)
	LookupBatch(ctx context.Context, fps []fingerprint.Fingerprint, opt kvindex.LookupOptions) ([]kvindex.LookupResult, error)
	Documents(ctx context.Context, ids []string) (map[string]kvindex.Document, error)
	KeyCounter
}

// Detector checks documents against an index.
type Detector struct {
	Judge
	ix Index
}

// New returns a Detector over ix.
func New(ix Index, j Judge) *Detector { return &Detector{Judge: j, ix: ix} }

// Query is one document to check: what fingerprint.Fingerprinter made of
// its text (QueryOf), or a bare fingerprint (only Fingerprint set).
type Query struct {
	Fingerprint fingerprint.Fingerprint
	ExactHash   uint64
	Sketch      fingerprint.Sketch
	Chars       int
	Bands       fingerprint.Bands
	// Text is the normalized body.
	Text string
	// Source names the query's source (the value a stored document of it
	// would have in the index's source attribute, kvindex.Index.SourceOf):
	// its template is then also what many of that source's documents share.
	// "" for none.
	Source string
}

// QueryOf is the query of a fingerprinted text.
func QueryOf(r fingerprint.Result) Query {
	return Query{Fingerprint: r.Simhash, ExactHash: r.ExactHash, Sketch: r.Sketch, Chars: r.Chars, Bands: r.Bands, Text: r.Text}
}

// Options narrow a check.
type Options struct {
	// Lookup gives k, the time window and the limit on duplicates.
	Lookup kvindex.LookupOptions
	// Policy says which relations are duplicates.
	Policy decide.Policy
}

// Hit is a stored document and how it relates to the query.
type Hit struct {
	kvindex.Hit
	decide.Verdict
	// Template lists the query's template lines (of Result.Template)
	// that the stored document holds too (by its text keys): the parts of
	// the pair left out of the comparison.
	Template []string
}

// Result is the answer to one query.
type Result struct {
	// Duplicates are the stored documents the policy counts, sorted by
	// distance, time and id, at most Options.Lookup.Limit of them.
	Duplicates []Hit
	// Related are stored documents in a relation the policy does not
	// count (e.g. a stored quote inside the query, under the default
	// policy), in the same order.
	Related []Hit
	// Template lists the query's sentences taken for template (normalized
	// text), left out of every comparison.
	Template []string
	// Candidates is the number of index residuals and band documents
	// examined.
	Candidates int
	// Truncated: more duplicates than the limit.
	Truncated bool
}

// Check answers every query: text queries (with a sketch) by their index,
// band and text-key rows in one read and their candidates' documents in
// another, bare fingerprints by their index rows and the distance alone.
func (d *Detector) Check(ctx context.Context, qs []Query, opt Options) ([]Result, error) {
	out := make([]Result, len(qs))
	var textIdx, bareIdx []int
	for i, q := range qs {
		if len(q.Sketch) > 0 {
			textIdx = append(textIdx, i)
		} else {
			bareIdx = append(bareIdx, i)
		}
	}
	if len(textIdx) > 0 {
		if err := d.checkText(ctx, qs, textIdx, opt, out); err != nil {
			return nil, err
		}
	}
	if len(bareIdx) > 0 {
		if err := d.checkBare(ctx, qs, bareIdx, opt, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (d *Detector) checkText(ctx context.Context, qs []Query, idx []int, opt Options, out []Result) error {
	kq := make([]kvindex.Query, len(idx))
	for n, i := range idx {
		q := qs[i]
		kq[n] = kvindex.Query{Fingerprint: q.Fingerprint, ExactHash: q.ExactHash, Source: q.Source}
		if d.Rule.AnyDistance(q.Chars) {
			kq[n].Bands = fingerprint.QueryBands(q.Bands, q.Chars, q.Text)
		}
	}
	lo := opt.Lookup
	res, err := d.ix.LookupDocuments(ctx, kq, lo)
	if err != nil {
		return err
	}
	for n, i := range idx {
		q := qs[i]
		side := querySide(q.Sketch, q.Chars, q.ExactHash, q.Text, q.Bands.TextKeys(), len(res[n].Hits))
		var lines []string
		side.Template, lines = d.SourceTemplate(q.Text, kvindex.KeyCounts{Docs: res[n].KeyDocs, Source: res[n].SourceKeyDocs})
		shared := templateSentences(q.Text, side.Template.Keys)
		r := Result{Template: lines, Candidates: res[n].Candidates + res[n].BandCandidates}
		for _, h := range res[n].Hits {
			doc := res[n].Docs[h.ID]
			v := d.Rule.Judge(side, SideOf(doc), h.Distance, lo.K)
			switch {
			case v.Duplicate(opt.Policy):
				r.Duplicates = append(r.Duplicates, Hit{h, v, shared.lines(doc, lines)})
			case v.Relation != decide.Overlap:
				r.Related = append(r.Related, Hit{h, v, shared.lines(doc, lines)})
			}
		}
		r.Duplicates, r.Truncated = limit(r.Duplicates, lo.Limit)
		r.Related, _ = limit(r.Related, lo.Limit)
		out[i] = r
	}
	return nil
}

func (d *Detector) checkBare(ctx context.Context, qs []Query, idx []int, opt Options, out []Result) error {
	fps := make([]fingerprint.Fingerprint, len(idx))
	for n, i := range idx {
		fps[n] = qs[i].Fingerprint
	}
	lo := opt.Lookup
	res, err := d.ix.LookupBatch(ctx, fps, lo)
	if err != nil {
		return err
	}
	for n, i := range idx {
		r := Result{Candidates: res[n].Candidates, Truncated: res[n].Truncated}
		for _, h := range res[n].Hits {
			v := d.Rule.Judge(decide.Side{}, decide.Side{}, h.Distance, lo.K)
			if v.Duplicate(opt.Policy) {
				r.Duplicates = append(r.Duplicates, Hit{Hit: h, Verdict: v})
			}
		}
		out[i] = r
	}
	return nil
}

func limit(hs []Hit, n int) ([]Hit, bool) {
	if n > 0 && len(hs) > n {
		return hs[:n:n], true
	}
	return hs, false
}

// Pair is a document (or a bare fingerprint) and another fingerprint
// within K of it, as a seen filter finds them: the document a feed would
// show and a fingerprint the reader has seen.
type Pair struct {
	// DocID is the first side's stored document ("" for a bare
	// fingerprint).
	DocID       string
	Fingerprint fingerprint.Fingerprint
	// Other is the second side's fingerprint: it stands for the stored
	// documents that carry it (a bare fingerprint when none does).
	Other    fingerprint.Fingerprint
	Distance int
	// K is the distance the pair was found within.
	K int
}

// maxPairDocs bounds the stored documents a pair's Other stands for that
// are judged (a fingerprint many documents share is judged by its first).
const maxPairDocs = 16

// ConfirmPairs answers, for each pair, whether its two sides are
// duplicates under the Judge's policy: the first side's stored document
// (by DocID), with the template its text-key rows reveal, against each
// stored document carrying Other, as a check of its text would judge
// them; a side without a stored document is a bare fingerprint, judged by
// distance. Three reads for the whole call: the documents carrying the
// Other fingerprints, every document involved, and the first sides'
// text-key rows.
func (d *Detector) ConfirmPairs(ctx context.Context, pairs []Pair) ([]bool, error) {
	out := make([]bool, len(pairs))
	if len(pairs) == 0 {
		return out, nil
	}
	var others []fingerprint.Fingerprint
	at := map[fingerprint.Fingerprint]int{}
	for _, p := range pairs {
		if _, ok := at[p.Other]; !ok {
			at[p.Other] = len(others)
			others = append(others, p.Other)
		}
	}
	carriers, err := d.ix.LookupBatch(ctx, others, kvindex.LookupOptions{K: 0, Limit: maxPairDocs})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, p := range pairs {
		if p.DocID != "" {
			ids = append(ids, p.DocID)
		}
	}
	for _, c := range carriers {
		for _, h := range c.Hits {
			ids = append(ids, h.ID)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	docs, err := d.ix.Documents(ctx, ids)
	if err != nil {
		return nil, err
	}
	var firsts []kvindex.Document
	for _, p := range pairs {
		if doc, ok := docs[p.DocID]; ok && p.DocID != "" {
			firsts = append(firsts, doc)
		}
	}
	sides, err := d.StoredSides(ctx, d.ix, firsts)
	if err != nil {
		return nil, err
	}
	for i, p := range pairs {
		q := decide.Side{}
		qfp := p.Fingerprint
		if doc, ok := docs[p.DocID]; ok && p.DocID != "" {
			q, qfp = sides[doc.ID], doc.Fingerprint
		}
		judged := false
		for _, h := range carriers[at[p.Other]].Hits {
			s, ok := docs[h.ID]
			if !ok {
				continue
			}
			judged = true
			dist := fingerprint.Distance(qfp, s.Fingerprint)
			if d.Rule.Judge(q, SideOf(s), dist, p.K).Duplicate(d.Policy) {
				out[i] = true
				break
			}
		}
		if !judged {
			out[i] = d.Rule.Judge(q, decide.Side{}, p.Distance, p.K).Duplicate(d.Policy)
		}
	}
	return out, nil
}

// KeyCounter reads the number of documents in text-key rows, overall and
// scoped to a source, and says which source a stored document's
// attributes name (*kvindex.Index).
type KeyCounter interface {
	TextKeyCounts(ctx context.Context, qs []kvindex.KeyQuery) ([]kvindex.KeyCounts, error)
	SourceOf(attrs map[string]string) string
}

// StoredSides returns the rule's view of stored documents as queries (by
// id), for a route that relates stored documents to each other: SideOf
// each, with the template its text-key rows reveal (those scoped to the
// source its stored attributes name among them), as a check of its
// normalized text naming that source learns its template. A document that
// keeps no text (one of TextChars or more) is judged without one, as its
// sketch alone cannot tell which of its values are template. One store
// call.
func (j Judge) StoredSides(ctx context.Context, kc KeyCounter, docs []kvindex.Document) (map[string]decide.Side, error) {
	out := make(map[string]decide.Side, len(docs))
	qs := make([]kvindex.KeyQuery, len(docs))
	for i, doc := range docs {
		out[doc.ID] = SideOf(doc)
		if j.Sketcher != nil && doc.Text != "" {
			qs[i] = kvindex.KeyQuery{Keys: doc.Bands.TextKeys(), Source: kc.SourceOf(doc.Attrs)}
		}
	}
	counts, err := kc.TextKeyCounts(ctx, qs)
	if err != nil {
		return nil, err
	}
	for i, doc := range docs {
		if counts[i].Docs == nil {
			continue
		}
		s := out[doc.ID]
		s.Template, _ = j.SourceTemplate(doc.Text, counts[i])
		out[doc.ID] = s
	}
	return out, nil
}

// keyedSentence is a template sentence of a query: its text key and its
// text.
type keyedSentence struct {
	key  uint64
	text string
}

type keyedSentences []keyedSentence

// templateSentences returns the keyed sentences of normalized text whose
// keys are template (keys sorted), each once.
func templateSentences(text string, keys []uint64) keyedSentences {
	if len(keys) == 0 {
		return nil
	}
	_, sents := fingerprint.Sentences(text)
	var out keyedSentences
	for _, s := range sents {
		if _, ok := slices.BinarySearch(keys, s.Key); ok && !slices.ContainsFunc(out, func(k keyedSentence) bool { return k.key == s.Key }) {
			out = append(out, keyedSentence{s.Key, strings.TrimSpace(text[s.Start:s.End])})
		}
	}
	return out
}

// lines returns the template lines (of the answer's) that hold a
// sentence whose key doc's text keys hold, in the query's order.
func (ks keyedSentences) lines(doc kvindex.Document, lines []string) []string {
	if len(ks) == 0 {
		return nil
	}
	dks := doc.Bands.TextKeys()
	var out []string
	for _, l := range lines {
		for _, k := range ks {
			if strings.Contains(l, k.text) && slices.Contains(dks, k.key) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}
