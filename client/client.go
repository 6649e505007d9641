// Package client is a Go client for the simdex REST service
// (internal/server; the contract is the OpenAPI document it serves at
// /openapi.json).
//
// Every operation of the document but the editor's page (HTML for
// browsers) has a method on *Client, taking a context first. Batch methods split their items into calls of at most
// the server's batch limit (DefaultMaxBatch, the document's maxItems) and
// body size (DefaultMaxBodyBytes) and merge the answers, so a caller can
// pass any number of items. A 503 (the store is down or timed out) is
// retried after the server's Retry-After, and a connection error is
// retried for idempotent operations, both within a RetryPolicy and the
// context's deadline. Problem responses (application/problem+json) come
// back as *Error:
//
//	c, err := client.New("http://127.0.0.1:8080", client.WithAPIKey(key))
//	res, err := c.Check(ctx, client.CheckRequest{Content: client.Content{Title: "...", Text: "..."}})
//	var pe *client.Error
//	if errors.As(err, &pe) && pe.Kind == "bad-fingerprint" { ... }
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxBatch is the server's default limit on the items of one batch
// call (its --max-batch, the OpenAPI document's maxItems): documents and
// checks per batch, ids or candidates per user and users per seen batch.
const DefaultMaxBatch = 1000

// DefaultMaxBodyBytes is the server's default limit on a request body (its
// --max-body-bytes); batch calls are cut to stay under it.
const DefaultMaxBodyBytes = 8 << 20

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// RetryPolicy bounds retries. A 503 answer is retried after its
// Retry-After (or, without one, after Backoff doubling per retry) when
// that wait is at most MaxWait; a connection error is retried after the
// backoff, for idempotent operations only. No wait outlives the call's
// context: when the context would end first, the last error is returned at
// once.
type RetryPolicy struct {
	// MaxRetries is how many times one request is retried (0: never).
	MaxRetries int
	// MaxWait is the longest wait honoured; a Retry-After above it ends
	// the retries.
	MaxWait time.Duration
	// Backoff is the first wait when the server named none; it doubles
	// per retry (with up to 50% jitter added), capped at MaxWait.
	Backoff time.Duration
}

// DefaultRetryPolicy is the policy of a Client built without WithRetry:
// three retries, waits of at most 30 s, backoff from 200 ms.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 3, MaxWait: 30 * time.Second, Backoff: 200 * time.Millisecond}
}

// Client calls one simdex server. It is safe for concurrent use.
type Client struct {
	base         *url.URL
	apiKey       string
	hc           *http.Client
	retry        RetryPolicy
	maxBatch     int
	maxBodyBytes int
	userAgent    string
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key as "Authorization: Bearer <key>" on every request
// (the server asks for it on write operations when it has keys).
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient makes the Client send its requests through hc (for its
// transport, timeouts, proxies or instrumentation); nil keeps
// http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithRetry replaces DefaultRetryPolicy.
func WithRetry(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithMaxBatch sets the most items per batch call, for a server started
// with another --max-batch (n < 1 keeps DefaultMaxBatch).
func WithMaxBatch(n int) Option {
	return func(c *Client) {
		if n >= 1 {
			c.maxBatch = n
		}
	}
}

// WithMaxBodyBytes sets the body size batch calls are cut to, for a server
// started with another --max-body-bytes (n < 1 keeps DefaultMaxBodyBytes).
func WithMaxBodyBytes(n int) Option {
	return func(c *Client) {
		if n >= 1 {
			c.maxBodyBytes = n
		}
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a Client of the server at baseURL (scheme, host and an
// optional path prefix, e.g. "http://127.0.0.1:8080").
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("client: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q: want http(s)://host[:port][/prefix]", baseURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	u.RawQuery, u.Fragment = "", ""
	c := &Client{base: u, hc: http.DefaultClient, retry: DefaultRetryPolicy(), maxBatch: DefaultMaxBatch,
		maxBodyBytes: DefaultMaxBodyBytes, userAgent: "simdex-go-client"}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL is the server's address as given to New (without a trailing '/').
func (c *Client) BaseURL() string { return c.base.String() }

// Error is a problem the server answered (RFC 9457 problem details), or an
// error status without a problem body (then Kind is empty and Detail holds
// the start of the body). Batch answers carry one per failed item.
type Error struct {
	// Status is the HTTP status (400, 401, 404, 413, 500, 501, 503, ...).
	Status int `json:"status"`
	// Kind is the machine-readable problem kind, e.g. "bad-fingerprint",
	// "invalid-field", "body-too-large", "store-unavailable", "not-writer", "not-found".
	Kind     string `json:"kind"`
	Type     string `json:"type,omitempty"`
	Title    string `json:"title"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Fields are the request fields at fault, when the server named them.
	Fields []FieldError `json:"errors,omitempty"`
	// RetryAfter is the wait the server asked for (503), 0 when it named
	// none.
	RetryAfter time.Duration `json:"-"`
}

// FieldError is one request field at fault.
type FieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("simdex: ")
	b.WriteString(strconv.Itoa(e.Status))
	if e.Kind != "" {
		b.WriteString(" " + e.Kind)
	}
	switch {
	case e.Detail != "":
		b.WriteString(": " + e.Detail)
	case e.Title != "":
		b.WriteString(": " + e.Title)
	}
	return b.String()
}

// Field returns the detail the server gave for the named request field.
func (e *Error) Field(name string) (string, bool) {
	for _, f := range e.Fields {
		if f.Field == name {
			return f.Detail, true
		}
	}
	return "", false
}

// IsKind reports whether err is (or wraps) an *Error of the given kind.
func IsKind(err error, kind string) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == kind
}

// IsNotFound reports whether err is (or wraps) a 404 answer.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// route is one operation of the OpenAPI document.
type route struct {
	op     string // operationId
	method string
	path   string // with {name} parameters
	// idempotent operations are retried after connection errors: reads,
	// deletes and seen marks (marking an item again leaves the set as one
	// mark does). Inserts are not: one repeated after a lost answer
	// stores the document again (with a new time when it gave none) and
	// answers "replaced".
	idempotent bool
}

// routes are the operations of the OpenAPI document that Client calls,
// one per method (drift_test.go compares them with the server's
// document). The editor's page and its files (operations page and
// pageFile) are for browsers and have no method.
var (
	opCheck           = route{"check", http.MethodPost, "/v1/check", true}
	opCheckBatch      = route{"checkBatch", http.MethodPost, "/v1/check/batch", true}
	opInsertDocument  = route{"insertDocument", http.MethodPost, "/v1/documents", false}
	opInsertDocuments = route{"insertDocuments", http.MethodPost, "/v1/documents/batch", false}
	opGetDocument     = route{"getDocument", http.MethodGet, "/v1/documents/{id}", true}
	opDeleteDocument  = route{"deleteDocument", http.MethodDelete, "/v1/documents/{id}", true}
	opFingerprint     = route{"fingerprint", http.MethodPost, "/v1/fingerprint", true}
	opExplain         = route{"explain", http.MethodPost, "/v1/explain", true}
	opStats           = route{"stats", http.MethodGet, "/v1/stats", true}
	opHealthz         = route{"healthz", http.MethodGet, "/healthz", true}
	opReadyz          = route{"readyz", http.MethodGet, "/readyz", true}
	opMetrics         = route{"metrics", http.MethodGet, "/metrics", true}
	opOpenAPI         = route{"openapi", http.MethodGet, "/openapi.json", true}
	opSeenUser        = route{"seenUser", http.MethodGet, "/v1/users/{user}/seen", true}
	opSeenMark        = route{"seenMark", http.MethodPost, "/v1/users/{user}/seen", true}
	opSeenForget      = route{"seenForget", http.MethodDelete, "/v1/users/{user}/seen", true}
	opSeenCheck       = route{"seenCheck", http.MethodPost, "/v1/users/{user}/seen/check", true}
	opSeenFilter      = route{"seenFilter", http.MethodPost, "/v1/users/{user}/seen/filter", true}
	opSeenDelete      = route{"seenDelete", http.MethodDelete, "/v1/users/{user}/seen/items/{item}", true}
	opSeenMarkBatch   = route{"seenMarkBatch", http.MethodPost, "/v1/seen/mark", true}
	opSeenCheckBatch  = route{"seenCheckBatch", http.MethodPost, "/v1/seen/check", true}
	opSeenFilterBatch = route{"seenFilterBatch", http.MethodPost, "/v1/seen/filter", true}
)

var routes = []route{
	opCheck, opCheckBatch, opInsertDocument, opInsertDocuments, opGetDocument, opDeleteDocument,
	opFingerprint, opExplain, opStats, opHealthz, opReadyz, opMetrics, opOpenAPI,
	opSeenUser, opSeenMark, opSeenForget, opSeenCheck, opSeenFilter, opSeenDelete,
	opSeenMarkBatch, opSeenCheckBatch, opSeenFilterBatch,
}

// url builds the URL of r with its path parameters, in order, escaped
// (so document and item ids may hold '/', '?' or '%').
func (c *Client) url(r route, query url.Values, params ...string) string {
	var b strings.Builder
	b.WriteString(c.base.String())
	p := r.path
	for _, v := range params {
		i := strings.IndexByte(p, '{')
		j := strings.IndexByte(p, '}')
		b.WriteString(p[:i])
		b.WriteString(url.PathEscape(v))
		p = p[j+1:]
	}
	b.WriteString(p)
	if len(query) > 0 {
		b.WriteString("?" + query.Encode())
	}
	return b.String()
}

// reply is a successful answer.
type reply struct {
	status int
	body   []byte
}

// call sends one request (retrying as the policy allows) and decodes a 2xx
// JSON answer into out (nil: ignored). in is marshalled as JSON unless it
// is nil or already []byte.
func (c *Client) call(ctx context.Context, r route, u string, in any, out any) (reply, error) {
	var body []byte
	switch v := in.(type) {
	case nil:
	case []byte:
		body = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return reply{}, fmt.Errorf("client: %s: encoding the request: %w", r.op, err)
		}
		body = b
	}
	rep, err := c.send(ctx, r, u, body)
	if err != nil {
		return rep, err
	}
	if out != nil && len(rep.body) > 0 {
		if err := json.Unmarshal(rep.body, out); err != nil {
			return rep, fmt.Errorf("client: %s: decoding the answer (status %d): %w", r.op, rep.status, err)
		}
	}
	return rep, nil
}

// send is the retry loop around one request.
func (c *Client) send(ctx context.Context, r route, u string, body []byte) (reply, error) {
	for attempt := 0; ; attempt++ {
		rep, err := c.once(ctx, r, u, body)
		if err == nil {
			return rep, nil
		}
		if ctx.Err() != nil {
			return rep, err
		}
		wait, ok := c.retryWait(r, attempt, err)
		if !ok {
			return rep, err
		}
		if dl, has := ctx.Deadline(); has && time.Until(dl) < wait {
			return rep, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return rep, fmt.Errorf("%w (not retried: %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// retryWait says whether (and after how long) a failed attempt is retried.
func (c *Client) retryWait(r route, attempt int, err error) (time.Duration, bool) {
	p := c.retry
	if attempt >= p.MaxRetries {
		return 0, false
	}
	backoff := p.Backoff << attempt
	if backoff < 0 || backoff > p.MaxWait {
		backoff = p.MaxWait
	}
	if backoff > 0 {
		backoff = min(backoff+rand.N(backoff/2+1), p.MaxWait)
	}
	var pe *Error
	if errors.As(err, &pe) {
		if pe.Status != http.StatusServiceUnavailable {
			return 0, false
		}
		if pe.RetryAfter > 0 {
			return pe.RetryAfter, pe.RetryAfter <= p.MaxWait
		}
		return backoff, true
	}
	// A transport error: the request may or may not have been served.
	return backoff, r.idempotent
}

// once sends one attempt; an error status comes back as *Error.
func (c *Client) once(ctx context.Context, r route, u string, body []byte) (reply, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, rd)
	if err != nil {
		return reply{}, fmt.Errorf("client: %s: %w", r.op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("client: %s: %w", r.op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return reply{}, fmt.Errorf("client: %s: reading the answer: %w", r.op, err)
		}
		return reply{status: resp.StatusCode, body: b}, nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return reply{status: resp.StatusCode}, problemError(resp, b)
}

// problemError turns an error answer into *Error.
func problemError(resp *http.Response, body []byte) *Error {
	e := &Error{}
	ct := resp.Header.Get("Content-Type")
	if !strings.Contains(ct, "json") || json.Unmarshal(body, e) != nil {
		e = &Error{Title: http.StatusText(resp.StatusCode), Detail: strings.TrimSpace(string(body))}
		if len(e.Detail) > 512 {
			e.Detail = e.Detail[:512]
		}
	}
	e.Status = resp.StatusCode
	e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return e
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP
// date (0 when absent, unreadable or past).
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > int64(24*time.Hour/time.Second) {
			n = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
