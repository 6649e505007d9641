package client_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/client"
	"github.com/simdex/simdex/internal/server"
)

// The tests share one real server: server.Run (what cmd/server runs) on
// loopback over an embedded store in a temporary directory, with an API
// key, started once because loading the dictionaries takes seconds.
var (
	serverURL string
	// calls records every request the tests' clients send, by operation,
	// so TestMain can check that every operation was exercised.
	calls = &recorder{ops: map[string]int{}}
)

// testAPIKey is the server's only API key.
const testAPIKey = "client-test-key-0123456789"

func TestMain(m *testing.M) {
	flag.Parse()
	code, err := runWithServer(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func runWithServer(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "simdex-client-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	cfg := server.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = dir
	cfg.APIKeys = []string{testAPIKey}
	cfg.LogLevel = "error"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, os.Stderr, ready) }()
	select {
	case addr := <-ready:
		serverURL = "http://" + addr.String()
	case err := <-done:
		cancel()
		return 0, fmt.Errorf("server did not start: %w", err)
	case <-time.After(5 * time.Minute):
		cancel()
		return 0, fmt.Errorf("server did not start within 5 minutes")
	}
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		return code, fmt.Errorf("server: %w", err)
	}
	if code == 0 && flag.Lookup("test.run").Value.String() == "" {
		if missing := calls.missing(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "operations no test called: %s\n", strings.Join(missing, ", "))
			return 1, nil
		}
	}
	return code, nil
}

// recorder counts requests per operation (matched on the client's route
// table by method and escaped path).
type recorder struct {
	mu  sync.Mutex
	ops map[string]int
}

func (r *recorder) add(req *http.Request) {
	op := matchRoute(req.Method, req.URL.EscapedPath())
	r.mu.Lock()
	r.ops[op]++
	r.mu.Unlock()
}

func (r *recorder) missing() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rt := range client.Routes() {
		if r.ops[rt.Op] == 0 {
			out = append(out, rt.Op)
		}
	}
	sort.Strings(out)
	return out
}

// matchRoute names the operation of a request ("" if none): a {param}
// matches one escaped path segment.
func matchRoute(method, path string) string {
	segs := strings.Split(path, "/")
	for _, rt := range client.Routes() {
		if rt.Method != method {
			continue
		}
		tpl := strings.Split(rt.Path, "/")
		if len(tpl) != len(segs) {
			continue
		}
		ok := true
		for i, t := range tpl {
			if strings.HasPrefix(t, "{") {
				ok = ok && segs[i] != ""
			} else {
				ok = ok && t == segs[i]
			}
		}
		if ok {
			return rt.Op
		}
	}
	return ""
}

// counting is a RoundTripper that records each request (in calls and in
// its own per-operation counts) before passing it on.
type counting struct {
	next http.RoundTripper
	mu   sync.Mutex
	ops  map[string]int
	// maxBody is the largest request body sent.
	maxBody int64
}

func (c *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	calls.add(req)
	c.mu.Lock()
	if c.ops == nil {
		c.ops = map[string]int{}
	}
	c.ops[matchRoute(req.Method, req.URL.EscapedPath())]++
	c.maxBody = max(c.maxBody, req.ContentLength)
	c.mu.Unlock()
	return c.next.RoundTrip(req)
}

// count is how many requests of the operation went through.
func (c *counting) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops[op]
}

// newClient is a client of the test server (or of url, when given) with
// the API key, sending through a counting transport.
func newClient(t testing.TB, url string, opts ...client.Option) (*client.Client, *counting) {
	t.Helper()
	if url == "" {
		url = serverURL
	}
	tr := &counting{next: http.DefaultTransport}
	opts = append([]client.Option{client.WithAPIKey(testAPIKey), client.WithHTTPClient(&http.Client{Transport: tr})}, opts...)
	c, err := client.New(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, tr
}

// ctx is a test's context, bounded so a hung call fails the test.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// discard drains and closes a response body.
func discard(resp *http.Response) {
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
