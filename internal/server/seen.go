package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/simdex/simdex/detect"
	"github.com/simdex/simdex/storage"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/seen"
)

// Seen is what the server needs of the seen-set service (*seen.Service).
// Implementations must not keep the request slices they are given, nor the
// id strings in them (the single-user filter and check handlers reuse their
// lists, and their ids alias the request body's pooled memory).
type Seen interface {
	MarkBatch(ctx context.Context, batch []seen.UserMarks) ([]seen.MarkResult, error)
	CheckBatch(ctx context.Context, reqs []seen.CheckRequest) ([][]bool, error)
	FilterBatch(ctx context.Context, reqs []seen.FilterRequest) ([]seen.FilterResult, error)
	Delete(ctx context.Context, user, item string) error
	Forget(ctx context.Context, user string) error
}

var _ Seen = (*seen.Service)(nil)

// Option adds an optional part to a Server.
type Option func(*Server)

// WithSeen serves the seen-set routes (/v1/users/{user}/seen...,
// /v1/seen/...) from svc. Without it those routes answer 501.
func WithSeen(svc Seen) Option { return func(s *Server) { s.seen = svc } }

// errSeenDisabled answers seen routes of a server built without WithSeen.
var errSeenDisabled = errors.New("server: seen sets are not enabled on this server")

// DefaultSeenK is the near-duplicate distance of a filter that names none.
const DefaultSeenK = 3

// seenRoutes registers the seen-set routes: reads on r, writes on w (auth).
func (s *Server) seenRoutes(r, w *gin.RouterGroup) {
	r.POST("/users/:user/seen/check", s.seenCheck)
	r.POST("/users/:user/seen/filter", s.seenFilter)
	r.POST("/seen/check", s.seenCheckBatch)
	r.POST("/seen/filter", s.seenFilterBatch)
	w.POST("/users/:user/seen", s.seenMark)
	w.POST("/seen/mark", s.seenMarkBatch)
	w.DELETE("/users/:user/seen", s.seenForget)
	w.DELETE("/users/:user/seen/items/*item", s.seenDelete)
}

// optFingerprint is an optional fingerprint field of a request: "" is
// none, anything else must be a FingerprintInput.
type optFingerprint struct {
	FP  fingerprint.Fingerprint
	Set bool
}

func (o *optFingerprint) UnmarshalText(b []byte) error {
	fp, ok, err := parseFingerprintInput(string(b))
	if err != nil {
		return err
	}
	*o = optFingerprint{FP: fp, Set: ok}
	return nil
}

func (o optFingerprint) MarshalText() ([]byte, error) {
	if !o.Set {
		return []byte{}, nil
	}
	return o.FP.MarshalText()
}

// someFingerprint is an optFingerprint holding fp.
func someFingerprint(fp fingerprint.Fingerprint) optFingerprint {
	return optFingerprint{FP: fp, Set: true}
}

// seenItem is one item of a mark or filter request. An empty doc_id or
// fingerprint is none.
type seenItem struct {
	ID          string         `json:"id"`
	DocID       string         `json:"doc_id,omitempty"`
	Fingerprint optFingerprint `json:"fingerprint,omitempty"`
}

type seenMarkRequest struct {
	Items []seenItem `json:"items"`
}

type seenMarkResponse struct {
	User          string   `json:"user"`
	Marked        int      `json:"marked"`
	UnknownDocIDs []string `json:"unknown_doc_ids,omitempty"`
}

type seenCheckRequest struct {
	IDs []string `json:"ids"`
}

type seenCheckResponse struct {
	User string `json:"user"`
	Seen []bool `json:"seen"`
}

type seenFilterRequest struct {
	// Candidates or IDs (plain ids, no fingerprints: cheaper to decode),
	// not both.
	Candidates []seenItem `json:"candidates"`
	IDs        []string   `json:"ids"`
	Near       bool       `json:"near,omitempty"`
	K          *int       `json:"k,omitempty"`
	// Answer picks the answer's shape (answerForm): "full" (the default),
	// "kept" or "indexes".
	Answer string `json:"answer,omitempty"`
}

type seenDropped struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Reason   string `json:"reason"`
	Distance *int   `json:"distance,omitempty"`
}

type seenFilterResponse struct {
	User          string        `json:"user"`
	Kept          []string      `json:"kept"`
	Dropped       []seenDropped `json:"dropped"`
	UnknownDocIDs []string      `json:"unknown_doc_ids,omitempty"`
}

// seenFilterKeptResponse is the answer of a filter with "answer": "kept".
type seenFilterKeptResponse struct {
	User          string   `json:"user"`
	Kept          []string `json:"kept"`
	UnknownDocIDs []string `json:"unknown_doc_ids,omitempty"`
}

// seenFilterIndexesResponse is the answer of a filter with "answer":
// "indexes": the positions of the kept candidates in the request's list,
// ascending.
type seenFilterIndexesResponse struct {
	User          string   `json:"user"`
	KeptIndexes   []int    `json:"kept_indexes"`
	UnknownDocIDs []string `json:"unknown_doc_ids,omitempty"`
}

// answerForm is the shape of a filter's answer, chosen by the request's
// "answer" field. Why more than one: a feed server only needs what to
// show, and the full answer (the kept ids plus an object per dropped id,
// ~16 KB for 500 candidates) cost more to encode, send and parse than the
// filter itself; the positions of the kept candidates are ~1 KB, smaller
// than Redis' SMISMEMBER answer for the same list.
type answerForm uint8

const (
	answerFull    answerForm = iota // {"user", "kept": [ids], "dropped": [{index, id, reason, distance}]}
	answerKept                      // {"user", "kept": [ids]}
	answerIndexes                   // {"user", "kept_indexes": [positions]}
)

// parseAnswer maps a request's "answer" field to its form ("" is "full").
func parseAnswer(s string) (answerForm, error) {
	switch s {
	case "", "full":
		return answerFull, nil
	case "kept":
		return answerKept, nil
	case "indexes":
		return answerIndexes, nil
	}
	return 0, badField("answer", "unknown answer form %q; want full, kept or indexes", s)
}

// Batch bodies: one entry per user.
type (
	seenMarkBatchRequest struct {
		Users []struct {
			User string `json:"user"`
			seenMarkRequest
		} `json:"users"`
	}
	seenCheckBatchUser struct {
		User string `json:"user"`
		seenCheckRequest
	}
	seenCheckBatchRequest struct {
		Users []seenCheckBatchUser `json:"users"`
	}
	seenFilterBatchUser struct {
		User string `json:"user"`
		seenFilterRequest
	}
	seenFilterBatchRequest struct {
		Users []seenFilterBatchUser `json:"users"`
	}
	seenBatchResponse[T any] struct {
		Results []T `json:"results"`
	}
)

func (s *Server) seenReady(c *gin.Context) bool {
	if s.seen == nil {
		s.fail(c, errSeenDisabled)
		return false
	}
	return true
}

// toMarks is the marks of items (a body's "items").
func toMarks(items []seenItem) ([]seen.Mark, error) {
	out := make([]seen.Mark, len(items))
	for i, it := range items {
		if err := checkDocID(it.DocID, "items", i); err != nil {
			return nil, err
		}
		out[i] = seen.Mark{ID: it.ID, DocID: it.DocID}
		if it.Fingerprint.Set {
			out[i].Fingerprint, out[i].HasFingerprint = it.Fingerprint.FP, true
		}
	}
	return out, nil
}

// checkDocID checks the doc_id of item i of the list named list, also
// where the service would not look it up (an item with a fingerprint, a
// filter without near).
func checkDocID(id, list string, i int) error {
	if id == "" {
		return nil
	}
	if err := kvindex.ValidateID(id); err != nil {
		return &requestError{kind: "bad-id", field: fmt.Sprintf("%s[%d].doc_id", list, i), detail: err.Error()}
	}
	return nil
}

// ofUser places a field error of user i's part of a batch body at its
// path (users[i].field); other errors are returned as they are.
func ofUser(err error, i int) error {
	if re, ok := err.(*requestError); ok && re.field != "" {
		re.field = fmt.Sprintf("users[%d].%s", i, re.field)
	}
	return err
}

// seenMaxK is the largest k of a filter (the service's default MaxK,
// which seenConfig keeps).
const seenMaxK = seen.DefaultMaxK

// checkFilter checks one user's filter: candidates or ids, not both; k
// within 0..seenMaxK, also without near; the candidates' doc_ids.
func checkFilter(r *seenFilterRequest) error {
	if r.Candidates != nil && r.IDs != nil {
		return badField("ids", "give candidates or ids, not both")
	}
	if r.K != nil && (*r.K < 0 || *r.K > seenMaxK) {
		return &requestError{kind: "k-out-of-range", field: "k", detail: fmt.Sprintf("%d is out of range 0..%d", *r.K, seenMaxK)}
	}
	for i := range r.Candidates {
		if err := checkDocID(r.Candidates[i].DocID, "candidates", i); err != nil {
			return err
		}
	}
	return nil
}

// pathUser reads the user path parameter; "." and ".." are refused
// (clients remove such segments from a URL's path before they send it).
func pathUser(c *gin.Context) (string, error) {
	user := c.Param("user")
	if err := pathSegmentID(user); err != nil {
		return "", &requestError{kind: "bad-user", field: "user", detail: err.Error()}
	}
	return user, nil
}

func toFilter(user string, r seenFilterRequest) (seen.FilterRequest, error) {
	return toFilterBuf(user, r, nil)
}

// toFilterBuf is toFilter building the candidates in buf's memory when
// it is large enough. r has passed checkFilter.
func toFilterBuf(user string, r seenFilterRequest, buf []seen.Candidate) (seen.FilterRequest, error) {
	if r.Candidates != nil && r.IDs != nil {
		return seen.FilterRequest{}, badField("ids", "give candidates or ids, not both")
	}
	fr := seen.FilterRequest{User: user, Near: r.Near, K: DefaultSeenK, Candidates: slices.Grow(buf[:0], len(r.Candidates)+len(r.IDs))[:len(r.Candidates)]}
	if r.K != nil {
		fr.K = *r.K
	}
	for _, id := range r.IDs {
		fr.Candidates = append(fr.Candidates, seen.Candidate{ID: id})
	}
	for i, it := range r.Candidates {
		fr.Candidates[i] = seen.Candidate{ID: it.ID, DocID: it.DocID}
		if it.Fingerprint.Set {
			fr.Candidates[i].Fingerprint, fr.Candidates[i].HasFingerprint = it.Fingerprint.FP, true
		}
	}
	return fr, nil
}

func markResponse(user string, r seen.MarkResult) seenMarkResponse {
	return seenMarkResponse{User: user, Marked: r.Marked, UnknownDocIDs: r.UnknownDocs}
}

func filterResponse(user string, r seen.FilterResult) seenFilterResponse {
	out := seenFilterResponse{User: user, Kept: r.Kept, Dropped: make([]seenDropped, len(r.Dropped)), UnknownDocIDs: r.UnknownDocs}
	for i, d := range r.Dropped {
		out.Dropped[i] = seenDropped{Index: d.Index, ID: d.ID, Reason: d.Reason}
		if d.Reason == seen.ReasonNear {
			out.Dropped[i].Distance = &d.Distance
		}
	}
	return out
}

func (s *Server) seenMark(c *gin.Context) {
	if !s.seenReady(c) {
		return
	}
	user, err := pathUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req seenMarkRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.Items == nil {
		s.fail(c, badField("items", "is required"))
		return
	}
	marks, err := toMarks(req.Items)
	if err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.seen.MarkBatch(c.Request.Context(), []seen.UserMarks{{User: user, Marks: marks}})
	if err != nil {
		s.fail(c, err)
		return
	}
	writeJSON(c, http.StatusOK, "application/json", markResponse(user, res[0]))
}

func (s *Server) seenMarkBatch(c *gin.Context) {
	if !s.seenReady(c) {
		return
	}
	var req seenMarkBatchRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	batch := make([]seen.UserMarks, len(req.Users))
	for i, u := range req.Users {
		if u.Items == nil {
			s.fail(c, badField(fmt.Sprintf("users[%d].items", i), "is required"))
			return
		}
		marks, err := toMarks(u.Items)
		if err != nil {
			s.fail(c, ofUser(err, i))
			return
		}
		batch[i] = seen.UserMarks{User: u.User, Marks: marks}
	}
	res, err := s.seen.MarkBatch(c.Request.Context(), batch)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := seenBatchResponse[seenMarkResponse]{Results: make([]seenMarkResponse, len(res))}
	for i, r := range res {
		out.Results[i] = markResponse(batch[i].User, r)
	}
	writeJSON(c, http.StatusOK, "application/json", out)
}

func (s *Server) seenCheck(c *gin.Context) {
	if !s.seenReady(c) {
		return
	}
	user, err := pathUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	fs := filterScratches.Get().(*filterScratch)
	defer fs.put()
	var req seenCheckRequest
	if err := decodeAliased(c, fs, &req, fastSeenCheckAliased); err != nil {
		s.fail(c, err)
		return
	}
	if req.IDs == nil {
		s.fail(c, badField("ids", "is required"))
		return
	}
	fs.ids = req.IDs // the pooled list, or a larger one to keep
	res, err := s.seen.CheckBatch(c.Request.Context(), []seen.CheckRequest{{User: user, IDs: req.IDs}})
	if err != nil {
		s.fail(c, err)
		return
	}
	writeAppended(c, func(b []byte) []byte { return append(appendCheckObject(b, user, res[0]), '\n') })
}

func (s *Server) seenCheckBatch(c *gin.Context) {
	if !s.seenReady(c) {
		return
	}
	var req seenCheckBatchRequest
	if err := decodeFast(c, &req, fastSeenCheckBatch); err != nil {
		s.fail(c, err)
		return
	}
	reqs := make([]seen.CheckRequest, len(req.Users))
	for i, u := range req.Users {
		if u.IDs == nil {
			s.fail(c, badField(fmt.Sprintf("users[%d].ids", i), "is required"))
			return
		}
		reqs[i] = seen.CheckRequest{User: u.User, IDs: u.IDs}
	}
	res, err := s.seen.CheckBatch(c.Request.Context(), reqs)
	if err != nil {
		s.fail(c, err)
		return
	}
	writeAppended(c, func(b []byte) []byte {
		return appendBatch(b, len(res), func(b []byte, i int) []byte { return appendCheckObject(b, reqs[i].User, res[i]) })
	})
}

// filterScratch is the memory of one single-user filter request, pooled:
// the decoded id list, the candidate list (48 bytes a candidate) and the
// answer (Dropped is 48 bytes an entry). The service keeps none of it
// (Seen's contract) and the response is encoded before it goes back, so
// a filter allocates only what decoding the body and reading the row
// need. Why: at ~30 KB of garbage per request, the collector's marking
// and its preemptions were a fifth of the handler's CPU.
type filterScratch struct {
	// body holds the request body; the decoded ids alias it
	// (decodeAliased), so put clears them before body is reused.
	body  bytes.Buffer
	ids   []string
	cands []seen.Candidate
	res   seen.FilterResult
	flags []bool // FilterFlags' answer (compact forms of plain-id filters)
}

var filterScratches = sync.Pool{New: func() any { return &filterScratch{ids: make([]string, 0, 64)} }}

// put clears the id strings (they alias request bodies) and pools fs,
// unless a rare huge request grew it.
func (fs *filterScratch) put() {
	if cap(fs.ids) > 4*seen.DefaultMaxItems || cap(fs.cands) > 4*seen.DefaultMaxItems ||
		cap(fs.res.Kept) > 4*seen.DefaultMaxItems || cap(fs.res.Dropped) > 4*seen.DefaultMaxItems {
		return
	}
	if cap(fs.flags) > 4*seen.DefaultMaxItems || fs.body.Cap() > maxPooledBody {
		return
	}
	// The strings go before the body they alias can be reused.
	clear(fs.ids[:cap(fs.ids)])
	clear(fs.cands[:cap(fs.cands)])
	clear(fs.res.Kept[:cap(fs.res.Kept)])
	clear(fs.res.Dropped[:cap(fs.res.Dropped)])
	clear(fs.res.UnknownDocs[:cap(fs.res.UnknownDocs)])
	fs.ids, fs.cands = fs.ids[:0], fs.cands[:0]
	fs.body.Reset()
	fs.res = seen.FilterResult{Kept: fs.res.Kept[:0], Dropped: fs.res.Dropped[:0], UnknownDocs: fs.res.UnknownDocs[:0]}
	filterScratches.Put(fs)
}

// decodeAliased reads the request body into fs.body and decodes it into
// req with fast, whose strings alias fs.body (no copy of the body per
// request): they stay valid until fs.put, which clears them first. The
// strict fallback (decodeBytes) allocates its own.
func decodeAliased[T any](c *gin.Context, fs *filterScratch, req *T, fast func(body []byte, req *T, ids []string) bool) error {
	if err := readBody(c, &fs.body); err != nil {
		return err
	}
	body := fs.body.Bytes()
	if fast(body, req, fs.ids) {
		return nil
	}
	var zero T
	*req = zero
	return decodeBytes(body, req)
}

// seenFilterFlags is the optional part of Seen that answers a filter of
// plain ids without near as a flag per id (*seen.Service has it): the
// compact answer forms need no more.
type seenFilterFlags interface {
	FilterFlags(ctx context.Context, user string, ids []string, dst []bool) ([]bool, error)
}

// seenFilterInto is the optional part of Seen that writes a filter's
// answer into caller-owned memory (*seen.Service has it).
type seenFilterInto interface {
	FilterInto(ctx context.Context, req seen.FilterRequest, res *seen.FilterResult) error
}

func (s *Server) seenFilter(c *gin.Context) {
	if !s.seenReady(c) {
		return
	}
	user, err := pathUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	fs := filterScratches.Get().(*filterScratch)
	defer fs.put()
	var req seenFilterRequest
	if err := decodeAliased(c, fs, &req, fastSeenFilterAliased); err != nil {
		s.fail(c, err)
		return
	}
	if req.IDs != nil {
		fs.ids = req.IDs // the pooled list, or a larger one to keep
	}
	form, err := parseAnswer(req.Answer)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := checkFilter(&req); err != nil {
		s.fail(c, err)
		return
	}
	if ff, ok := s.seen.(seenFilterFlags); ok && form != answerFull && req.IDs != nil && req.Candidates == nil && !req.Near {
		// Plain ids, no near, a compact answer: the flags are the whole
		// answer (what the filter drops is exactly what the user has seen).
		if fs.flags, err = ff.FilterFlags(c.Request.Context(), user, req.IDs, fs.flags); err != nil {
			s.fail(c, err)
			return
		}
		writeAppended(c, func(b []byte) []byte { return append(appendFilterFlags(b, user, req.IDs, fs.flags, form), '\n') })
		return
	}
	fr, err := toFilterBuf(user, req, fs.cands)
	if err != nil {
		s.fail(c, err)
		return
	}
	fs.cands = fr.Candidates
	res := &fs.res
	if into, ok := s.seen.(seenFilterInto); ok {
		err = into.FilterInto(c.Request.Context(), fr, res)
	} else {
		var out []seen.FilterResult
		if out, err = s.seen.FilterBatch(c.Request.Context(), []seen.FilterRequest{fr}); err == nil {
			*res = out[0]
		}
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	writeAppended(c, func(b []byte) []byte { return append(appendFilterForm(b, user, *res, form), '\n') })
}

func (s *Server) seenFilterBatch(c *gin.Context) {
	if !s.seenReady(c) {
		return
	}
	var req seenFilterBatchRequest
	if err := decodeFast(c, &req, fastSeenFilterBatch); err != nil {
		s.fail(c, err)
		return
	}
	reqs := make([]seen.FilterRequest, len(req.Users))
	forms := make([]answerForm, len(req.Users))
	for i, u := range req.Users {
		var err error
		if forms[i], err = parseAnswer(u.Answer); err != nil {
			s.fail(c, ofUser(err, i))
			return
		}
		if err := checkFilter(&u.seenFilterRequest); err != nil {
			s.fail(c, ofUser(err, i))
			return
		}
		if reqs[i], err = toFilter(u.User, u.seenFilterRequest); err != nil {
			s.fail(c, err)
			return
		}
	}
	res, err := s.seen.FilterBatch(c.Request.Context(), reqs)
	if err != nil {
		s.fail(c, err)
		return
	}
	writeAppended(c, func(b []byte) []byte {
		return appendBatch(b, len(res), func(b []byte, i int) []byte { return appendFilterForm(b, reqs[i].User, res[i], forms[i]) })
	})
}

func (s *Server) seenDelete(c *gin.Context) {
	if !s.seenReady(c) {
		return
	}
	user, err := pathUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	item := strings.TrimPrefix(c.Param("item"), "/")
	if err := pathSegmentID(item); err != nil {
		s.fail(c, &requestError{kind: "bad-id", field: "item", detail: err.Error()})
		return
	}
	if err := s.seen.Delete(c.Request.Context(), user, item); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) seenForget(c *gin.Context) {
	if !s.seenReady(c) {
		return
	}
	user, err := pathUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.seen.Forget(c.Request.Context(), user); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// seenProblem maps the seen package's errors (called by classify).
func seenProblem(err error) (status int, kind, title string, ok bool) {
	switch {
	case errors.Is(err, errSeenDisabled):
		return http.StatusNotImplemented, "seen-disabled", "Seen sets not enabled", true
	case errors.Is(err, seen.ErrBadUser):
		return http.StatusBadRequest, "bad-user", "Bad user id", true
	case errors.Is(err, seen.ErrBadItem):
		return http.StatusBadRequest, "bad-id", "Bad item id", true
	case errors.Is(err, seen.ErrTooMany):
		return http.StatusBadRequest, "too-many-items", "Too many items", true
	case errors.Is(err, seen.ErrBadK):
		return http.StatusBadRequest, "k-out-of-range", "Distance out of range", true
	}
	return 0, "", "", false
}

// seenConfig is the seen service's configuration from the server's.
func (c Config) seenConfig() seen.Config {
	return seen.Config{Retention: c.SeenRetention, MaxItems: seen.DefaultMaxItems, MaxUsers: min(c.MaxBatch, 10000), KeepStoreHistory: c.CompactKeepStoreHistory}
}

// nearJudge has a filter's near-duplicates decided as a check decides
// (package detect over the index).
type nearJudge struct{ d *detect.Detector }

func (n nearJudge) ConfirmNear(ctx context.Context, pairs []seen.NearPair) ([]bool, error) {
	ps := make([]detect.Pair, len(pairs))
	for i, p := range pairs {
		// The pair was found within the filter's k, so k = its distance
		// lets the rule's distance clauses read it as a lookup within k
		// would.
		ps[i] = detect.Pair{DocID: p.DocID, Fingerprint: p.Fingerprint, Other: p.Seen, Distance: p.Distance, K: p.Distance}
	}
	return n.d.ConfirmPairs(ctx, ps)
}

// openSeen opens the seen-set service on the index's store, resolving
// document ids through the index and judging near-duplicates by the
// server's decision (fp sketches its template sentences).
func openSeen(ctx context.Context, cfg Config, ix *kvindex.Index, fp any, locker storage.Locker, log *slog.Logger, reg prometheus.Registerer) (*seen.Service, error) {
	sc := cfg.seenConfig()
	sc.Locker, sc.Docs, sc.Logger, sc.Registerer = locker, seen.IndexDocs{Index: ix}, log, reg
	sc.Near = nearJudge{detect.New(ix, cfg.judge(fp))}
	svc, err := seen.Open(ctx, ix.Store(), sc)
	if err != nil {
		return nil, fmt.Errorf("server: opening seen sets: %w", err)
	}
	return svc, nil
}

// withSeenFolder folds seen rows on the compaction timer (cfg.CompactEvery)
// in a goroutine of its own (every's), and returns a stop that stops it and
// then calls stopCompactor.
func withSeenFolder(ctx context.Context, cfg Config, svc *seen.Service, log *slog.Logger, stopCompactor func()) func() {
	if cfg.CompactEvery <= 0 {
		return stopCompactor
	}
	stop := every(ctx, cfg.CompactEvery, func(ctx context.Context) {
		if _, err := svc.FoldAll(ctx); err != nil && ctx.Err() == nil {
			log.Error("seen fold failed", "err", err)
		}
	})
	return func() { stop(); stopCompactor() }
}
