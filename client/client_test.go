package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/client"
)

const article = "The city council approved twelve electric buses for the northern routes on Monday, " +
	"officials said after a long vote in the old town hall. The buses will enter service next spring, " +
	"replacing diesel vehicles that are more than fifteen years old, and the council expects lower " +
	"running costs and cleaner air along the busiest corridors of the city."

// uniqueText is a text of its own for each n, far from every other.
func uniqueText(n int) string {
	words := []string{"harbour", "violin", "glacier", "tractor", "orchid", "satellite", "bakery", "canyon",
		"lantern", "meadow", "compass", "thunder", "pepper", "marble", "falcon", "ribbon"}
	var b strings.Builder
	fmt.Fprintf(&b, "Report %d. ", n)
	for i := 0; i < 40; i++ {
		b.WriteString(words[(n*7+i*i*3+i*(n%5+1))%len(words)])
		b.WriteString(" ")
	}
	return b.String()
}

func asError(t *testing.T, err error) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *client.Error", err, err)
	}
	return e
}

func TestHealthReadyStatsMetrics(t *testing.T) {
	c, _ := newClient(t, "")
	h, err := c.Health(ctx(t))
	if err != nil || h.Status != "ok" {
		t.Fatalf("health: %+v %v", h, err)
	}
	r, err := c.Ready(ctx(t))
	if err != nil || r.Status != "ready" || r.Store != "pebble" {
		t.Fatalf("ready: %+v %v", r, err)
	}
	st, err := c.Stats(ctx(t), client.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Layout.K < 1 || st.Layout.Tables < 1 || st.Recipe < 1 || st.FullestRows == nil {
		t.Fatalf("stats: %+v", st)
	}
	st0, err := c.Stats(ctx(t), client.StatsOptions{Rows: client.Ptr(0)})
	if err != nil || len(st0.FullestRows) != 0 || st0.IndexRows != 0 {
		t.Fatalf("stats rows=0: %+v %v", st0, err)
	}
	_, err = c.Stats(ctx(t), client.StatsOptions{Rows: client.Ptr(101)})
	if e := asError(t, err); e.Status != 400 || e.Kind != "invalid-field" {
		t.Fatalf("stats rows=101: %v", err)
	}
	m, err := c.Metrics(ctx(t))
	if err != nil || !strings.Contains(string(m), "# TYPE") {
		t.Fatalf("metrics: %.200s %v", m, err)
	}
}

func TestFingerprint(t *testing.T) {
	c, _ := newClient(t, "")
	fp, err := c.Fingerprint(ctx(t), client.FingerprintRequest{Title: "Buses", Text: article})
	if err != nil {
		t.Fatal(err)
	}
	if len(fp.Fingerprint) != 16 || fp.Features == 0 || fp.Recipe < 1 || len(fp.TopFeatures) == 0 || fp.TitleFingerprint == "" {
		t.Fatalf("fingerprint: %+v", fp)
	}
	again, err := c.Fingerprint(ctx(t), client.FingerprintRequest{Title: "Buses", Text: article})
	if err != nil || again.Fingerprint != fp.Fingerprint {
		t.Fatalf("fingerprint not reproducible: %+v %v", again, err)
	}
	_, err = c.Fingerprint(ctx(t), client.FingerprintRequest{Text: ""})
	if e := asError(t, err); e.Status != 400 || e.Kind != "invalid-field" {
		t.Fatalf("empty text: %v", err)
	} else if d, ok := e.Field("text"); !ok || d == "" {
		t.Fatalf("empty text: fields %+v", e.Fields)
	}
}

func TestDocumentsAndCheck(t *testing.T) {
	c, _ := newClient(t, "")
	when := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	// Ids may hold '/', '?', '%', spaces and non-ASCII: the path escapes them.
	id := "news/2026/11/23/buses? 100% — 公交"
	ins, err := c.InsertDocument(ctx(t), client.InsertRequest{
		DocumentInput: client.DocumentInput{ID: id, Content: client.Content{Title: "Electric buses", Text: article}, Time: &when, Attrs: map[string]string{"source": "wire"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !ins.Stored || ins.ID != id || len(ins.Fingerprint) != 16 {
		t.Fatalf("insert: %+v", ins)
	}
	doc, err := c.GetDocument(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if doc.ID != id || doc.Fingerprint != ins.Fingerprint || !doc.Time.Equal(when) || doc.Attrs["source"] != "wire" {
		t.Fatalf("get: %+v", doc)
	}

	// A restyled copy is a duplicate: check finds it, insert-if-unique
	// does not store it and names the original.
	copyText := strings.ReplaceAll(article, ",", " -")
	chk, err := c.Check(ctx(t), client.CheckRequest{Content: client.Content{Title: "Electric buses", Text: copyText}})
	if err != nil {
		t.Fatal(err)
	}
	if !chk.Duplicate || len(chk.Duplicates) == 0 || chk.Duplicates[0].ID != id || chk.Policy != client.PolicyDefault {
		t.Fatalf("check: %+v", chk)
	}
	if h := chk.Duplicates[0]; h.Relation == "" || h.Resemblance <= 0 || h.Time.IsZero() {
		t.Fatalf("check hit: %+v", h)
	}
	dup, err := c.InsertDocument(ctx(t), client.InsertRequest{
		DocumentInput: client.DocumentInput{ID: "copy-1", Content: client.Content{Title: "Electric buses", Text: copyText}},
		Mode:          client.ModeInsertIfUnique,
	})
	if err != nil {
		t.Fatal(err)
	}
	if dup.Stored || dup.DuplicateOf != id || dup.Original == nil {
		t.Fatalf("insert-if-unique: %+v", dup)
	}

	// Explain: the stored side alone, then the pair aligned.
	ex, err := c.Explain(ctx(t), client.ExplainRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if ex.ID != id || ex.Stored.Fingerprint != ins.Fingerprint || !ex.Stored.TextKept || ex.Query != nil {
		t.Fatalf("explain: %+v", ex)
	}
	ex, err = c.Explain(ctx(t), client.ExplainRequest{ID: id, Query: &client.ExplainQuery{Title: "Electric buses", Text: copyText}, Policy: client.PolicyCopy})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Query == nil || !ex.Duplicate || ex.Relation == "" || ex.Policy != client.PolicyCopy || !ex.Aligned || ex.Alignment == nil || len(ex.Query.Segments) == 0 {
		t.Fatalf("explain with a query: %+v", ex)
	}
	if _, err := c.Explain(ctx(t), client.ExplainRequest{ID: "no/such/doc"}); !client.IsNotFound(err) {
		t.Fatalf("explain of a missing document: %v", err)
	}

	// By bare fingerprint, with search parameters.
	byFP, err := c.Check(ctx(t), client.CheckRequest{Content: client.Content{Fingerprint: ins.Fingerprint},
		SearchParams: client.SearchParams{K: client.Ptr(0), Limit: client.Ptr(5)}, Policy: client.PolicyNearIdentical})
	if err != nil {
		t.Fatal(err)
	}
	if byFP.K != 0 || !byFP.Duplicate || byFP.Duplicates[0].ID != id || byFP.Duplicates[0].Distance != 0 {
		t.Fatalf("check by fingerprint: %+v", byFP)
	}
	future := when.Add(24 * time.Hour)
	none, err := c.Check(ctx(t), client.CheckRequest{Content: client.Content{Fingerprint: ins.Fingerprint}, SearchParams: client.SearchParams{Since: &future}})
	if err != nil || none.Duplicate {
		t.Fatalf("check since a later time: %+v %v", none, err)
	}

	if err := c.DeleteDocument(ctx(t), id); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetDocument(ctx(t), id)
	if !client.IsNotFound(err) || !client.IsKind(err, "not-found") {
		t.Fatalf("get after delete: %v", err)
	}
	if err := c.DeleteDocument(ctx(t), id); !client.IsNotFound(err) {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestErrors(t *testing.T) {
	c, _ := newClient(t, "")
	_, err := c.Check(ctx(t), client.CheckRequest{Content: client.Content{Fingerprint: "not-a-fingerprint"}})
	e := asError(t, err)
	if e.Status != http.StatusBadRequest || e.Kind != "bad-fingerprint" || e.Title == "" || e.Detail == "" || e.Instance != "/v1/check" {
		t.Fatalf("bad fingerprint: %+v", e)
	}
	if !client.IsKind(fmt.Errorf("wrapped: %w", err), "bad-fingerprint") {
		t.Fatal("IsKind does not see through wrapping")
	}

	_, err = c.Check(ctx(t), client.CheckRequest{Content: client.Content{Fingerprint: "0x1"}, SearchParams: client.SearchParams{K: client.Ptr(60)}})
	if e := asError(t, err); e.Kind != "k-out-of-range" {
		t.Fatalf("k=60: %+v", e)
	} else if _, ok := e.Field("k"); !ok {
		t.Fatalf("k=60: no field k in %+v", e.Fields)
	}

	_, err = c.Check(ctx(t), client.CheckRequest{Content: client.Content{Text: "x", Fingerprint: "0x1"}})
	if e := asError(t, err); e.Status != 400 || e.Kind != "invalid-field" {
		t.Fatalf("text and fingerprint: %+v", e)
	}

	// 413: a body over the server's 8 MiB limit.
	_, err = c.Check(ctx(t), client.CheckRequest{Content: client.Content{Text: strings.Repeat("word ", 2<<20)}})
	if e := asError(t, err); e.Status != http.StatusRequestEntityTooLarge || e.Kind != "body-too-large" {
		t.Fatalf("huge body: %+v", e)
	}

	// 401: a write without the API key.
	anon, err := client.New(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = anon.InsertDocument(ctx(t), client.InsertRequest{DocumentInput: client.DocumentInput{ID: "anon", Content: client.Content{Fingerprint: "0x2"}}})
	if e := asError(t, err); e.Status != http.StatusUnauthorized || e.Kind != "unauthorized" {
		t.Fatalf("no key: %+v", e)
	}
	// Reads need no key.
	if _, err := anon.Health(ctx(t)); err != nil {
		t.Fatal(err)
	}

	if _, err := client.New("ftp://x"); err == nil {
		t.Fatal("New accepted an ftp URL")
	}
}

func TestCheckBatchItemErrors(t *testing.T) {
	c, tr := newClient(t, "")
	fps := []string{"0x10", "zzz", "0x11"}
	items := make([]client.CheckItem, len(fps))
	for i, f := range fps {
		items[i] = client.CheckItem{Content: client.Content{Fingerprint: f}}
	}
	res, err := c.CheckBatch(ctx(t), client.BatchCheckRequest{Items: items, SearchParams: client.SearchParams{K: client.Ptr(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 3 || res.Results[0] == nil || res.Results[1] != nil || res.Results[2] == nil {
		t.Fatalf("results: %+v", res.Results)
	}
	if len(res.Errors) != 1 || res.Errors[0].Index != 1 || res.Errors[0].Problem.Kind != "bad-fingerprint" {
		t.Fatalf("errors: %+v", res.Errors)
	}
	if res.Results[0].K != 1 {
		t.Fatalf("k not applied: %+v", res.Results[0])
	}
	// No items: no call, an empty answer.
	before := tr.count("checkBatch")
	empty, err := c.CheckBatch(ctx(t), client.BatchCheckRequest{})
	if err != nil || len(empty.Results) != 0 || tr.count("checkBatch") != before {
		t.Fatalf("empty batch: %+v %v", empty, err)
	}
}

// TestChunking: 2,500 items in one call are three requests (1,000, 1,000,
// 500), and the answer is as one call of 2,500 would be: results in order,
// item errors at their index in the whole list.
func TestChunking(t *testing.T) {
	c, tr := newClient(t, "")
	const n = 2500
	docs := make([]client.DocumentInput, n)
	for i := range docs {
		docs[i] = client.DocumentInput{ID: fmt.Sprintf("chunk/%d", i), Content: client.Content{Fingerprint: fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15)}}
	}
	docs[2100].Fingerprint = "bad"
	res, err := c.InsertDocuments(ctx(t), client.BatchInsertRequest{Items: docs, Mode: client.ModeInsert})
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.count("insertDocuments"); got != 3 {
		t.Fatalf("%d insert requests for %d documents, want 3", got, n)
	}
	if len(res.Results) != n || len(res.Errors) != 1 || res.Errors[0].Index != 2100 || res.Errors[0].Problem.Kind != "bad-fingerprint" {
		t.Fatalf("%d results, errors %+v", len(res.Results), res.Errors)
	}
	for i, r := range res.Results {
		if i == 2100 {
			if r != nil {
				t.Fatalf("result for the bad item: %+v", r)
			}
			continue
		}
		if r == nil || r.ID != docs[i].ID || !r.Stored {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	checks := make([]client.CheckItem, n)
	for i := range checks {
		checks[i] = client.CheckItem{Content: docs[i].Content}
	}
	cr, err := c.CheckBatch(ctx(t), client.BatchCheckRequest{Items: checks, SearchParams: client.SearchParams{K: client.Ptr(0)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.count("checkBatch"); got != 3 {
		t.Fatalf("%d check requests for %d items, want 3", got, n)
	}
	if len(cr.Results) != n || len(cr.Errors) != 1 || cr.Errors[0].Index != 2100 {
		t.Fatalf("%d check results, errors %+v", len(cr.Results), cr.Errors)
	}
	for _, i := range []int{0, 999, 1000, 1999, 2000, 2499} {
		if r := cr.Results[i]; r == nil || !r.Duplicate || r.Duplicates[0].ID != docs[i].ID {
			t.Fatalf("check result %d: %+v", i, r)
		}
	}

	// The body limit cuts calls too: 36 bytes an item, 4 KiB a call.
	small, tr2 := newClient(t, "", client.WithMaxBodyBytes(4096))
	sr, err := small.CheckBatch(ctx(t), client.BatchCheckRequest{Items: checks[:500]})
	if err != nil || len(sr.Results) != 500 {
		t.Fatal(err)
	}
	if got := tr2.count("checkBatch"); got < 4 || got > 6 || tr2.maxBody > 4096 {
		t.Fatalf("%d calls for 500 items at 4 KiB a body, the largest %d bytes", got, tr2.maxBody)
	}
}

// TestBatchLimitIsTheServers: the server refuses a batch one over
// DefaultMaxBatch, so the client's chunk size is its limit.
func TestBatchLimitIsTheServers(t *testing.T) {
	c, _ := newClient(t, "", client.WithMaxBatch(client.DefaultMaxBatch+1))
	items := make([]client.CheckItem, client.DefaultMaxBatch+1)
	for i := range items {
		items[i] = client.CheckItem{Content: client.Content{Fingerprint: "0x1"}}
	}
	_, err := c.CheckBatch(ctx(t), client.BatchCheckRequest{Items: items})
	e := asError(t, err)
	if _, ok := e.Field("items"); e.Status != 400 || e.Kind != "invalid-field" || !ok {
		t.Fatalf("%d items: %+v", len(items), e)
	}
	ids := make([]string, client.DefaultMaxBatch+1)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	_, err = c.SeenCheck(ctx(t), "limit-user", ids)
	if e := asError(t, err); e.Status != 400 || e.Kind != "too-many-items" {
		t.Fatalf("%d seen ids: %+v", len(ids), e)
	}
}

// TestPartialAnswer: when a later call of a batch fails, the answer holds
// the earlier calls' results and the error names the failed items.
func TestPartialAnswer(t *testing.T) {
	c, tr := newClient(t, "", client.WithMaxBatch(2))
	items := []client.CheckItem{{Content: client.Content{Fingerprint: "0x21"}}, {Content: client.Content{Fingerprint: "0x22"}},
		{Content: client.Content{Text: strings.Repeat("word ", 2<<20)}}, {Content: client.Content{Fingerprint: "0x23"}}}
	res, err := c.CheckBatch(ctx(t), client.BatchCheckRequest{Items: items})
	e := asError(t, err)
	if e.Status != http.StatusRequestEntityTooLarge || !strings.Contains(err.Error(), "items 2..2 of 4") {
		t.Fatalf("error %v", err)
	}
	if len(res.Results) != 2 || res.Results[0] == nil || res.Results[1] == nil || tr.count("checkBatch") != 2 {
		t.Fatalf("partial answer %+v after %d calls", res.Results, tr.count("checkBatch"))
	}
}

// TestCheckSource: a check's source reaches the server, on Check, on each
// CheckBatch item and on an explanation's query: one longer than an
// attribute value may be is refused naming the field (a batch item alone).
func TestCheckSource(t *testing.T) {
	c, _ := newClient(t, "")
	long := strings.Repeat("s", 4097)
	_, err := c.Check(ctx(t), client.CheckRequest{Content: client.Content{Fingerprint: "0x31"}, Source: long})
	if e := asError(t, err); e.Status != http.StatusBadRequest || e.Kind != "invalid-field" {
		t.Fatalf("check with a %d-byte source: %+v", len(long), e)
	} else if _, ok := e.Field("source"); !ok {
		t.Fatalf("check with a %d-byte source: no field error for source: %+v", len(long), e)
	}
	if _, err := c.Check(ctx(t), client.CheckRequest{Content: client.Content{Fingerprint: "0x31"}, Source: "news.example"}); err != nil {
		t.Fatalf("check with a source: %v", err)
	}
	res, err := c.CheckBatch(ctx(t), client.BatchCheckRequest{Items: []client.CheckItem{
		{Content: client.Content{Fingerprint: "0x32"}, Source: "news.example"},
		{Content: client.Content{Fingerprint: "0x33"}, Source: long},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 2 || res.Results[0] == nil || res.Results[1] != nil || len(res.Errors) != 1 || res.Errors[0].Index != 1 {
		t.Fatalf("batch with a long source on item 1: results %+v, errors %+v", res.Results, res.Errors)
	}
	_, err = c.Explain(ctx(t), client.ExplainRequest{ID: "no-such-doc", Query: &client.ExplainQuery{Text: "some text", Source: long}})
	if e := asError(t, err); e.Status != http.StatusBadRequest {
		t.Fatalf("explain with a %d-byte source: %+v", len(long), e)
	}
}
