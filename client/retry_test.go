package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/client"
)

// storeDown is the server's answer when its store is unavailable.
const storeDown = `{"type":"urn:simdex:problem:store-unavailable","title":"Store unavailable","status":503,` +
	`"detail":"the index store is unavailable; retry later","kind":"store-unavailable"}`

// faultProxy forwards to the test server, except that the n-th request
// (from 1) is answered by fault when it returns true.
type faultProxy struct {
	*httptest.Server
	n atomic.Int64
}

func newFaultProxy(t *testing.T, fault func(n int64, w http.ResponseWriter, r *http.Request) bool) *faultProxy {
	t.Helper()
	target, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &faultProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fault(p.n.Add(1), w, r) {
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// unavailable answers 503 with the server's problem and Retry-After.
func unavailable(w http.ResponseWriter, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/problem+json; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write([]byte(storeDown))
}

// hangUp closes the connection without an answer.
func hangUp(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	conn.Close()
}

// TestRetry503 answers the first request 503 with Retry-After: 1: the
// client waits a second and the second attempt goes through, for reads
// and inserts alike.
func TestRetry503(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(c *client.Client) error
	}{
		{"check", func(c *client.Client) error {
			_, err := c.Check(ctx(t), client.CheckRequest{Content: client.Content{Fingerprint: "0x5"}})
			return err
		}},
		{"insert", func(c *client.Client) error {
			_, err := c.InsertDocument(ctx(t), client.InsertRequest{DocumentInput: client.DocumentInput{ID: "retry/1", Content: client.Content{Fingerprint: "0x6"}}})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newFaultProxy(t, func(n int64, w http.ResponseWriter, r *http.Request) bool {
				if n == 1 {
					unavailable(w, "1")
					return true
				}
				return false
			})
			c, _ := newClient(t, p.URL)
			start := time.Now()
			if err := tc.call(c); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d < time.Second {
				t.Fatalf("retried after %v, before the Retry-After second", d)
			}
			if p.n.Load() != 2 {
				t.Fatalf("%d requests, want 2", p.n.Load())
			}
		})
	}
}

// TestRetryBounds: retries stop at MaxRetries, at a Retry-After above
// MaxWait, and at the context's end; the last 503 comes back as *Error.
func TestRetryBounds(t *testing.T) {
	always := func(retryAfter string) func(int64, http.ResponseWriter, *http.Request) bool {
		return func(_ int64, w http.ResponseWriter, _ *http.Request) bool {
			unavailable(w, retryAfter)
			return true
		}
	}
	check := func(c *client.Client, ctx context.Context) error {
		_, err := c.Check(ctx, client.CheckRequest{Content: client.Content{Fingerprint: "0x5"}})
		return err
	}
	want503 := func(t *testing.T, err error) *client.Error {
		t.Helper()
		e := asError(t, err)
		if e.Status != 503 || e.Kind != "store-unavailable" {
			t.Fatalf("error %+v", e)
		}
		return e
	}

	t.Run("max retries", func(t *testing.T) {
		p := newFaultProxy(t, always(""))
		c, _ := newClient(t, p.URL, client.WithRetry(client.RetryPolicy{MaxRetries: 2, MaxWait: time.Second, Backoff: 10 * time.Millisecond}))
		want503(t, check(c, ctx(t)))
		if p.n.Load() != 3 {
			t.Fatalf("%d requests, want 3", p.n.Load())
		}
	})
	t.Run("retry-after above max wait", func(t *testing.T) {
		p := newFaultProxy(t, always("120"))
		c, _ := newClient(t, p.URL)
		start := time.Now()
		e := want503(t, check(c, ctx(t)))
		if e.RetryAfter != 120*time.Second || p.n.Load() != 1 || time.Since(start) > 5*time.Second {
			t.Fatalf("RetryAfter %v, %d requests, %v", e.RetryAfter, p.n.Load(), time.Since(start))
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		p := newFaultProxy(t, always("2"))
		c, _ := newClient(t, p.URL)
		cctx, cancel := context.WithTimeout(ctx(t), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		want503(t, check(c, cctx))
		if p.n.Load() != 1 || time.Since(start) > 400*time.Millisecond {
			t.Fatalf("%d requests in %v: waited past the deadline", p.n.Load(), time.Since(start))
		}
	})
	t.Run("context cancelled while waiting", func(t *testing.T) {
		p := newFaultProxy(t, always("1"))
		c, _ := newClient(t, p.URL)
		cctx, cancel := context.WithCancel(ctx(t))
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		err := check(c, cctx)
		if time.Since(start) > 900*time.Millisecond || p.n.Load() != 1 {
			t.Fatalf("%d requests in %v", p.n.Load(), time.Since(start))
		}
		want503(t, err)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%v does not wrap context.Canceled", err)
		}
	})
	t.Run("no retries", func(t *testing.T) {
		p := newFaultProxy(t, always("1"))
		c, _ := newClient(t, p.URL, client.WithRetry(client.RetryPolicy{}))
		want503(t, check(c, ctx(t)))
		if p.n.Load() != 1 {
			t.Fatalf("%d requests, want 1", p.n.Load())
		}
	})
}

// TestRetryConnectionErrors: a connection closed without an answer is
// retried for idempotent operations, not for inserts.
func TestRetryConnectionErrors(t *testing.T) {
	firstHangsUp := func(n int64, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 {
			hangUp(t, w)
			return true
		}
		return false
	}
	p := newFaultProxy(t, firstHangsUp)
	c, _ := newClient(t, p.URL, client.WithRetry(client.RetryPolicy{MaxRetries: 2, MaxWait: time.Second, Backoff: 10 * time.Millisecond}))
	if _, err := c.Stats(ctx(t), client.StatsOptions{Rows: client.Ptr(0)}); err != nil {
		t.Fatal(err)
	}
	if p.n.Load() != 2 {
		t.Fatalf("stats: %d requests, want 2", p.n.Load())
	}

	p = newFaultProxy(t, firstHangsUp)
	c, _ = newClient(t, p.URL, client.WithRetry(client.RetryPolicy{MaxRetries: 2, MaxWait: time.Second, Backoff: 10 * time.Millisecond}))
	_, err := c.InsertDocument(ctx(t), client.InsertRequest{DocumentInput: client.DocumentInput{ID: "retry/2", Content: client.Content{Fingerprint: "0x7"}}})
	var pe *client.Error
	if err == nil || errors.As(err, &pe) {
		t.Fatalf("insert over a hung-up connection: %v", err)
	}
	if p.n.Load() != 1 {
		t.Fatalf("insert: %d requests, want 1 (not idempotent)", p.n.Load())
	}
}

// TestNonProblemError: an error status without a problem body (a proxy's
// page) is an *Error with the status and the body's start.
func TestNonProblemError(t *testing.T) {
	p := newFaultProxy(t, func(_ int64, w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html>bad gateway</html>"))
		return true
	})
	c, _ := newClient(t, p.URL)
	_, err := c.Health(ctx(t))
	e := asError(t, err)
	if e.Status != http.StatusBadGateway || e.Kind != "" || e.Detail != "<html>bad gateway</html>" || p.n.Load() != 1 {
		t.Fatalf("%+v after %d requests", e, p.n.Load())
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"1":                             time.Second,
		" 30 ":                          30 * time.Second,
		"-1":                            0,
		"soon":                          0,
		"Mon, 23 Nov 2026 08:00:05 GMT": 5 * time.Second,
		"Mon, 23 Nov 2026 07:00:00 GMT": 0,
		"99999999999":                   24 * time.Hour,
	} {
		if got := client.ParseRetryAfter(in, now); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}
