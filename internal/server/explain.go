package server

import (
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/detect"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// explainRequest asks how a stored document relates to a text, and where
// the two texts are the same and where they differ.
type explainRequest struct {
	ID     string       `json:"id"`
	Query  *explainText `json:"query"`
	Policy string       `json:"policy"`
	K      *int         `json:"k"`
}

type explainText struct {
	Title string `json:"title"`
	Text  string `json:"text"`
	Lang  string `json:"lang"`
	// Source names the query's source, as a check's does.
	Source string `json:"source"`
}

// explainSide is one text of an explanation: its normalized text (what
// the rule compares) cut into segments.
type explainSide struct {
	Fingerprint string `json:"fingerprint"`
	Chars       int    `json:"chars"`
	// TextKept: the normalized text is known (a stored document keeps it
	// under the rule's TextChars; a query's is always known).
	TextKept bool             `json:"text_kept"`
	Text     string           `json:"text,omitempty"`
	Segments []explainSegment `json:"segments,omitempty"`
}

// explainSegment is a stretch of a side's text: together the segments are
// the whole text, in order. Kind "" is the punctuation and spaces between
// tokens.
type explainSegment struct {
	Text  string `json:"text"`
	Kind  string `json:"kind,omitempty"`
	Class string `json:"class,omitempty"`
	Step  *int   `json:"step,omitempty"`
}

type alignmentJSON struct {
	WordsQuery       int `json:"words_query"`
	WordsStored      int `json:"words_stored"`
	Common           int `json:"common"`
	Numbers          int `json:"numbers"`
	Typos            int `json:"typos"`
	Sentences        int `json:"sentences"`
	Moved            int `json:"moved"`
	Changed          int `json:"changed"`
	ChangedSentences int `json:"changed_sentences"`
	OnlyQuery        int `json:"only_query"`
	OnlyStored       int `json:"only_stored"`
}

type explainResponse struct {
	ID     string      `json:"id"`
	Time   time.Time   `json:"time"`
	Stored explainSide `json:"stored"`
	// The rest needs a query.
	Query             *explainSide   `json:"query,omitempty"`
	Distance          *int           `json:"distance,omitempty"`
	K                 int            `json:"k"`
	Policy            string         `json:"policy,omitempty"`
	Relation          string         `json:"relation,omitempty"`
	Duplicate         bool           `json:"duplicate"`
	Resemblance       float64        `json:"resemblance"`
	QueryContainment  float64        `json:"query_containment"`
	StoredContainment float64        `json:"stored_containment"`
	Clause            string         `json:"clause,omitempty"`
	Template          []string       `json:"template,omitempty"`
	Aligned           bool           `json:"aligned"`
	Alignment         *alignmentJSON `json:"alignment,omitempty"`
	// Note says why the texts were not aligned.
	Note string `json:"note,omitempty"`
}

// explain answers POST /v1/explain: the stored document's normalized text
// (when it keeps one), and with a query the rule's verdict on the pair as
// a check reaches it (the query's template learned from its text-key
// rows) and both texts cut into the segments of the rule's own alignment
// (decide.AlignSpans): same, changed, only in one of them, template.
func (s *Server) explain(c *gin.Context) {
	var req explainRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.ID == "" {
		s.fail(c, badField("id", "is required"))
		return
	}
	if !utf8.ValidString(req.ID) {
		s.fail(c, badRequest("invalid-utf8", "the document id is not valid UTF-8"))
		return
	}
	if err := kvindex.ValidateID(req.ID); err != nil {
		s.fail(c, &requestError{kind: "bad-id", field: "id", detail: err.Error()})
		return
	}
	k, err := s.kParam(req.K)
	if err != nil {
		s.fail(c, err)
		return
	}
	policy, err := parsePolicy(req.Policy)
	if err != nil {
		s.fail(c, err)
		return
	}
	var r resolved
	if req.Query != nil {
		if r, err = s.resolve(docInput{Title: req.Query.Title, Text: req.Query.Text, Lang: req.Query.Lang}); err != nil {
			s.fail(c, err)
			return
		}
		if err := validSource(req.Query.Source); err != nil {
			s.fail(c, err)
			return
		}
	}
	ctx := c.Request.Context()
	doc, err := s.ix.Get(ctx, req.ID)
	if err != nil {
		s.fail(c, err)
		return
	}
	rule := s.detect.Rule
	out := explainResponse{
		ID: doc.ID, Time: doc.Time.UTC(), K: k,
		Stored: explainSide{Fingerprint: doc.Fingerprint.String(), Chars: doc.Chars, TextKept: doc.Text != "", Text: doc.Text},
	}
	if req.Query == nil {
		if doc.Text == "" {
			out.Note = storedTextNote(rule, doc)
		}
		writeJSON(c, http.StatusOK, "application/json", out)
		return
	}
	// The query's template, as a check learns it: the document counts of
	// its text-key rows.
	q := decide.Side{Sketch: r.sketch, Chars: r.chars, ExactHash: r.exact, Text: r.text, Keys: r.bands.TextKeys()}
	q.Lead, _ = fingerprint.Sentences(r.text)
	var lines []string
	if rule.AnyDistance(r.chars) && len(r.sketch) > 0 {
		res, err := s.ix.LookupDocuments(ctx, []kvindex.Query{{Fingerprint: r.fp, ExactHash: r.exact, Bands: fingerprint.QueryBands(r.bands, r.chars, r.text), Source: req.Query.Source}},
			kvindex.LookupOptions{K: k, Limit: 1})
		if err != nil {
			s.fail(c, err)
			return
		}
		q.Template, lines = s.detect.SourceTemplate(r.text, kvindex.KeyCounts{Docs: res[0].KeyDocs, Source: res[0].SourceKeyDocs})
	}
	dist := fingerprint.Distance(r.fp, doc.Fingerprint)
	v := rule.Judge(q, detect.SideOf(doc), dist, k)
	out.Query = &explainSide{Fingerprint: r.fp.String(), Chars: r.chars, TextKept: r.text != "", Text: r.text}
	out.Distance, out.Policy = &dist, policy.String()
	out.Relation, out.Duplicate, out.Clause = string(v.Relation), v.Duplicate(policy), v.Clause
	out.Resemblance, out.QueryContainment, out.StoredContainment = round3(v.Resemblance), round3(v.QueryContainment), round3(v.StoredContainment)
	out.Template = lines
	switch {
	case doc.Text == "":
		out.Note = storedTextNote(rule, doc)
	case r.text == "":
		out.Note = "the query has no text to align"
	default:
		sp, ok := decide.AlignSpans(r.text, doc.Text, q.Template.Keys)
		if !ok {
			out.Note = "the texts are too long, or differ too much, to be aligned word by word"
			break
		}
		al := sp.Alignment
		out.Aligned = true
		out.Alignment = &alignmentJSON{WordsQuery: al.WordsA, WordsStored: al.WordsB, Common: al.Common, Numbers: al.Numbers, Typos: al.Typos,
			Sentences: al.Sentences, Moved: al.Moved, Changed: al.Changed, ChangedSentences: al.ChangedSentences, OnlyQuery: al.OnlyA, OnlyStored: al.OnlyB}
		out.Query.Segments = segments(r.text, sp.A)
		out.Stored.Segments = segments(doc.Text, sp.B)
	}
	writeJSON(c, http.StatusOK, "application/json", out)
}

// storedTextNote says why a stored document has no text to show.
func storedTextNote(rule decide.Rule, doc kvindex.Document) string {
	if rule.TextChars > 0 && doc.Chars >= rule.TextChars {
		return "the stored document keeps no text: documents of " + strconv.Itoa(rule.TextChars) + " normalized characters or more keep only their fingerprints and sketch (this one has " + strconv.Itoa(doc.Chars) + ")"
	}
	return "the stored document keeps no text (stored without one: a bare fingerprint, a bulk load of fingerprints, or an index from before texts were kept)"
}

// segments cuts text into the segments of its spans, with the text
// between spans as plain segments.
func segments(text string, spans []decide.Span) []explainSegment {
	out := make([]explainSegment, 0, 2*len(spans)+1)
	at := 0
	for _, sp := range spans {
		if sp.Start > at {
			out = append(out, explainSegment{Text: text[at:sp.Start]})
		}
		seg := explainSegment{Text: text[sp.Start:sp.End], Kind: string(sp.Kind), Class: sp.Class}
		switch sp.Kind {
		case decide.SpanOnlyA, decide.SpanOnlyB:
			seg.Kind = "only"
		}
		if sp.Step >= 0 {
			step := sp.Step
			seg.Step = &step
		}
		out = append(out, seg)
		at = sp.End
	}
	if at < len(text) {
		out = append(out, explainSegment{Text: text[at:]})
	}
	return out
}
