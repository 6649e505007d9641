package server

import (
	"fmt"
	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/detect"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// Limits on free attributes, so one document cannot bloat the docs table.
const (
	maxAttrs          = 64
	maxAttrKeyBytes   = 128
	maxAttrValueBytes = 4096
)

// docInput is the document part shared by check and insert requests: either
// text (title, text, optional lang) or a bare fingerprint.
type docInput struct {
	Title       string `json:"title"`
	Text        string `json:"text"`
	Lang        string `json:"lang"`
	Fingerprint string `json:"fingerprint"`
}

// searchParams are the lookup parameters of check requests.
type searchParams struct {
	K     *int       `json:"k"`
	Since *time.Time `json:"since"`
	Until *time.Time `json:"until"`
	Limit *int       `json:"limit"`
}

type checkRequest struct {
	Policy string `json:"policy"`
	docInput
	// Source names the query's source (the value its stored documents
	// have in the index's source attribute): its template is then also
	// what many of that source's documents share.
	Source string `json:"source"`
	searchParams
}

// checkItem is one query of a batch check.
type checkItem struct {
	docInput
	Source string `json:"source"`
}

type hitJSON struct {
	ID          string    `json:"id"`
	Fingerprint string    `json:"fingerprint"`
	Distance    int       `json:"distance"`
	Time        time.Time `json:"time"`
	Exact       bool      `json:"exact"`
}

// checkHitJSON is a hit of a check: the stored document and how it
// relates to the query (package decide).
type checkHitJSON struct {
	hitJSON
	Relation          string   `json:"relation"`
	Resemblance       float64  `json:"resemblance"`
	QueryContainment  float64  `json:"query_containment"`
	StoredContainment float64  `json:"stored_containment"`
	Clause            string   `json:"clause,omitempty"`
	Template          []string `json:"template,omitempty"`
}

type checkResponse struct {
	Fingerprint    string         `json:"fingerprint"`
	ExactHash      string         `json:"exact_hash,omitempty"`
	Features       int            `json:"features,omitempty"`
	K              int            `json:"k"`
	Policy         string         `json:"policy"`
	Matching       string         `json:"matching,omitempty"`
	Duplicate      bool           `json:"duplicate"`
	ExactDuplicate bool           `json:"exact_duplicate"`
	Duplicates     []checkHitJSON `json:"duplicates"`
	Related        []checkHitJSON `json:"related,omitempty"`
	Template       []string       `json:"template,omitempty"`
	Candidates     int            `json:"candidates"`
	Truncated      bool           `json:"truncated"`
}

type documentRequest struct {
	ID string `json:"id"`
	docInput
	Time  *time.Time        `json:"time"`
	Attrs map[string]string `json:"attrs"`
	Mode  string            `json:"mode"`
	K     *int              `json:"k"`
}

type insertResponse struct {
	ID          string    `json:"id"`
	Stored      bool      `json:"stored"`
	Replaced    bool      `json:"replaced"`
	Fingerprint string    `json:"fingerprint"`
	DuplicateOf string    `json:"duplicate_of,omitempty"`
	Matching    string    `json:"matching,omitempty"`
	Original    *hitJSON  `json:"original,omitempty"`
	Duplicates  []hitJSON `json:"duplicates"`
}

type documentResponse struct {
	ID               string            `json:"id"`
	Fingerprint      string            `json:"fingerprint"`
	TitleFingerprint string            `json:"title_fingerprint,omitempty"`
	ExactHash        string            `json:"exact_hash,omitempty"`
	Time             time.Time         `json:"time"`
	Attrs            map[string]string `json:"attrs,omitempty"`
}

type fingerprintRequest struct {
	Title string `json:"title"`
	Text  string `json:"text"`
	Lang  string `json:"lang"`
}

type featureJSON struct {
	Text   string  `json:"text"`
	Weight float64 `json:"weight"`
}

type fingerprintResponse struct {
	Fingerprint      string        `json:"fingerprint"`
	TitleFingerprint string        `json:"title_fingerprint,omitempty"`
	ExactHash        string        `json:"exact_hash"`
	Features         int           `json:"features"`
	TitleFeatures    int           `json:"title_features"`
	Chars            int           `json:"chars"`
	Recipe           uint32        `json:"recipe"`
	TopFeatures      []featureJSON `json:"top_features"`
}

type batchCheckRequest struct {
	Items  []checkItem `json:"items"`
	Policy string      `json:"policy"`
	searchParams
}

type batchInsertRequest struct {
	Items []batchDocument `json:"items"`
	Mode  string          `json:"mode"`
	K     *int            `json:"k"`
}

// batchDocument is one document of a batch insert (mode and k are per batch).
type batchDocument struct {
	ID string `json:"id"`
	docInput
	Time  *time.Time        `json:"time"`
	Attrs map[string]string `json:"attrs"`
}

type batchItemError struct {
	Index int     `json:"index"`
	Error problem `json:"error"`
}

type batchCheckResponse struct {
	Results []*checkResponse `json:"results"` // null where the item failed
	Errors  []batchItemError `json:"errors"`
}

type batchInsertResponse struct {
	Results []*insertResponse `json:"results"`
	Errors  []batchItemError  `json:"errors"`
}

type statsResponse struct {
	Documents    int64         `json:"documents"`
	Fingerprints int64         `json:"fingerprints"`
	Layout       layoutJSON    `json:"layout"`
	Recipe       uint32        `json:"recipe"`
	FullestRows  []rowStatJSON `json:"fullest_rows"`
	IndexRows    int64         `json:"index_rows"`
	IndexBytes   int64         `json:"index_bytes"`
}

type layoutJSON struct {
	B      int `json:"b"`
	K      int `json:"k"`
	Tables int `json:"tables"`
}

type rowStatJSON struct {
	Table        int    `json:"table"`
	Prefix       string `json:"prefix"`
	Fingerprints int    `json:"fingerprints"`
}

func hexU64(v uint64) string {
	if v == 0 {
		return ""
	}
	return fingerprint.Fingerprint(v).String()
}

func toHit(h kvindex.Hit) hitJSON {
	return hitJSON{ID: h.ID, Fingerprint: h.Fingerprint.String(), Distance: h.Distance, Time: h.Time.UTC(), Exact: h.Exact}
}

func toHits(hs []kvindex.Hit) []hitJSON {
	out := make([]hitJSON, 0, len(hs))
	for _, h := range hs {
		out = append(out, toHit(h))
	}
	return out
}

// resolved is a document input turned into the numbers the index takes.
type resolved struct {
	fp       fingerprint.Fingerprint
	titleFP  fingerprint.Fingerprint
	exact    uint64
	features int
	sketch   fingerprint.Sketch // nil for a bare fingerprint
	chars    int
	bands    fingerprint.Bands // nil for a bare fingerprint
	text     string            // the normalized body; "" for a bare fingerprint
	lowInfo  bool              // too few content words: near-exact matching only
}

// resolve fingerprints text, or parses a bare fingerprint. Every field is
// checked, also those the other form does not use (lang with a
// fingerprint); empty strings are absent fields.
func (s *Server) resolve(in docInput) (resolved, error) {
	if err := validLang(in.Lang); err != nil {
		return resolved{}, err
	}
	fp, hasFP, err := parseFingerprintInput(in.Fingerprint)
	if err != nil {
		return resolved{}, badFingerprint("fingerprint", err)
	}
	hasText := in.Text != "" || in.Title != ""
	switch {
	case hasFP && hasText:
		return resolved{}, badField("fingerprint", "give either text (title, text) or a fingerprint, not both")
	case hasFP:
		return resolved{fp: fp}, nil
	case in.Text == "":
		return resolved{}, badField("text", "is required (or give a fingerprint)")
	}
	start := time.Now()
	r, err := s.fp.Fingerprint(fingerprint.Document{Title: in.Title, Body: in.Text, Lang: in.Lang})
	s.metrics.fingerprintSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		return resolved{}, err
	}
	return resolved{fp: r.Simhash, titleFP: r.TitleSimhash, exact: r.ExactHash, features: r.Features, sketch: r.Sketch, chars: r.Chars, bands: r.Bands, text: r.Text, lowInfo: r.LowInformation}, nil
}

// query is what package detect checks, from a source ("" for none).
func (r resolved) query(source string) detect.Query {
	return detect.Query{Fingerprint: r.fp, ExactHash: r.exact, Sketch: r.sketch, Chars: r.chars, Bands: r.bands, Text: r.text, Source: source}
}

// validSource checks a check's source field (an attribute value).
func validSource(src string) error {
	if len(src) > maxAttrValueBytes {
		return badField("source", "%d bytes: at most %d", len(src), maxAttrValueBytes)
	}
	return nil
}

func validLang(lang string) error {
	switch lang {
	case "", "zh", "en":
		return nil
	}
	return badField("lang", "%q: want \"zh\", \"en\" or empty (detect)", lang)
}

// lookupOptions validates search parameters.
func (s *Server) lookupOptions(p searchParams) (kvindex.LookupOptions, error) {
	k, err := s.kParam(p.K)
	if err != nil {
		return kvindex.LookupOptions{}, err
	}
	opt := kvindex.LookupOptions{K: k, Limit: s.cfg.MaxLimit}
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > s.cfg.MaxLimit {
			return opt, badField("limit", "%d is out of range 1..%d", *p.Limit, s.cfg.MaxLimit)
		}
		opt.Limit = *p.Limit
	}
	if p.Since != nil {
		opt.Since = *p.Since
	}
	if p.Until != nil {
		opt.Until = *p.Until
	}
	if p.Since != nil && p.Until != nil && p.Until.Before(*p.Since) {
		// An empty window: nothing is stored in it.
		opt.Until = opt.Since
	}
	return opt, nil
}

func (s *Server) kParam(k *int) (int, error) {
	max := s.ix.Layout().K
	if k == nil {
		return max, nil
	}
	if *k < 0 || *k > max {
		return 0, &requestError{kind: "k-out-of-range", field: "k", detail: fmt.Sprintf("%d is out of range 0..%d (the index layout %v answers distances up to %d)", *k, max, s.ix.Layout(), max)}
	}
	return *k, nil
}

func insertMode(m string) (kvindex.InsertMode, error) {
	switch m {
	case "", "insert":
		return kvindex.InsertAlways, nil
	case "insert-if-unique":
		return kvindex.InsertIfUnique, nil
	}
	return 0, badField("mode", "%q: want \"insert\" or \"insert-if-unique\"", m)
}

func validateAttrs(attrs map[string]string) error {
	if len(attrs) > maxAttrs {
		return badField("attrs", "%d attributes: at most %d", len(attrs), maxAttrs)
	}
	for k, v := range attrs {
		if k == "" || len(k) > maxAttrKeyBytes {
			return badField("attrs", "attribute names must be 1..%d bytes", maxAttrKeyBytes)
		}
		if len(v) > maxAttrValueBytes {
			return badField("attrs", "attribute %q: value over %d bytes", k, maxAttrValueBytes)
		}
	}
	return nil
}

func (s *Server) check(c *gin.Context) {
	var req checkRequest
	if err := withBody(c, func(body []byte) error {
		if fastCheckRequest(body, &req) {
			return nil
		}
		req = checkRequest{}
		return decodeBytes(body, &req)
	}); err != nil {
		s.fail(c, err)
		return
	}
	opt, err := s.lookupOptions(req.searchParams)
	if err != nil {
		s.fail(c, err)
		return
	}
	r, err := s.resolve(req.docInput)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := validSource(req.Source); err != nil {
		s.fail(c, err)
		return
	}
	policy, err := parsePolicy(req.Policy)
	if err != nil {
		s.fail(c, err)
		return
	}
	opt.ExactHash = r.exact
	res, err := s.detect.Check(c.Request.Context(), []detect.Query{r.query(req.Source)}, detect.Options{Lookup: opt, Policy: policy})
	if err != nil {
		s.fail(c, err)
		return
	}
	s.metrics.observeCheck(res[0])
	writeJSON(c, http.StatusOK, "application/json", checkResult(r, opt.K, policy, res[0]))
}

func parsePolicy(p string) (decide.Policy, error) {
	pol, err := decide.ParsePolicy(p)
	if err != nil {
		return 0, badField("policy", "%q: want one of %s", p, strings.Join(decide.Policies, ", "))
	}
	return pol, nil
}

func toCheckHits(hs []detect.Hit) []checkHitJSON {
	out := make([]checkHitJSON, 0, len(hs))
	for _, h := range hs {
		out = append(out, checkHitJSON{hitJSON: toHit(h.Hit), Relation: string(h.Relation), Resemblance: round3(h.Resemblance),
			QueryContainment: round3(h.QueryContainment), StoredContainment: round3(h.StoredContainment), Clause: h.Clause,
			Template: h.Template})
	}
	return out
}

// matching tells a client that a low-information text (a few content
// words) is matched near-exactly only: its exact normalized text, and the
// word-by-word alignment of short texts, never a similar feature set.
func matching(r resolved) string {
	if r.lowInfo {
		return "near_exact"
	}
	return ""
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func checkResult(r resolved, k int, policy decide.Policy, res detect.Result) *checkResponse {
	out := &checkResponse{
		Fingerprint: r.fp.String(), ExactHash: hexU64(r.exact), Features: r.features, K: k, Policy: policy.String(),
		Duplicates: toCheckHits(res.Duplicates), Candidates: res.Candidates, Truncated: res.Truncated,
		Duplicate: len(res.Duplicates) > 0, Template: res.Template, Matching: matching(r),
	}
	if len(res.Related) > 0 {
		out.Related = toCheckHits(res.Related)
	}
	for _, h := range res.Duplicates {
		if h.Exact {
			out.ExactDuplicate = true
		}
	}
	return out
}

func (s *Server) toDocument(id string, in docInput, t *time.Time, attrs map[string]string) (kvindex.Document, resolved, error) {
	if id == "" {
		return kvindex.Document{}, resolved{}, badField("id", "is required")
	}
	if err := kvindex.ValidateID(id); err != nil {
		return kvindex.Document{}, resolved{}, &requestError{kind: "bad-id", field: "id", detail: err.Error()}
	}
	if t != nil {
		// The written year (in the time's own offset), so that the time
		// lies within the index's years in UTC whatever its offset.
		if y := t.Year(); y < minDocYear || y > maxDocYear {
			return kvindex.Document{}, resolved{}, badField("time", "year %d: want %d..%d", y, minDocYear, maxDocYear)
		}
	}
	if err := validateAttrs(attrs); err != nil {
		return kvindex.Document{}, resolved{}, err
	}
	r, err := s.resolve(in)
	if err != nil {
		return kvindex.Document{}, resolved{}, err
	}
	when := time.Now().UTC()
	if t != nil {
		when = t.UTC()
	}
	return kvindex.Document{ID: id, Fingerprint: r.fp, TitleFingerprint: r.titleFP, ExactHash: r.exact, Time: when, Attrs: attrs, Sketch: r.sketch, Chars: r.chars, Bands: r.bands,
		Text: s.cfg.rule().KeepText(r.chars, r.text, kvindex.MaxTextBytes), Body: r.text}, r, nil
}

func insertResult(id string, r resolved, res kvindex.InsertResult) *insertResponse {
	out := &insertResponse{ID: id, Stored: res.Stored, Replaced: res.Replaced, Fingerprint: r.fp.String(), Duplicates: toHits(res.Duplicates), Matching: matching(r)}
	if res.Original != nil {
		h := toHit(*res.Original)
		out.Original = &h
		if !res.Stored {
			out.DuplicateOf = h.ID
		}
	}
	return out
}

func (s *Server) insert(c *gin.Context) {
	var req documentRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	mode, err := insertMode(req.Mode)
	if err != nil {
		s.fail(c, err)
		return
	}
	k, err := s.kParam(req.K)
	if err != nil {
		s.fail(c, err)
		return
	}
	doc, r, err := s.toDocument(req.ID, req.docInput, req.Time, req.Attrs)
	if err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.ix.Insert(c.Request.Context(), doc, mode, k)
	if err != nil {
		s.fail(c, err)
		return
	}
	status := http.StatusOK
	if res.Stored {
		status = http.StatusCreated
	}
	writeJSON(c, status, "application/json", insertResult(doc.ID, r, res))
}

func (s *Server) checkBatch(c *gin.Context) {
	var req batchCheckRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.batchSize(len(req.Items)); err != nil {
		s.fail(c, err)
		return
	}
	opt, err := s.lookupOptions(req.searchParams)
	if err != nil {
		s.fail(c, err)
		return
	}
	policy, err := parsePolicy(req.Policy)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := batchCheckResponse{Results: make([]*checkResponse, len(req.Items)), Errors: []batchItemError{}}
	var idx []int
	var rs []resolved
	var qs []detect.Query
	for i, it := range req.Items {
		r, err := s.resolve(it.docInput)
		if err == nil {
			err = validSource(it.Source)
		}
		if err != nil {
			out.Errors = append(out.Errors, s.itemError(c, i, err))
			continue
		}
		idx, rs, qs = append(idx, i), append(rs, r), append(qs, r.query(it.Source))
	}
	if len(qs) > 0 {
		res, err := s.detect.Check(c.Request.Context(), qs, detect.Options{Lookup: opt, Policy: policy})
		if err != nil {
			s.fail(c, err)
			return
		}
		for j, r := range res {
			s.metrics.observeCheck(r)
			out.Results[idx[j]] = checkResult(rs[j], opt.K, policy, r)
		}
	}
	writeJSON(c, http.StatusOK, "application/json", out)
}

func (s *Server) insertBatch(c *gin.Context) {
	var req batchInsertRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.batchSize(len(req.Items)); err != nil {
		s.fail(c, err)
		return
	}
	mode, err := insertMode(req.Mode)
	if err != nil {
		s.fail(c, err)
		return
	}
	k, err := s.kParam(req.K)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := batchInsertResponse{Results: make([]*insertResponse, len(req.Items)), Errors: []batchItemError{}}
	var docs []kvindex.Document
	var idx []int
	var rs []resolved
	for i, it := range req.Items {
		doc, r, err := s.toDocument(it.ID, it.docInput, it.Time, it.Attrs)
		if err != nil {
			out.Errors = append(out.Errors, s.itemError(c, i, err))
			continue
		}
		docs, idx, rs = append(docs, doc), append(idx, i), append(rs, r)
	}
	if len(docs) > 0 {
		res, itemErrs, err := s.ix.InsertBatch(c.Request.Context(), docs, mode, k)
		if err != nil {
			s.fail(c, err)
			return
		}
		for j := range docs {
			if j < len(itemErrs) && itemErrs[j] != nil {
				out.Errors = append(out.Errors, s.itemError(c, idx[j], itemErrs[j]))
				continue
			}
			out.Results[idx[j]] = insertResult(docs[j].ID, rs[j], res[j])
		}
	}
	sortItemErrors(out.Errors)
	writeJSON(c, http.StatusOK, "application/json", out)
}

func sortItemErrors(es []batchItemError) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].Index < es[j-1].Index; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

func (s *Server) itemError(c *gin.Context, i int, err error) batchItemError {
	pr := classify(err)
	s.metrics.errors.WithLabelValues(pr.Kind).Inc()
	return batchItemError{Index: i, Error: pr}
}

func (s *Server) batchSize(n int) error {
	if n == 0 {
		return badField("items", "is empty")
	}
	if n > s.cfg.MaxBatch {
		return badField("items", "%d items: at most %d per call", n, s.cfg.MaxBatch)
	}
	return nil
}

// docID reads the id path parameter (a catch-all, so ids may contain '/',
// sent as is or as %2F). "." and ".." are refused: clients remove such
// path segments before they send a URL.
func docID(c *gin.Context) (string, error) {
	id := strings.TrimPrefix(c.Param("id"), "/")
	if id == "" {
		return "", &requestError{kind: "bad-id", field: "id", detail: "the document id in the path is empty"}
	}
	if !utf8.ValidString(id) {
		return "", badRequest("invalid-utf8", "the document id is not valid UTF-8")
	}
	if err := pathSegmentID(id); err != nil {
		return "", &requestError{kind: "bad-id", field: "id", detail: err.Error()}
	}
	if err := kvindex.ValidateID(id); err != nil {
		return "", &requestError{kind: "bad-id", field: "id", detail: err.Error()}
	}
	return id, nil
}

// notBatch answers GET and DELETE of /v1/documents/batch, which is the
// batch insert's path (POST only), not the document "batch": 405.
func (s *Server) notBatch(c *gin.Context) bool {
	if c.Param("id") != "/batch" {
		return true
	}
	c.Header("Allow", http.MethodPost)
	s.fail(c, errNoMethod)
	return false
}

func (s *Server) getDocument(c *gin.Context) {
	if !s.notBatch(c) {
		return
	}
	id, err := docID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	doc, err := s.ix.Get(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	writeJSON(c, http.StatusOK, "application/json", documentResponse{
		ID: doc.ID, Fingerprint: doc.Fingerprint.String(), TitleFingerprint: hexU64(uint64(doc.TitleFingerprint)),
		ExactHash: hexU64(doc.ExactHash), Time: doc.Time.UTC(), Attrs: doc.Attrs,
	})
}

func (s *Server) deleteDocument(c *gin.Context) {
	if !s.notBatch(c) {
		return
	}
	id, err := docID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.ix.Delete(c.Request.Context(), id); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) fingerprintOnly(c *gin.Context) {
	var req fingerprintRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.Text == "" {
		s.fail(c, badField("text", "is required"))
		return
	}
	if err := validLang(req.Lang); err != nil {
		s.fail(c, err)
		return
	}
	r, err := s.fp.Fingerprint(fingerprint.Document{Title: req.Title, Body: req.Text, Lang: req.Lang})
	if err != nil {
		s.fail(c, err)
		return
	}
	out := fingerprintResponse{
		Fingerprint: r.Simhash.String(), TitleFingerprint: hexU64(uint64(r.TitleSimhash)), ExactHash: fingerprint.Fingerprint(r.ExactHash).String(),
		Features: r.Features, TitleFeatures: r.TitleFeatures, Chars: r.Chars, Recipe: r.Recipe, TopFeatures: []featureJSON{},
	}
	for _, f := range r.Top {
		out.TopFeatures = append(out.TopFeatures, featureJSON{Text: f.Text, Weight: f.Weight})
	}
	writeJSON(c, http.StatusOK, "application/json", out)
}

func (s *Server) stats(c *gin.Context) {
	rows := 10
	if v, ok := c.GetQuery("rows"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 100 {
			s.fail(c, badField("rows", "rows must be an integer 0..100, got %q", v))
			return
		}
		rows = n
	}
	st, err := s.ix.StatsWith(c.Request.Context(), kvindex.StatsOptions{FullestRows: rows})
	if err != nil {
		s.fail(c, err)
		return
	}
	out := statsResponse{
		Documents: st.Documents, Fingerprints: st.Fingerprints, Recipe: fingerprint.RecipeVersion,
		Layout:      layoutJSON{B: st.Layout.B, K: st.Layout.K, Tables: st.Layout.NumTables()},
		FullestRows: []rowStatJSON{},
		IndexRows:   st.IndexRows, IndexBytes: st.IndexBytes,
	}
	for _, r := range st.FullestRows {
		out.FullestRows = append(out.FullestRows, rowStatJSON{Table: r.Table, Prefix: fmt.Sprintf("%x", r.Prefix), Fingerprints: r.Fingerprints})
	}
	writeJSON(c, http.StatusOK, "application/json", out)
}
