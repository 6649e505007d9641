package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
)

// Check finds the stored near-duplicates of a text or fingerprint.
func (c *Client) Check(ctx context.Context, req CheckRequest) (*CheckResponse, error) {
	return callFor[CheckResponse](ctx, c, opCheck, c.url(opCheck, nil), req)
}

// CheckBatch checks many items, in calls of at most the batch limit and
// body size; the answer has a result per item, in order, and the failed
// items' problems. When a call fails, the answer holds the results of the
// calls before it (Results is as long as the items sent) and the error
// names the items of the failed call.
func (c *Client) CheckBatch(ctx context.Context, req BatchCheckRequest) (*BatchCheckResponse, error) {
	env := req
	env.Items = nil
	out := &BatchCheckResponse{Results: []*CheckResponse{}, Errors: []ItemError{}}
	err := itemsBatch(ctx, c, opCheckBatch, len(req.Items), func(i int) any { return req.Items[i] },
		func(items []json.RawMessage) any {
			return struct {
				Items []json.RawMessage `json:"items"`
				BatchCheckRequest
			}{items, env}
		}, &out.Results, &out.Errors)
	return out, err
}

// InsertDocument stores a document (Mode ModeInsertIfUnique: only when it
// duplicates nothing; then the answer's DuplicateOf names the original).
func (c *Client) InsertDocument(ctx context.Context, req InsertRequest) (*InsertResponse, error) {
	return callFor[InsertResponse](ctx, c, opInsertDocument, c.url(opInsertDocument, nil), req)
}

// InsertDocuments stores many documents, in calls of at most the batch
// limit and body size; the answer has a result per item, in order, and
// the failed items' problems. Within one call the server compares each
// document with the call's earlier ones; across calls, later calls see
// what earlier ones stored. When a call fails, the answer holds the
// results of the calls before it (those documents are stored) and the
// error names the items of the failed call.
func (c *Client) InsertDocuments(ctx context.Context, req BatchInsertRequest) (*BatchInsertResponse, error) {
	env := req
	env.Items = nil
	out := &BatchInsertResponse{Results: []*InsertResponse{}, Errors: []ItemError{}}
	err := itemsBatch(ctx, c, opInsertDocuments, len(req.Items), func(i int) any { return req.Items[i] },
		func(items []json.RawMessage) any {
			return struct {
				Items []json.RawMessage `json:"items"`
				BatchInsertRequest
			}{items, env}
		}, &out.Results, &out.Errors)
	return out, err
}

// callFor makes the call r to u with the body in (nil for none) and
// returns its answer, decoded.
func callFor[T any](ctx context.Context, c *Client, r route, u string, in any) (*T, error) {
	var out T
	if _, err := c.call(ctx, r, u, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// itemsBatch is batch for the calls whose answer is a result per item and
// the failed items' problems: it appends each call's results to results
// and its problems, their indexes made the items', to errs.
func itemsBatch[R any](ctx context.Context, c *Client, r route, n int, item func(int) any, envelope func([]json.RawMessage) any, results *[]*R, errs *[]ItemError) error {
	return c.batch(ctx, r, n, item, envelope, func(lo int, body []byte) error {
		var part struct {
			Results []*R        `json:"results"`
			Errors  []ItemError `json:"errors"`
		}
		if err := json.Unmarshal(body, &part); err != nil {
			return err
		}
		*results = append(*results, part.Results...)
		for _, e := range part.Errors {
			e.Index += lo
			*errs = append(*errs, e)
		}
		return nil
	})
}

// batch sends n items in chunks: item(i) is the i-th item, envelope wraps a
// chunk's encoded items into the request body, merge takes the answer of
// the chunk starting at item lo. Zero items make no call.
func (c *Client) batch(ctx context.Context, r route, n int, item func(int) any, envelope func([]json.RawMessage) any, merge func(lo int, body []byte) error) error {
	raw := make([]json.RawMessage, n)
	sizes := make([]int, n)
	for i := range raw {
		b, err := json.Marshal(item(i))
		if err != nil {
			return fmt.Errorf("client: %s: encoding item %d: %w", r.op, i, err)
		}
		raw[i], sizes[i] = b, len(b)+1
	}
	empty, err := json.Marshal(envelope([]json.RawMessage{}))
	if err != nil {
		return fmt.Errorf("client: %s: encoding the request: %w", r.op, err)
	}
	u := c.url(r, nil)
	for _, ch := range chunks(sizes, c.maxBatch, c.maxBodyBytes-len(empty)) {
		body, err := json.Marshal(envelope(raw[ch.lo:ch.hi]))
		if err != nil {
			return fmt.Errorf("client: %s: encoding the request: %w", r.op, err)
		}
		rep, err := c.send(ctx, r, u, body)
		if err != nil {
			return chunkError(r, ch, n, err)
		}
		if err := merge(ch.lo, rep.body); err != nil {
			return fmt.Errorf("client: %s: decoding the answer for items %d..%d: %w", r.op, ch.lo, ch.hi-1, err)
		}
	}
	return nil
}

// chunkError names the items of a failed chunk when there are several.
func chunkError(r route, ch span, n int, err error) error {
	if ch.lo == 0 && ch.hi == n {
		return err
	}
	return fmt.Errorf("client: %s: items %d..%d of %d: %w", r.op, ch.lo, ch.hi-1, n, err)
}

// span is the items [lo, hi) of one call.
type span struct{ lo, hi int }

// chunks cuts units of the given sizes into spans of at most maxN units
// and at most maxBytes bytes (a unit larger than maxBytes goes alone).
func chunks(sizes []int, maxN, maxBytes int) []span {
	if len(sizes) == 0 {
		return nil
	}
	var out []span
	lo, bytes := 0, 0
	for i, s := range sizes {
		if i > lo && (i-lo >= maxN || bytes+s > maxBytes) {
			out = append(out, span{lo, i})
			lo, bytes = i, 0
		}
		bytes += s
	}
	return append(out, span{lo, len(sizes)})
}

// GetDocument returns the stored document with the id (404: IsNotFound).
func (c *Client) GetDocument(ctx context.Context, id string) (*Document, error) {
	return callFor[Document](ctx, c, opGetDocument, c.url(opGetDocument, nil, id), nil)
}

// DeleteDocument deletes the document with the id (404: IsNotFound).
func (c *Client) DeleteDocument(ctx context.Context, id string) error {
	_, err := c.call(ctx, opDeleteDocument, c.url(opDeleteDocument, nil, id), nil, nil)
	return err
}

// Fingerprint fingerprints a text without touching the index, with the
// features that weigh most.
func (c *Client) Fingerprint(ctx context.Context, req FingerprintRequest) (*FingerprintResponse, error) {
	return callFor[FingerprintResponse](ctx, c, opFingerprint, c.url(opFingerprint, nil), req)
}

// Stats returns the index's counts, layout and fullest rows.
func (c *Client) Stats(ctx context.Context, opt StatsOptions) (*Stats, error) {
	var q url.Values
	if opt.Rows != nil {
		q = url.Values{"rows": {strconv.Itoa(*opt.Rows)}}
	}
	return callFor[Stats](ctx, c, opStats, c.url(opStats, q), nil)
}

// Health asks whether the server is alive (/healthz).
func (c *Client) Health(ctx context.Context) (*Status, error) {
	return callFor[Status](ctx, c, opHealthz, c.url(opHealthz, nil), nil)
}

// Ready asks whether the server can serve: dictionaries loaded and the
// store reachable (/readyz; a 503 is retried as any other).
func (c *Client) Ready(ctx context.Context) (*Status, error) {
	return callFor[Status](ctx, c, opReadyz, c.url(opReadyz, nil), nil)
}

// Metrics returns the server's Prometheus text exposition.
func (c *Client) Metrics(ctx context.Context) ([]byte, error) {
	rep, err := c.call(ctx, opMetrics, c.url(opMetrics, nil), nil, nil)
	return rep.body, err
}

// OpenAPI returns the server's OpenAPI document.
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	rep, err := c.call(ctx, opOpenAPI, c.url(opOpenAPI, nil), nil, nil)
	return rep.body, err
}
