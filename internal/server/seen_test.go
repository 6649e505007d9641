package server

import (
	"context"
	"fmt"
	"github.com/simdex/simdex/detect"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/seen"
)

// newSeenEnv is newEnv with the seen routes served from a seen.Service on
// the same Pebble store (real HTTP on loopback).
func newSeenEnv(t *testing.T, mod func(*Config)) *testEnv {
	t.Helper()
	e := newEnv(t, "", mod)
	e.http.Close()
	e.reg = prometheus.NewRegistry()
	svc, err := seen.Open(context.Background(), e.ix.Store(), seen.Config{Docs: seen.IndexDocs{Index: e.ix}, Registerer: e.reg, Near: nearJudge{detect.New(e.ix, DefaultConfig().judge(sharedFingerprinter(t)))}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(e.cfg, e.ix, sharedFingerprinter(t), nil, e.reg, WithSeen(svc))
	if err != nil {
		t.Fatal(err)
	}
	e.srv, e.http = srv, httptest.NewServer(srv)
	return e
}

// TestSeenNearDuplicates: a user who has seen an article does not get a
// lightly edited copy of it (near=true), and does get unrelated articles;
// without near=true the copy is kept. Candidates are given by document id
// and by fingerprint.
func TestSeenNearDuplicates(t *testing.T) {
	e := newSeenEnv(t, nil)
	article := readText(t, "en_article.txt")
	unrelatedEN, err := os.ReadFile("../../fingerprint/testdata/texts/en_rail.txt")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{
		"story":      article,
		"story-copy": lightEdit(article),
		"other-zh":   readText(t, "zh_article.txt"),
		"other-en":   string(unrelatedEN),
	}
	fps := map[string]string{}
	for id, text := range docs {
		r := e.do("POST", "/v1/documents", map[string]any{"id": id, "text": text})
		if r.status != http.StatusCreated && r.status != http.StatusOK {
			t.Fatalf("insert %s: %d %s", id, r.status, r.body)
		}
		var ins struct{ Fingerprint string }
		r.json(t, &ins)
		fps[id] = ins.Fingerprint
	}
	r := e.do("POST", "/v1/users/reader-1/seen", map[string]any{"items": []map[string]any{{"id": "item-story", "doc_id": "story"}}})
	if r.status != http.StatusOK {
		t.Fatalf("mark: %d %s", r.status, r.body)
	}
	var mr seenMarkResponse
	r.json(t, &mr)
	if mr.Marked != 1 || len(mr.UnknownDocIDs) != 0 {
		t.Fatalf("mark: %+v", mr)
	}
	byDoc := []map[string]any{
		{"id": "item-copy", "doc_id": "story-copy"},
		{"id": "item-zh", "doc_id": "other-zh"},
		{"id": "item-story", "doc_id": "story"},
		{"id": "item-en", "doc_id": "other-en"},
	}
	byFP := []map[string]any{
		{"id": "item-copy", "fingerprint": fps["story-copy"]},
		{"id": "item-zh", "fingerprint": fps["other-zh"]},
		{"id": "item-story"},
		{"id": "item-en", "fingerprint": fps["other-en"]},
	}
	for name, cands := range map[string][]map[string]any{"doc ids": byDoc, "fingerprints": byFP} {
		t.Run(name, func(t *testing.T) {
			r := e.do("POST", "/v1/users/reader-1/seen/filter", map[string]any{"candidates": cands, "near": true, "k": 3})
			if r.status != http.StatusOK {
				t.Fatalf("filter: %d %s", r.status, r.body)
			}
			var fr seenFilterResponse
			r.json(t, &fr)
			if fmt.Sprint(fr.Kept) != "[item-zh item-en]" {
				t.Fatalf("kept %v, want the two unrelated articles; dropped %+v", fr.Kept, fr.Dropped)
			}
			if len(fr.Dropped) != 2 || fr.Dropped[0].ID != "item-copy" || fr.Dropped[0].Reason != "near" || fr.Dropped[1].ID != "item-story" || fr.Dropped[1].Reason != "seen" {
				t.Fatalf("dropped %+v", fr.Dropped)
			}
			t.Logf("the edited copy is %d bits from the seen article", *fr.Dropped[0].Distance)
			// Without near, only the seen id goes.
			r = e.do("POST", "/v1/users/reader-1/seen/filter", map[string]any{"candidates": cands})
			r.json(t, &fr)
			if fmt.Sprint(fr.Kept) != "[item-copy item-zh item-en]" {
				t.Fatalf("near=false kept %v", fr.Kept)
			}
		})
	}
	// Another user has seen nothing: everything is kept.
	r = e.do("POST", "/v1/users/reader-2/seen/filter", map[string]any{"candidates": byDoc, "near": true})
	var fr seenFilterResponse
	r.json(t, &fr)
	if r.status != http.StatusOK || len(fr.Kept) != 4 {
		t.Fatalf("unknown user: %d %+v", r.status, fr)
	}
}

// TestSeenRoutes: mark, check, delete, forget and the batch forms over
// real HTTP, checked against openapi.json by e.do; metrics count them.
func TestSeenRoutes(t *testing.T) {
	e := newSeenEnv(t, nil)
	check := func(user string, ids ...string) string {
		t.Helper()
		r := e.do("POST", "/v1/users/"+user+"/seen/check", map[string]any{"ids": ids})
		if r.status != http.StatusOK {
			t.Fatalf("check: %d %s", r.status, r.body)
		}
		var cr seenCheckResponse
		r.json(t, &cr)
		return fmt.Sprint(cr.Seen)
	}
	r := e.do("POST", "/v1/users/u1/seen", map[string]any{"items": []map[string]any{{"id": "a"}, {"id": "b", "fingerprint": "00000000000000ff"}, {"id": "x/y"}, {"id": "c", "doc_id": "no-such-doc"}}})
	if r.status != http.StatusOK {
		t.Fatalf("mark: %d %s", r.status, r.body)
	}
	var mr seenMarkResponse
	r.json(t, &mr)
	if mr.Marked != 4 || fmt.Sprint(mr.UnknownDocIDs) != "[no-such-doc]" {
		t.Fatalf("mark: %+v", mr)
	}
	if got := check("u1", "a", "b", "z", "x/y", "c"); got != "[true true false true true]" {
		t.Fatalf("check: %s", got)
	}
	if r := e.do("DELETE", "/v1/users/u1/seen/items/a", nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	// An item id with '/' (the route takes the rest of the path); sent
	// raw, since the OpenAPI router matches one segment.
	req, _ := http.NewRequest("DELETE", e.http.URL+"/v1/users/u1/seen/items/x/y", nil)
	resp, err := e.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete x/y: %d", resp.StatusCode)
	}
	if got := check("u1", "a", "b", "x/y"); got != "[false true false]" {
		t.Fatalf("after deletes: %s", got)
	}
	// Batch forms.
	r = e.do("POST", "/v1/seen/mark", map[string]any{"users": []map[string]any{
		{"user": "u2", "items": []map[string]any{{"id": "p"}}},
		{"user": "u3", "items": []map[string]any{{"id": "q", "fingerprint": "ffffffffffffff00"}}},
	}})
	if r.status != http.StatusOK {
		t.Fatalf("mark batch: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/v1/seen/check", map[string]any{"users": []map[string]any{{"user": "u2", "ids": []string{"p", "q"}}, {"user": "u3", "ids": []string{"p", "q"}}}})
	var cb seenBatchResponse[seenCheckResponse]
	r.json(t, &cb)
	if r.status != http.StatusOK || fmt.Sprint(cb.Results) != "[{u2 [true false]} {u3 [false true]}]" {
		t.Fatalf("check batch: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/v1/seen/filter", map[string]any{"users": []map[string]any{
		{"user": "u1", "candidates": []map[string]any{{"id": "b"}, {"id": "n", "fingerprint": "00000000000000fe"}, {"id": "m"}}, "near": true, "k": 1},
		{"user": "u3", "candidates": []map[string]any{{"id": "q"}, {"id": "n", "fingerprint": "00000000000000fe"}}, "near": true},
	}})
	var fb seenBatchResponse[seenFilterResponse]
	r.json(t, &fb)
	if r.status != http.StatusOK || fmt.Sprint(fb.Results[0].Kept) != "[m]" || fmt.Sprint(fb.Results[1].Kept) != "[n]" {
		t.Fatalf("filter batch: %d %s", r.status, r.body)
	}
	// The plain-ids form of filter.
	r = e.do("POST", "/v1/users/u1/seen/filter", map[string]any{"ids": []string{"m", "b", "a"}})
	var fi seenFilterResponse
	r.json(t, &fi)
	if r.status != http.StatusOK || fmt.Sprint(fi.Kept) != "[m a]" || len(fi.Dropped) != 1 || fi.Dropped[0].Index != 1 {
		t.Fatalf("filter by ids: %d %s", r.status, r.body)
	}
	// Forget.
	if r := e.do("DELETE", "/v1/users/u1/seen", nil); r.status != http.StatusNoContent {
		t.Fatalf("forget: %d %s", r.status, r.body)
	}
	if got := check("u1", "a", "b", "c"); got != "[false false false]" {
		t.Fatalf("after forget: %s", got)
	}
	// Metrics.
	r = e.do("GET", "/metrics", nil)
	for _, m := range []string{"simdex_seen_marks_total 6", `simdex_seen_dropped_total{reason="near"} 1`, `simdex_seen_dropped_total{reason="seen"} 3`, `route="/v1/seen/filter"`} {
		if !strings.Contains(string(r.body), m) {
			t.Errorf("metrics lack %q", m)
		}
	}
}

// TestSeenBadInput: problem+json 400s for bad ids, too many candidates,
// bad k and bad JSON; 401 on writes without the key; 501 on a server
// without seen sets.
func TestSeenBadInput(t *testing.T) {
	const key = "seen-test-key-0123456789"
	e := newSeenEnv(t, func(c *Config) { c.APIKeys = []string{key} })
	e.apiKey = key
	many := make([]string, 1001)
	cands := make([]map[string]any, 1001)
	for i := range many {
		many[i] = fmt.Sprint("id", i)
		cands[i] = map[string]any{"id": many[i]}
	}
	long := strings.Repeat("u", 257)
	tests := []problemCase{
		{"1001 ids", "POST", "/v1/users/u/seen/check", map[string]any{"ids": many}, 400, "too-many-items"},
		{"1001 candidates", "POST", "/v1/users/u/seen/filter", map[string]any{"candidates": cands}, 400, "too-many-items"},
		{"1001 marks", "POST", "/v1/users/u/seen", map[string]any{"items": cands}, 400, "too-many-items"},
		{"empty id", "POST", "/v1/users/u/seen/check", map[string]any{"ids": []string{"a", ""}}, 400, "bad-id"},
		{"long id", "POST", "/v1/users/u/seen/filter", map[string]any{"candidates": []map[string]any{{"id": long}}}, 400, "bad-id"},
		{"empty mark id", "POST", "/v1/users/u/seen", map[string]any{"items": []map[string]any{{"id": ""}}}, 400, "bad-id"},
		{"long user", "POST", "/v1/users/" + long + "/seen/check", map[string]any{"ids": []string{"a"}}, 400, "bad-user"},
		{"long user forget", "DELETE", "/v1/users/" + long + "/seen", nil, 400, "bad-user"},
		{"empty batch user", "POST", "/v1/seen/check", map[string]any{"users": []map[string]any{{"user": "", "ids": []string{"a"}}}}, 400, "bad-user"},
		{"no users", "POST", "/v1/seen/filter", map[string]any{"users": []map[string]any{}}, 400, "bad-user"},
		{"k too big", "POST", "/v1/users/u/seen/filter", map[string]any{"candidates": []map[string]any{{"id": "a"}}, "near": true, "k": 9}, 400, "k-out-of-range"},
		{"bad fingerprint", "POST", "/v1/users/u/seen/filter", `{"candidates":[{"id":"a","fingerprint":"zz"}]}`, 400, "bad-fingerprint"},
		{"candidates and ids", "POST", "/v1/users/u/seen/filter", map[string]any{"candidates": []map[string]any{{"id": "a"}}, "ids": []string{"b"}}, 400, "invalid-field"},
		{"1001 plain ids", "POST", "/v1/users/u/seen/filter", map[string]any{"ids": many}, 400, "too-many-items"},
		{"unknown field", "POST", "/v1/users/u/seen/check", `{"ids":["a"],"idz":1}`, 400, "unknown-field"},
		{"malformed", "POST", "/v1/users/u/seen/check", `{"ids":[`, 400, "malformed-json"},
		{"ids not strings", "POST", "/v1/users/u/seen/check", `{"ids":[1]}`, 400, "invalid-field"},
	}
	checkProblems(t, e, tests)
	// Writes need the key; reads do not.
	e.apiKey = ""
	for _, w := range [][2]string{{"POST", "/v1/users/u/seen"}, {"POST", "/v1/seen/mark"}, {"DELETE", "/v1/users/u/seen"}, {"DELETE", "/v1/users/u/seen/items/a"}} {
		var body any
		if w[0] == "POST" {
			body = map[string]any{"items": []map[string]any{{"id": "a"}}}
		}
		if r := e.do(w[0], w[1], body); r.status != http.StatusUnauthorized {
			t.Errorf("%s %s without a key: %d", w[0], w[1], r.status)
		}
	}
	if r := e.do("POST", "/v1/users/u/seen/check", map[string]any{"ids": []string{"a"}}); r.status != http.StatusOK {
		t.Errorf("check without a key: %d %s", r.status, r.body)
	}
	// A server built without WithSeen answers 501.
	plain := newEnv(t, "", nil)
	r := plain.do("POST", "/v1/users/u/seen/check", map[string]any{"ids": []string{"a"}})
	if r.status != http.StatusNotImplemented || r.problem(t).Kind != "seen-disabled" {
		t.Fatalf("without seen: %d %s", r.status, r.body)
	}
}
