package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// The dictionaries take over a second to load; tests share one Fingerprinter
// (it is safe for concurrent use).
var (
	fpOnce   sync.Once
	fpShared *fingerprint.Fingerprinter
	fpErr    error
)

func sharedFingerprinter(t testing.TB) *fingerprint.Fingerprinter {
	t.Helper()
	fpOnce.Do(func() { fpShared, fpErr = fingerprint.New(fingerprint.DefaultConfig()) })
	if fpErr != nil {
		t.Fatal(fpErr)
	}
	return fpShared
}

// testEnv is one server on real HTTP (loopback) over a real Pebble store.
type testEnv struct {
	t      *testing.T
	dir    string
	cfg    Config
	ix     *kvindex.Index
	srv    *Server
	http   *httptest.Server
	reg    *prometheus.Registry
	router routers.Router
	apiKey string // sent on every request when set
}

func openIndex(t testing.TB, dir string, layout fingerprint.Layout, reg prometheus.Registerer) *kvindex.Index {
	t.Helper()
	st, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The server's own decision (run.go): insert-if-unique judges its
	// candidates by the same rule and policy as a check, and the scoped
	// rows a check reads are those the rule's counts need.
	ix, err := kvindex.Open(context.Background(), st, kvindex.Config{Layout: layout, RecipeVersion: fingerprint.RecipeVersion, Registerer: reg,
		Confirm: DefaultConfig().judge(sharedFingerprinter(t)).Confirm, SourceKeyMinDocs: DefaultConfig().Rule.TemplateMinDocs})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	return ix
}

// newEnv starts a server on the embedded store; mod may adjust the config
// (dir is fixed).
func newEnv(t *testing.T, dir string, mod func(*Config)) *testEnv {
	t.Helper()
	return newStoreEnv(t, "pebble", dir, mod)
}

// storeKinds are the stores the end-to-end tests run on.
var storeKinds = []string{"pebble", "hbase"}

// forEachStore runs fn as a subtest per store kind. The HBase subtest skips
// (fails under CI) without SIMDEX_HBASE_ZK.
func forEachStore(t *testing.T, fn func(t *testing.T, store string)) {
	for _, store := range storeKinds {
		t.Run(store, func(t *testing.T) {
			if store == "hbase" {
				hbasetest.ZK(t)
			}
			fn(t, store)
		})
	}
}

// newStoreDir returns where a new test index of the store kind lives: a
// temporary directory for Pebble, a fresh namespace (dropped when the test
// ends) on the suite's HBase.
func newStoreDir(t *testing.T, store string) string {
	t.Helper()
	if store == "hbase" {
		return hbaseNamespace(t, hbasetest.ZK(t))
	}
	return t.TempDir()
}

// openStoreIndex opens the index of the store kind at dir (a Pebble
// directory, or an HBase namespace whose tables it creates), as Run does:
// on HBase with the cross-process lease Locker.
func openStoreIndex(t testing.TB, store, dir string, layout fingerprint.Layout, reg prometheus.Registerer) *kvindex.Index {
	t.Helper()
	if store != "hbase" {
		return openIndex(t, dir, layout, reg)
	}
	return openHBaseIndex(t, hbasetest.ZK(t), dir, layout, reg)
}

// openHBaseIndex opens (creating its tables) the index in namespace ns of
// the HBase at zk, as Run does: lease Locker and group commit.
func openHBaseIndex(t testing.TB, zk, ns string, layout fingerprint.Layout, reg prometheus.Registerer) *kvindex.Index {
	t.Helper()
	ctx := context.Background()
	st, err := hbasestore.Open(ctx, hbasestore.Config{ZooKeeper: []string{zk}, Namespace: ns, CreateTables: true})
	if err != nil {
		t.Fatal(err)
	}
	def := DefaultConfig()
	ix, err := kvindex.Open(ctx, st, kvindex.Config{Layout: layout, RecipeVersion: fingerprint.RecipeVersion, Registerer: reg, Locker: st.Locker(),
		GroupWindow: def.HBaseInsertGroup, GroupMax: def.HBaseInsertGroupMax, Confirm: def.judge(sharedFingerprinter(t)).Confirm})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	return ix
}

// newStoreEnv starts a server on the store kind ("pebble" or "hbase") at
// dir (see newStoreDir; "" for a new one); mod may adjust the config.
func newStoreEnv(t *testing.T, store, dir string, mod func(*Config)) *testEnv {
	t.Helper()
	if dir == "" {
		dir = newStoreDir(t, store)
	}
	cfg := DefaultConfig()
	cfg.DataDir = dir
	if store == "hbase" {
		cfg.Store, cfg.HBaseZK, cfg.HBaseNamespace = "hbase", hbasetest.ZK(t), dir
	}
	if mod != nil {
		mod(&cfg)
	}
	e := &testEnv{t: t, dir: dir, cfg: cfg, reg: prometheus.NewRegistry()}
	if store == "hbase" {
		e.ix = openHBaseIndex(t, cfg.HBaseZK, dir, cfg.Layout, e.reg)
	} else {
		e.ix = openIndex(t, dir, cfg.Layout, e.reg)
	}
	srv, err := New(cfg, e.ix, sharedFingerprinter(t), nil, e.reg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	e.http = httptest.NewServer(srv)
	e.router = openAPIRouter(t)
	t.Cleanup(e.close)
	return e
}

func (e *testEnv) close() {
	if e.http != nil {
		e.http.Close()
		e.http = nil
	}
	if e.ix != nil {
		if err := e.ix.Close(); err != nil {
			e.t.Errorf("closing index: %v", err)
		}
		e.ix = nil
	}
}

var (
	docOnce sync.Once
	docT    *openapi3.T
	docErr  error
)

func openAPIRouter(t testing.TB) routers.Router {
	t.Helper()
	docOnce.Do(func() {
		docT, docErr = openapi3.NewLoader().LoadFromData(openAPIDocument)
		if docErr == nil {
			docErr = docT.Validate(context.Background())
		}
		if docErr == nil {
			docT.Servers = nil // match any host: the test server's port is random
		}
	})
	if docErr != nil {
		t.Fatalf("openapi.json: %v", docErr)
	}
	r, err := legacy.NewRouter(docT)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// response is one HTTP exchange's outcome.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

func (r response) problem(t testing.TB) problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("status %d content type %q, want application/problem+json; body %s", r.status, ct, r.body)
	}
	var p problem
	r.json(t, &p)
	if p.Status != r.status || p.Kind == "" || p.Title == "" {
		t.Fatalf("incomplete problem %+v for status %d", p, r.status)
	}
	return p
}

// do sends a request and checks the response against openapi.json (for
// documented routes). body may be a string/[]byte (sent raw) or a value
// (sent as JSON).
func (e *testEnv) do(method, path string, body any) response {
	e.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, e.http.URL+path, bytes.NewReader(raw))
	if err != nil {
		e.t.Fatal(err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if e.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.apiKey)
	}
	resp, err := e.http.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: out}
	e.checkAgainstSpec(req, r)
	return r
}

// checkAgainstSpec validates a response of a documented route against the
// OpenAPI document: its status must be listed and its body must match.
func (e *testEnv) checkAgainstSpec(req *http.Request, r response) {
	e.t.Helper()
	// Document ids may hold '/', which the server's catch-all route takes
	// whole; the OpenAPI router matches {id} within one path segment, so
	// route on the escaped form.
	routeReq := req
	if rest, ok := strings.CutPrefix(req.URL.Path, "/v1/documents/"); ok && strings.Contains(rest, "/") {
		routeReq = req.Clone(req.Context())
		routeReq.URL.Path = "/v1/documents/" + strings.ReplaceAll(rest, "/", "%2F")
	}
	route, params, err := e.router.FindRoute(routeReq)
	if err == nil && r.status == http.StatusMethodNotAllowed {
		// The router matched a templated path (GET /v1/documents/batch as
		// /v1/documents/{id}) where OpenAPI's concrete path, which does
		// not take the method, comes first.
		err = routers.ErrMethodNotAllowed
	}
	if err != nil {
		// Undocumented routes must answer 404/405 problems.
		if r.status != http.StatusNotFound && r.status != http.StatusMethodNotAllowed {
			e.t.Errorf("%s %s is not in openapi.json but answered %d", req.Method, req.URL.Path, r.status)
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 r.status,
		Header:                 r.header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(r.body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		e.t.Errorf("%s %s -> %d does not match openapi.json: %v\nbody: %s", req.Method, req.URL.Path, r.status, err, r.body)
	}
}

// runServer is one whole server (Run, as cmd/server runs it), reached over
// real HTTP on loopback.
type runServer struct {
	base string
	stop func() error // stops it and returns Run's error (once; later calls return the same)
}

// startRun runs the server with cfg and returns it once it listens; it is
// stopped when the test ends. SIMDEX_TEST_SERVER_LOG=1 shows its log.
func startRun(t *testing.T, cfg Config) *runServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	var logOut io.Writer = io.Discard
	if os.Getenv("SIMDEX_TEST_SERVER_LOG") == "1" {
		logOut = os.Stderr // to debug a failing test
	}
	go func() { done <- Run(ctx, cfg, logOut, ready) }()
	select {
	case addr := <-ready:
		var once sync.Once
		var err error
		s := &runServer{base: "http://" + addr.String(), stop: func() error {
			once.Do(func() { cancel(); err = <-done })
			return err
		}}
		t.Cleanup(func() { s.stop() })
		return s
	case err := <-done:
		cancel()
		t.Fatalf("server did not start: %v", err)
	case <-time.After(2 * time.Minute):
		cancel()
		t.Fatal("server did not start within 2 minutes")
	}
	return nil
}

// apiCall sends one JSON call to a server at base (with key as the bearer
// token when there is one) and returns the answer's status and body.
func apiCall(t *testing.T, base, key, method, path string, body any) (int, []byte) {
	t.Helper()
	code, _, out := apiCallHeader(t, base, key, method, path, body)
	return code, out
}

// apiCallHeader is apiCall with the response's headers.
func apiCallHeader(t *testing.T, base, key, method, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

// problemCase is a request the server must refuse with a problem of a
// status and kind.
type problemCase struct {
	name, method, path string
	body               any
	status             int
	kind               string
}

// checkProblems sends each case's request in a subtest and checks its
// problem's status and kind.
func checkProblems(t *testing.T, e *testEnv, cases []problemCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if p := r.problem(t); p.Kind != tc.kind {
				t.Fatalf("kind %q, want %q: %s (%s)", p.Kind, tc.kind, p.Detail, r.body)
			}
		})
	}
}

// checkFinds checks text and fails the test (saying what) unless the
// answer is one duplicate, the document id.
func (e *testEnv) checkFinds(text, id, what string) {
	e.t.Helper()
	var chk checkResponse
	e.do("POST", "/v1/check", map[string]any{"text": text}).json(e.t, &chk)
	if len(chk.Duplicates) != 1 || chk.Duplicates[0].ID != id {
		e.t.Fatalf("%s: %+v", what, chk)
	}
}
