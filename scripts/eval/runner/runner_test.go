package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/scripts/eval/metrics"
	"github.com/simdex/simdex/scripts/eval/pairs"
)

// fakeService answers from a fixed table of fingerprints: text -> fp.
// Checks return every stored document within k of the query's
// fingerprint, as an exact index does.
type fakeService struct {
	fp       map[string]string // body -> fingerprint ("" = low information)
	stored   map[string]string // id -> fingerprint
	inserts  int
	checks   int
	k        int
	failWith error
}

func (f *fakeService) InsertBatch(ctx context.Context, docs []Doc) ([]Inserted, error) {
	if f.failWith != nil {
		return nil, f.failWith
	}
	f.inserts++
	out := make([]Inserted, len(docs))
	for i, d := range docs {
		fp := f.fp[d.Text]
		if fp == "" {
			out[i].Problem = "low-information"
			continue
		}
		if _, dup := f.stored[d.ID]; dup {
			return nil, fmt.Errorf("id %s stored twice", d.ID)
		}
		f.stored[d.ID] = fp
		out[i].Fingerprint = fp
	}
	return out, nil
}

func (f *fakeService) CheckBatch(ctx context.Context, qs []Query, k, limit int) ([]Checked, error) {
	f.checks++
	if k >= 0 {
		return nil, errors.New("runner must leave k to the service")
	}
	out := make([]Checked, len(qs))
	for i, q := range qs {
		fp := f.fp[q.Text]
		if fp == "" {
			out[i].Problem = "low-information"
			continue
		}
		out[i] = Checked{Fingerprint: fp, K: f.k}
		for id, s := range f.stored {
			if d := hamming(fp, s); d <= f.k {
				out[i].Duplicates = append(out[i].Duplicates, Hit{ID: id, Distance: d, Exact: d == 0})
				out[i].Duplicate = true
			}
		}
	}
	return out, nil
}

func hamming(a, b string) int {
	var x, y uint64
	fmt.Sscanf(a, "%x", &x)
	fmt.Sscanf(b, "%x", &y)
	n := 0
	for v := x ^ y; v != 0; v &= v - 1 {
		n++
	}
	return n
}

func pair(id, kind string, dup bool, origID, orig, query string) pairs.Pair {
	doc, _, _ := strings.Cut(origID, "@")
	return pairs.Pair{ID: id, Kind: kind, Duplicate: dup, Lang: "en", Bucket: "short", Doc: doc,
		Original: pairs.Text{ID: origID, Body: orig}, Query: pairs.Text{ID: id + "~q", Body: query}}
}

func TestEvaluate(t *testing.T) {
	svc := &fakeService{k: 3, stored: map[string]string{}, fp: map[string]string{
		"orig A": "0000000000000000", "copy A": "0000000000000000", "edit A": "0000000000000007", // d=3
		"far A":  "00000000000000ff",                                // d=8
		"orig B": "ffff000000000000", "other B": "ffff000000000003", // d=2: a false positive
		"orig C": "0f0f0f0f0f0f0f0f", "tiny": "", "wrapped A": "000000000000ffff",
	}}
	ps := []pairs.Pair{
		pair("p1", "typos", true, "A", "orig A", "copy A"),
		pair("p2", "typos", true, "A", "orig A", "edit A"),
		pair("p3", "mirror", true, "A", "orig A", "far A"),
		pair("n1", "neg_topic", false, "B", "orig B", "other B"),
		pair("p4", "truncate", true, "C", "orig C", "tiny"),
		pair("p5", "truncate", true, "D", "tiny", "orig C"),
		// A copy of A in a site template: the query is far from it but
		// finds the bare A, another stored copy of the same document.
		pair("p6", "mirror", true, "A@t1", "wrapped A", "copy A"),
	}
	res, err := Evaluate(context.Background(), svc, ps, Config{Batch: 2, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stored != 5 || res.K != 3 || len(res.Outcomes) != len(ps) {
		t.Fatalf("result %+v", res)
	}
	if svc.inserts != 3 || svc.checks != 4 {
		t.Errorf("%d insert and %d check requests, want 3 and 4 (batches of 2)", svc.inserts, svc.checks)
	}
	want := map[string]struct {
		dist, hit, copyHit int
		exact              bool
		failure            string
	}{
		"p1": {0, 0, 0, true, ""},
		"p2": {3, 3, 3, false, ""},
		"p3": {8, -1, -1, false, ""},
		"n1": {2, 2, 2, false, ""},
		"p4": {-1, -1, -1, false, "query: low-information"},
		"p5": {-1, -1, -1, false, "original: low-information"},
		"p6": {16, -1, 0, false, ""},
	}
	for _, o := range res.Outcomes {
		w := want[o.PairID]
		if o.Distance != w.dist || o.PartnerHit != w.hit || o.CopyHit != w.copyHit || o.Exact != w.exact || o.Failure != w.failure {
			t.Errorf("%s: %+v, want %+v", o.PairID, o, w)
		}
	}
	c := metrics.Total(res.Outcomes, metrics.PartnerWithin(res.K))
	if c != (metrics.Counts{TP: 2, FN: 4, FP: 1}) {
		t.Errorf("counts %+v", c)
	}
	if c := metrics.Total(res.Outcomes, metrics.CopyWithin(res.K)); c != (metrics.Counts{TP: 3, FN: 3, FP: 1}) {
		t.Errorf("copy rule counts %+v", c)
	}
}

func TestEvaluateErrors(t *testing.T) {
	ps := []pairs.Pair{pair("p1", "typos", true, "A", "orig A", "copy A")}
	boom := errors.New("boom")
	svc := &fakeService{stored: map[string]string{}, failWith: boom}
	if _, err := Evaluate(context.Background(), svc, ps, DefaultConfig()); !errors.Is(err, boom) {
		t.Errorf("insert failure: %v", err)
	}
	svc = &fakeService{stored: map[string]string{}, fp: map[string]string{"orig A": "zz", "copy A": "00"}}
	if _, err := Evaluate(context.Background(), svc, ps, DefaultConfig()); !errors.Is(err, ErrServer) {
		t.Errorf("bad fingerprint from the service: %v", err)
	}
	if _, err := Evaluate(context.Background(), svc, ps, Config{Batch: 0, Limit: 1}); err == nil {
		t.Error("bad config accepted")
	}
}

func TestClientMerge(t *testing.T) {
	tests := []struct {
		name    string
		resp    string
		wantErr bool
		want    []Checked
	}{
		{name: "results and item errors",
			resp: `{"results":[{"fingerprint":"01","k":3,"duplicate":true,"duplicates":[{"id":"a","distance":1,"exact":false}]},null],"errors":[{"index":1,"error":{"kind":"low-information"}}]}`,
			want: []Checked{{Fingerprint: "01", K: 3, Duplicate: true, Duplicates: []Hit{{ID: "a", Distance: 1}}}, {Problem: "low-information"}}},
		{name: "too few results", resp: `{"results":[null],"errors":[{"index":0,"error":{"kind":"x"}}]}`, wantErr: true},
		{name: "item with neither", resp: `{"results":[{"k":3},null],"errors":[]}`, wantErr: true},
		{name: "error index out of range", resp: `{"results":[{"k":3},null],"errors":[{"index":5,"error":{"kind":"x"}}]}`, wantErr: true},
		{name: "error and result for one item", resp: `{"results":[{"k":3},{"k":3}],"errors":[{"index":1,"error":{"kind":"x"}}]}`, wantErr: true},
		{name: "not json", resp: `{`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					Items []Query `json:"items"`
					Limit int     `json:"limit"`
				}
				if r.URL.Path != "/v1/check/batch" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Items) != 2 || req.Limit != 7 {
					http.Error(w, "bad request", http.StatusBadRequest)
					return
				}
				io.WriteString(w, tt.resp)
			}))
			defer srv.Close()
			got, err := NewClient(srv.URL, nil).CheckBatch(context.Background(), []Query{{Text: "a"}, {Text: "b"}}, -1, 7)
			if tt.wantErr {
				if !errors.Is(err, ErrServer) {
					t.Errorf("err = %v, want ErrServer", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestClientHTTPError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"kind":"too-large"}`, http.StatusRequestEntityTooLarge)
	}))
	defer srv.Close()
	_, err := NewClient(srv.URL, nil).InsertBatch(context.Background(), []Doc{{ID: "a", Text: "x"}})
	if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "413") {
		t.Errorf("err = %v", err)
	}
}

// TestClientRetries503: a 503 is sent again after its Retry-After, up to
// maxTries attempts; then it is the error.
func TestClientRetries503(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fail    int
		wantErr bool
	}{
		{"two 503s, then 200", 2, false},
		{"503 every time", maxTries, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls++
				if calls <= tc.fail {
					w.Header().Set("Retry-After", "0")
					http.Error(w, `{"kind":"timeout"}`, http.StatusServiceUnavailable)
					return
				}
				w.Write([]byte(`{"results":[{"fingerprint":"0000000000000001"}]}`))
			}))
			defer srv.Close()
			_, err := NewClient(srv.URL, nil).InsertBatch(context.Background(), []Doc{{ID: "a", Text: "x"}})
			if (err != nil) != tc.wantErr || tc.wantErr && !strings.Contains(err.Error(), "503") {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
			if want := min(tc.fail+1, maxTries); calls != want {
				t.Errorf("%d requests, want %d", calls, want)
			}
		})
	}
}

// TestRealServer builds cmd/server and runs a few pairs through it over
// loopback: the path the benchmark takes, end to end.
func TestRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the real server")
	}
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..", "..")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin, err := BuildServer(ctx, repo, dir)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv, err := Start(ctx, log, bin, filepath.Join(dir, "data"), time.Minute, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	}()
	a := "The city council approved a new budget for the public library on Tuesday, adding funds for longer opening hours, new computers and a reading program for children across the district."
	b := "Heavy rain flooded the railway line between the two northern towns, and engineers expect repairs to the damaged bridge and signals to take at least three weeks."
	ps := []pairs.Pair{
		pair("copy", "punct", true, "A", a, strings.ReplaceAll(a, ",", " ,")),
		pair("other", "neg_topic", false, "A", a, b),
		pair("low", "truncate", true, "A", a, "the of and"),
		pair("empty", "truncate", true, "A", a, "<br/>"),
	}
	res, err := Evaluate(ctx, NewClient(srv.URL, nil), ps, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if res.Stored != 1 || res.K < 1 {
		t.Fatalf("result %+v", res)
	}
	got := map[string]metrics.Outcome{}
	for _, o := range res.Outcomes {
		got[o.PairID] = o
	}
	if o := got["copy"]; o.PartnerHit != 0 || o.Distance != 0 || !o.AnyHit {
		t.Errorf("copy with restyled punctuation: %+v", o)
	}
	if o := got["other"]; o.PartnerHit != -1 || o.Distance <= res.K || o.AnyHit {
		t.Errorf("unrelated text: %+v", o)
	}
	// A text of stop words is a low-information document: checked (near
	// exact matching only), no duplicate of the stored text.
	if o := got["low"]; o.Failure != "" || o.PartnerHit != -1 || o.AnyHit {
		t.Errorf("stop words only: %+v", o)
	}
	if o := got["empty"]; o.Failure == "" || o.Distance != -1 {
		t.Errorf("an empty text: %+v", o)
	}
	if err := srv.Close(); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		t.Errorf("data dir: %v", err)
	}
}

func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte(`{"results":[{"fingerprint":"01","k":3,"duplicate":true,"duplicates":[{"id":"a","distance":1}]},null],"errors":[{"index":1,"error":{"kind":"low-information"}}]}`), 2)
	f.Add([]byte(`{"results":[null],"errors":[{"index":-1}]}`), 1)
	f.Add([]byte(`{"results":[],"errors":[]}`), 0)
	f.Add([]byte(`{`), 3)
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		if n < 0 || n > 1000 {
			return
		}
		cs, err := decodeCheckBatch(body, n)
		if err != nil {
			if !errors.Is(err, ErrServer) {
				t.Fatalf("error not ErrServer: %v", err)
			}
		} else if len(cs) != n {
			t.Fatalf("%d results for %d items", len(cs), n)
		}
		is, err := decodeInsertBatch(body, n)
		if err != nil {
			if !errors.Is(err, ErrServer) {
				t.Fatalf("error not ErrServer: %v", err)
			}
		} else if len(is) != n {
			t.Fatalf("%d results for %d items", len(is), n)
		}
	})
}

func TestEvaluateWhole(t *testing.T) {
	svc := &fakeService{k: 3, stored: map[string]string{}, fp: map[string]string{
		"orig A": "0000000000000000", "copy A": "0000000000000001",
		"bg X": "ffff000000000000", "probe near X": "ffff000000000001", "probe far": "00ff00ff00ff00ff",
	}}
	ps := []pairs.Pair{pair("p1", "typos", true, "A", "orig A", "copy A")}
	set := pairs.WholeSet{
		Stored: []pairs.Stored{
			{Text: pairs.Text{ID: "A", Body: "orig A"}, Doc: "A"}, // already an original: stored once
			{Text: pairs.Text{ID: "X", Body: "bg X"}, Doc: "X"},
		},
		Probes: []pairs.Probe{
			{ID: "u1", Kind: pairs.ProbeUnstored, Doc: "U1", Query: pairs.Text{Body: "probe near X"}},
			{ID: "u2", Kind: pairs.ProbeUnstored, Doc: "U2", Query: pairs.Text{Body: "probe far"}},
		},
	}
	res, err := EvaluateWhole(context.Background(), svc, ps, set, Config{Batch: 10, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stored != 1 || res.Background != 1 || len(svc.stored) != 2 {
		t.Fatalf("stored %d originals and %d background documents (%d in the index), want 1, 1, 2", res.Stored, res.Background, len(svc.stored))
	}
	if len(res.Checks) != 1 || len(res.ProbeChecks) != 2 {
		t.Fatalf("%d pair checks and %d probe checks, want 1 and 2", len(res.Checks), len(res.ProbeChecks))
	}
	tests := []struct {
		name string
		c    Checked
		hits []string
	}{
		{"pair query", res.Checks[0], []string{"A"}},
		{"probe near a background document", res.ProbeChecks[0], []string{"X"}},
		{"probe near nothing", res.ProbeChecks[1], nil},
	}
	for _, tt := range tests {
		var got []string
		for _, h := range tt.c.Duplicates {
			got = append(got, h.ID)
		}
		if strings.Join(got, ",") != strings.Join(tt.hits, ",") {
			t.Errorf("%s: hits %v, want %v", tt.name, got, tt.hits)
		}
	}
}

func TestDecodeHitRelation(t *testing.T) {
	body := `{"results":[{"fingerprint":"1","k":3,"duplicate":true,"duplicates":[
		{"id":"a","distance":1,"relation":"query_is_excerpt","resemblance":0.4,"query_containment":0.9,"stored_containment":0.4,"clause":"containment"},
		{"id":"b","distance":2}]}]}`
	got, err := decodeCheckBatch([]byte(body), 1)
	if err != nil {
		t.Fatal(err)
	}
	hs := got[0].Duplicates
	if len(hs) != 2 {
		t.Fatalf("hits %+v", hs)
	}
	if hs[0].Relation != "query_is_excerpt" || hs[0].Clause != "containment" || hs[0].QueryContainment == nil || *hs[0].QueryContainment != 0.9 {
		t.Errorf("first hit %+v: service fields not decoded", hs[0])
	}
	if hs[1].Relation != "" || hs[1].Resemblance != nil {
		t.Errorf("second hit %+v: absent fields must stay empty", hs[1])
	}
}
