package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Client speaks the parts of simdex's REST API (internal/server/
// openapi.json) the benchmark uses.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client for the service at base (http://host:port).
func NewClient(base string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: base, hc: hc}
}

// Doc is a document to store.
type Doc struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
	// Attrs carries the document's source ("source"), when it has one.
	Attrs map[string]string `json:"attrs,omitempty"`
}

// Query is a text to check.
type Query struct {
	Title string `json:"title"`
	Text  string `json:"text"`
	// Source names the query's source (a check's "source"), when it has
	// one.
	Source string `json:"source,omitempty"`
}

// sourceAttrs is the attributes of a document of source src (nil for
// none): the service's default source attribute.
func sourceAttrs(src string) map[string]string {
	if src == "" {
		return nil
	}
	return map[string]string{"source": src}
}

// Hit is one stored document a check returned.
type Hit struct {
	ID       string `json:"id"`
	Distance int    `json:"distance"`
	Exact    bool   `json:"exact"`
	// The service's own account of the hit, when it gives one (optional
	// fields): how the query relates to the stored document
	// (near_identical, query_is_excerpt, stored_is_excerpt, overlap), the
	// measures behind it and the rule clause that accepted it.
	Relation          string   `json:"relation,omitempty"`
	Resemblance       *float64 `json:"resemblance,omitempty"`
	QueryContainment  *float64 `json:"query_containment,omitempty"`
	StoredContainment *float64 `json:"stored_containment,omitempty"`
	Clause            string   `json:"clause,omitempty"`
}

// Inserted is the service's answer for one stored document; Problem is
// the problem kind (e.g. "low-information") when it failed.
type Inserted struct {
	Fingerprint string `json:"fingerprint"`
	Problem     string `json:"-"`
}

// Checked is the service's answer for one checked text; Problem as in
// Inserted.
type Checked struct {
	Fingerprint string `json:"fingerprint"`
	K           int    `json:"k"`
	Duplicate   bool   `json:"duplicate"`
	Duplicates  []Hit  `json:"duplicates"`
	Truncated   bool   `json:"truncated"`
	Problem     string `json:"-"`
}

type itemError struct {
	Index int `json:"index"`
	Error struct {
		Kind   string `json:"kind"`
		Detail string `json:"detail"`
	} `json:"error"`
}

// InsertBatch stores docs with POST /v1/documents/batch, mode "insert".
func (c *Client) InsertBatch(ctx context.Context, docs []Doc) ([]Inserted, error) {
	req := map[string]any{"items": docs, "mode": "insert"}
	body, err := c.post(ctx, "/v1/documents/batch", req)
	if err != nil {
		return nil, err
	}
	return decodeInsertBatch(body, len(docs))
}

// decodeInsertBatch decodes a batch insert response for n items.
func decodeInsertBatch(body []byte, n int) ([]Inserted, error) {
	var resp struct {
		Results []*Inserted `json:"results"`
		Errors  []itemError `json:"errors"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("%w: batch insert response: %v", ErrServer, err)
	}
	out := make([]Inserted, n)
	if err := merge(out, resp.Results, resp.Errors, func(i *Inserted, kind string) { i.Problem = kind }); err != nil {
		return nil, err
	}
	return out, nil
}

// CheckBatch checks queries with POST /v1/check/batch. k < 0 leaves k to
// the service's default; limit is the most hits per query.
func (c *Client) CheckBatch(ctx context.Context, qs []Query, k, limit int) ([]Checked, error) {
	req := map[string]any{"items": qs, "limit": limit}
	if k >= 0 {
		req["k"] = k
	}
	body, err := c.post(ctx, "/v1/check/batch", req)
	if err != nil {
		return nil, err
	}
	return decodeCheckBatch(body, len(qs))
}

// decodeCheckBatch decodes a batch check response for n items.
func decodeCheckBatch(body []byte, n int) ([]Checked, error) {
	var resp struct {
		Results []*Checked  `json:"results"`
		Errors  []itemError `json:"errors"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("%w: batch check response: %v", ErrServer, err)
	}
	out := make([]Checked, n)
	if err := merge(out, resp.Results, resp.Errors, func(c *Checked, kind string) { c.Problem = kind }); err != nil {
		return nil, err
	}
	return out, nil
}

// merge places results and per-item errors into out, one per item, and
// rejects a response that does not account for every item exactly once.
func merge[T any](out []T, results []*T, errs []itemError, fail func(*T, string)) error {
	if len(results) != len(out) {
		return fmt.Errorf("%w: %d results for %d items", ErrServer, len(results), len(out))
	}
	failed := make([]bool, len(out))
	for _, e := range errs {
		if e.Index < 0 || e.Index >= len(out) || failed[e.Index] || results[e.Index] != nil {
			return fmt.Errorf("%w: bad error index %d", ErrServer, e.Index)
		}
		failed[e.Index] = true
		kind := e.Error.Kind
		if kind == "" {
			kind = "error"
		}
		fail(&out[e.Index], kind)
	}
	for i, r := range results {
		switch {
		case r != nil:
			out[i] = *r
		case !failed[i]:
			return fmt.Errorf("%w: item %d has neither a result nor an error", ErrServer, i)
		}
	}
	return nil
}

// maxTries bounds the attempts of one request answered 503: the server
// sheds load or its store timed out under a busy machine, and the
// benchmark's requests (inserts that replace by id, checks) may be sent
// again.
const maxTries = 6

// post sends body as JSON and returns the response body of a 200 answer;
// a 503 is sent again after its Retry-After (1 s when it names none).
func (c *Client) post(ctx context.Context, path string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		rb, status, retryAfter, err := c.postOnce(ctx, path, b)
		if err != nil {
			return nil, err
		}
		if status == http.StatusOK {
			return rb, nil
		}
		if status != http.StatusServiceUnavailable || try == maxTries {
			return nil, fmt.Errorf("%w: POST %s: %d %s: %.500s", ErrServer, path, status, http.StatusText(status), rb)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(retryAfter):
		}
	}
}

func (c *Client) postOnce(ctx context.Context, path string, b []byte) (body []byte, status int, retryAfter time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return nil, 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%w: POST %s: %v", ErrServer, path, err)
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%w: POST %s: %v", ErrServer, path, err)
	}
	retryAfter = time.Second
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n >= 0 && n <= 60 {
		retryAfter = time.Duration(n) * time.Second
	}
	return rb, resp.StatusCode, retryAfter, nil
}
