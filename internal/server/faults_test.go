package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// faultyIndex stands in for the index to inject the faults a real store
// shows: unavailability, slowness, and a bug that panics.
type faultyIndex struct {
	err   error         // returned by every call when set
	block bool          // wait for the context to end
	panic bool          // panic in Lookup
	delay time.Duration // sleep before answering
}

func (f *faultyIndex) wait(ctx context.Context) error {
	if f.panic {
		panic("index bug")
	}
	if f.block {
		<-ctx.Done()
		return fmt.Errorf("%w: %w", kvindex.ErrStore, ctx.Err())
	}
	return f.err
}

func (f *faultyIndex) Layout() fingerprint.Layout { return fingerprint.DefaultLayout }
func (f *faultyIndex) Lookup(ctx context.Context, _ fingerprint.Fingerprint, _ kvindex.LookupOptions) (kvindex.LookupResult, error) {
	return kvindex.LookupResult{}, f.wait(ctx)
}
func (f *faultyIndex) LookupBatch(ctx context.Context, fps []fingerprint.Fingerprint, _ kvindex.LookupOptions) ([]kvindex.LookupResult, error) {
	return make([]kvindex.LookupResult, len(fps)), f.wait(ctx)
}
func (f *faultyIndex) LookupDocuments(ctx context.Context, qs []kvindex.Query, _ kvindex.LookupOptions) ([]kvindex.DocLookupResult, error) {
	return make([]kvindex.DocLookupResult, len(qs)), f.wait(ctx)
}
func (f *faultyIndex) Documents(ctx context.Context, _ []string) (map[string]kvindex.Document, error) {
	return nil, f.wait(ctx)
}
func (f *faultyIndex) TextKeyCounts(ctx context.Context, _ []kvindex.KeyQuery) ([]kvindex.KeyCounts, error) {
	return nil, f.wait(ctx)
}
func (f *faultyIndex) SourceOf(map[string]string) string { return "" }
func (f *faultyIndex) Insert(ctx context.Context, _ kvindex.Document, _ kvindex.InsertMode, _ int) (kvindex.InsertResult, error) {
	return kvindex.InsertResult{}, f.wait(ctx)
}
func (f *faultyIndex) InsertBatch(ctx context.Context, docs []kvindex.Document, _ kvindex.InsertMode, _ int) ([]kvindex.InsertResult, []error, error) {
	return make([]kvindex.InsertResult, len(docs)), nil, f.wait(ctx)
}
func (f *faultyIndex) Get(ctx context.Context, _ string) (kvindex.Document, error) {
	return kvindex.Document{}, f.wait(ctx)
}
func (f *faultyIndex) Delete(ctx context.Context, _ string) error { return f.wait(ctx) }
func (f *faultyIndex) StatsWith(ctx context.Context, _ kvindex.StatsOptions) (kvindex.Stats, error) {
	return kvindex.Stats{}, f.wait(ctx)
}
func (f *faultyIndex) Ping(ctx context.Context) error     { return f.wait(ctx) }
func (f *faultyIndex) WriterLease() bool                  { return false }
func (f *faultyIndex) Writable(ctx context.Context) error { return nil }

func faultEnv(t *testing.T, ix Index, mod func(*Config)) *testEnv {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	if mod != nil {
		mod(&cfg)
	}
	srv, err := New(cfg, ix, sharedFingerprinter(t), nil, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, cfg: cfg, srv: srv, http: httptest.NewServer(srv), router: openAPIRouter(t)}
	t.Cleanup(func() { e.http.Close() })
	return e
}

func TestStoreDownIs503(t *testing.T) {
	down := &faultyIndex{err: fmt.Errorf("%w: connection refused", kvindex.ErrStore)}
	e := faultEnv(t, down, nil)
	for _, req := range []struct{ method, path, body string }{
		{"POST", "/v1/check", `{"fingerprint": "0x1"}`},
		{"POST", "/v1/documents", `{"id": "a", "fingerprint": "0x1"}`},
		{"GET", "/v1/documents/a", ""},
		{"DELETE", "/v1/documents/a", ""},
		{"GET", "/v1/stats", ""},
		{"GET", "/readyz", ""},
		{"POST", "/v1/check/batch", `{"items": [{"fingerprint": "0x1"}]}`},
	} {
		var body any
		if req.body != "" {
			body = req.body
		}
		r := e.do(req.method, req.path, body)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Errorf("%s %s: %d (Retry-After %q), want 503 with Retry-After", req.method, req.path, r.status, r.header.Get("Retry-After"))
			continue
		}
		if p := r.problem(t); p.Kind != "store-unavailable" || strings.Contains(p.Detail, "connection refused") {
			t.Errorf("%s %s: problem %+v", req.method, req.path, p)
		}
	}
	// Liveness does not depend on the store.
	if r := e.do("GET", "/healthz", nil); r.status != 200 {
		t.Fatal(r.status)
	}
}

func TestSlowStoreHitsDeadline(t *testing.T) {
	e := faultEnv(t, &faultyIndex{block: true}, func(c *Config) { c.RequestTimeout = 100 * time.Millisecond })
	start := time.Now()
	r := e.do("POST", "/v1/check", `{"fingerprint": "0x1"}`)
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", r.status)
	}
	if p := r.problem(t); p.Kind != "timeout" {
		t.Fatalf("kind %q, want timeout", p.Kind)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a request with a 100ms deadline took %v", d)
	}
}

func TestPanicIs500AndServerSurvives(t *testing.T) {
	ix := &faultyIndex{panic: true}
	e := faultEnv(t, ix, nil)
	r := e.do("POST", "/v1/check", `{"fingerprint": "0x1"}`)
	if r.status != http.StatusInternalServerError {
		t.Fatalf("status %d", r.status)
	}
	p := r.problem(t)
	if p.Kind != "internal" || strings.Contains(string(r.body), "goroutine") || strings.Contains(string(r.body), "index bug") {
		t.Fatalf("panic leaked into the response: %s", r.body)
	}
	ix.panic = false
	if r := e.do("GET", "/healthz", nil); r.status != 200 {
		t.Fatalf("server dead after a panic: %d", r.status)
	}
}

func TestClassifyKeepsWrappedTypes(t *testing.T) {
	tests := []struct {
		err    error
		status int
	}{
		{fmt.Errorf("layer: %w", fmt.Errorf("%w: row 7", kvindex.ErrCorrupt)), 500},
		{fmt.Errorf("a: %w", fmt.Errorf("%w: gone", kvindex.ErrStore)), 503},
		{fmt.Errorf("a: %w", fmt.Errorf("%w (%w): no WRITE", kvindex.ErrStore, kvindex.ErrDenied)), 500},
		{fmt.Errorf("a: %w", context.DeadlineExceeded), 503},
		{fmt.Errorf("a: %w", kvindex.ErrNotFound), 404},
		{fmt.Errorf("a: %w", &http.MaxBytesError{Limit: 10}), 413},
		{errors.New("something odd"), 500},
	}
	for _, tc := range tests {
		if p := classify(tc.err); p.Status != tc.status {
			t.Errorf("classify(%v) = %d, want %d", tc.err, p.Status, tc.status)
		}
	}
	if p := classify(errors.New("secret internal detail")); strings.Contains(p.Detail, "secret") {
		t.Error("500 problems must not leak internal error text")
	}
}
