// Package server is simdex's REST service for publishing systems: check a
// document against the index, insert it (optionally only if unique), batch
// forms of both, get and delete documents, fingerprint-only explanations,
// stats, health, readiness, Prometheus metrics and an OpenAPI document.
//
// Every error leaves through one place (classify in errors.go) as an RFC 9457
// application/problem+json body; store outages and timeouts are 503 with
// Retry-After; a panic in a handler becomes a 500 problem and is logged, and
// the process keeps serving.
package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/simdex/simdex/detect"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// Index is what the server needs of the index (kvindex.Index implements it).
type Index interface {
	Layout() fingerprint.Layout
	Lookup(ctx context.Context, fp fingerprint.Fingerprint, opt kvindex.LookupOptions) (kvindex.LookupResult, error)
	LookupBatch(ctx context.Context, fps []fingerprint.Fingerprint, opt kvindex.LookupOptions) ([]kvindex.LookupResult, error)
	LookupDocuments(ctx context.Context, qs []kvindex.Query, opt kvindex.LookupOptions) ([]kvindex.DocLookupResult, error)
	Documents(ctx context.Context, ids []string) (map[string]kvindex.Document, error)
	TextKeyCounts(ctx context.Context, qs []kvindex.KeyQuery) ([]kvindex.KeyCounts, error)
	SourceOf(attrs map[string]string) string
	Insert(ctx context.Context, doc kvindex.Document, mode kvindex.InsertMode, k int) (kvindex.InsertResult, error)
	InsertBatch(ctx context.Context, docs []kvindex.Document, mode kvindex.InsertMode, k int) ([]kvindex.InsertResult, []error, error)
	Get(ctx context.Context, id string) (kvindex.Document, error)
	Delete(ctx context.Context, id string) error
	StatsWith(ctx context.Context, opt kvindex.StatsOptions) (kvindex.Stats, error)
	Ping(ctx context.Context) error
	// WriterLease and Writable: whether the index's writers take turns,
	// and whether this server may write now (kvindex.Index).
	WriterLease() bool
	Writable(ctx context.Context) error
}

// Fingerprinter turns text into fingerprints (*fingerprint.Fingerprinter).
type Fingerprinter interface {
	Fingerprint(doc fingerprint.Document) (fingerprint.Result, error)
}

// Server is the HTTP handler of the REST API. Build it with New.
type Server struct {
	cfg     Config
	ix      Index
	fp      Fingerprinter
	detect  *detect.Detector
	log     *slog.Logger
	metrics *metrics
	engine  *gin.Engine
	seen    Seen // nil: seen routes answer 501 (seen.go)
	// fwd sends index writes on to the writer lease's holder (nil unless
	// the index's writers take turns: forward.go).
	fwd *forwarder
	// openAPI is the document served at /openapi.json, with this
	// server's limits (openapidoc.go).
	openAPI []byte
	// draining is set when shutdown begins, so /readyz turns away new traffic
	// from load balancers while in-flight requests finish.
	draining atomic.Bool
	// observers caches the request histogram's series by routeKey.
	observers sync.Map
}

const requestIDKey = "request_id"

// New builds the handler. reg may be nil (no metrics registered); log may
// be nil (discard); opts add optional parts (WithSeen).
func New(cfg Config, ix Index, fp Fingerprinter, log *slog.Logger, reg prometheus.Registerer, opts ...Option) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, ix: ix, fp: fp, log: log, metrics: m}
	s.detect = detect.New(ix, cfg.judge(fp))
	if ix.WriterLease() {
		self := cfg.AdvertiseURL
		if self == "-" {
			self = ""
		}
		if s.fwd, err = newForwarder(self, reg); err != nil {
			return nil, err
		}
	}
	for _, o := range opts {
		o(s)
	}
	if s.openAPI, err = servedOpenAPI(s.limits()); err != nil {
		return nil, err
	}
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	// A method a path does not take is 405 with Allow (the methods of
	// openapi.json's path), not a redirect: GET /v1/documents would
	// otherwise be redirected to the catch-all /v1/documents/{id}.
	e.HandleMethodNotAllowed = true
	e.RedirectTrailingSlash = false
	e.ContextWithFallback = true
	e.Use(s.recoverer, s.requestID, s.observe, s.limitBody, s.deadline)
	e.NoRoute(func(c *gin.Context) { s.fail(c, errNotFound) })
	e.NoMethod(func(c *gin.Context) {
		if c.Request.URL.Path == "/v1/documents/batch" {
			// gin also lists the methods of /v1/documents/{id}, which
			// the concrete path does not take (getDocument, notBatch).
			c.Header("Allow", http.MethodPost)
		}
		s.fail(c, errNoMethod)
	})

	e.GET("/healthz", func(c *gin.Context) {
		writeJSON(c, http.StatusOK, "application/json", map[string]string{"status": "ok"})
	})
	e.GET("/readyz", s.ready)
	var gatherer prometheus.Gatherer = prometheus.NewRegistry()
	if g, ok := reg.(prometheus.Gatherer); ok {
		gatherer = g
	}
	e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{})))
	e.GET("/openapi.json", func(c *gin.Context) { c.Data(http.StatusOK, "application/json; charset=utf-8", s.openAPI) })

	v1 := e.Group("/v1")
	v1.POST("/check", s.check)
	v1.POST("/check/batch", s.checkBatch)
	v1.POST("/fingerprint", s.fingerprintOnly)
	v1.GET("/stats", s.stats)
	v1.GET("/documents/*id", s.getDocument)
	w := v1.Group("", s.auth)
	w.POST("/documents", s.forwardWrites, s.insert)
	w.POST("/documents/batch", s.forwardWrites, s.insertBatch)
	w.DELETE("/documents/*id", s.forwardWrites, s.deleteDocument)
	s.seenRoutes(v1, w)
	s.uiRoutes(e, v1)
	s.engine = e
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

// Routes lists the registered method and path pairs (for the OpenAPI test).
func (s *Server) Routes() [][2]string {
	var out [][2]string
	for _, r := range s.engine.Routes() {
		out = append(out, [2]string{r.Method, r.Path})
	}
	return out
}

// Close releases what the handler holds beside the index (the forwarder's
// idle connections to the writer); call it once serving has stopped.
func (s *Server) Close() {
	if s.fwd != nil {
		s.fwd.close()
	}
}

// SetDraining marks the server as shutting down: /readyz answers 503.
func (s *Server) SetDraining() { s.draining.Store(true) }

func (s *Server) ready(c *gin.Context) {
	if s.draining.Load() {
		s.fail(c, fmt.Errorf("%w: shutting down", kvindex.ErrStore))
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), time.Second)
	defer cancel()
	if err := s.ix.Ping(ctx); err != nil {
		s.fail(c, err)
		return
	}
	out := map[string]string{"status": "ready", "store": s.cfg.Store}
	if s.ix.WriterLease() {
		// An index whose writers take turns: say whether this server is
		// the one that writes; ?writer=1 makes a standby not ready, for a
		// load balancer's pool of write targets.
		out["writer"] = "holder"
		if err := s.ix.Writable(ctx); err != nil {
			if c.Query("writer") != "" {
				s.fail(c, err)
				return
			}
			out["writer"] = "standby"
		}
	}
	writeJSON(c, http.StatusOK, "application/json", out)
}

// recoverer turns a handler panic into a 500 problem and a log line with the
// stack; the client never sees the stack and the process keeps serving.
func (s *Server) recoverer(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.ErrorContext(c.Request.Context(), "handler panic", "panic", fmt.Sprint(v), "path", c.Request.URL.Path, "request_id", c.GetString(requestIDKey))
			if !c.Writer.Written() {
				s.fail(c, fmt.Errorf("panic: %v", v))
			}
			c.Abort()
		}
	}()
	c.Next()
}

// requestIDPrefix makes this process's request ids unique across restarts
// and processes; a counter makes them unique within the process. Ids only
// need to be unique, not secret, so no crypto/rand read per request.
var (
	requestIDPrefix = func() string {
		var b [6]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:]) + "-"
	}()
	requestIDSeq atomic.Uint64
)

// headerRequestID is X-Request-ID in canonical form, so that setting it
// needs no canonicalization per request.
const headerRequestID = "X-Request-Id"

func (s *Server) requestID(c *gin.Context) {
	id := c.GetHeader(headerRequestID)
	if id == "" || len(id) > 128 {
		var b [64]byte
		id = string(strconv.AppendUint(append(b[:0], requestIDPrefix...), requestIDSeq.Add(1), 36))
	}
	c.Set(requestIDKey, id)
	c.Writer.Header()[headerRequestID] = []string{id}
	c.Next()
}

// routeKey names one series of the request-duration histogram.
type routeKey struct {
	route, method string
	status        int
}

// observer returns the histogram series of k, caching it: the label lookup
// (hashing three strings, formatting the status) is done once per series
// instead of once per request.
func (s *Server) observer(k routeKey) prometheus.Observer {
	if o, ok := s.observers.Load(k); ok {
		return o.(prometheus.Observer)
	}
	o := s.metrics.requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.status))
	s.observers.Store(k, o)
	return o
}

func (s *Server) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	status := c.Writer.Status()
	d := time.Since(start)
	s.observer(routeKey{route, c.Request.Method, status}).Observe(d.Seconds())
	// Checked first so that a disabled level costs no argument boxing.
	if ctx := c.Request.Context(); s.log.Enabled(ctx, slog.LevelInfo) {
		s.log.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("method", c.Request.Method), slog.String("route", route),
			slog.Int("status", status), slog.Float64("duration_ms", float64(d.Microseconds())/1000),
			slog.String("request_id", c.GetString(requestIDKey)))
	}
}

func (s *Server) limitBody(c *gin.Context) {
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.MaxBodyBytes)
	}
	c.Next()
}

func (s *Server) deadline(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.RequestTimeout)
	defer cancel()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
}

// auth guards write endpoints when API keys are configured.
func (s *Server) auth(c *gin.Context) {
	if len(s.cfg.APIKeys) == 0 {
		c.Next()
		return
	}
	tok, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
	if ok {
		for _, k := range s.cfg.APIKeys {
			if subtle.ConstantTimeCompare([]byte(tok), []byte(k)) == 1 {
				c.Next()
				return
			}
		}
	}
	s.fail(c, errUnauthorized)
}

func isNotFound(err error) bool { return errors.Is(err, kvindex.ErrNotFound) }
