package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/simdex/simdex/fingerprint"
)

// TestSamePairSameAnswerOnEveryRoute: each pair of documents gets one
// answer from a check, a batch check, insert-if-unique and a seen filter
// with near=true (a reader who has seen the stored one): a one-word swap
// within the index's k (a different fact) is no duplicate anywhere, a
// restyled copy is a duplicate everywhere.
func TestSamePairSameAnswerOnEveryRoute(t *testing.T) {
	e := newSeenEnv(t, nil)
	orig := "The city council approved twelve electric buses for the northern routes on Monday, officials said after a long vote in the old town hall."
	cases := []struct {
		name, text string
		dup        bool
	}{
		{"one word swapped", strings.Replace(orig, "town", "harbour", 1), false},
		{"restyled", strings.ReplaceAll(orig, ",", " -"), true},
	}
	fpr := sharedFingerprinter(t)
	fo, _ := fpr.Fingerprint(fingerprint.Document{Body: orig})
	for _, tc := range cases {
		f, _ := fpr.Fingerprint(fingerprint.Document{Body: tc.text})
		if d := fingerprint.Distance(fo.Simhash, f.Simhash); d > DefaultSeenK {
			t.Fatalf("test text %q is %d bits away: the seen filter only considers pairs within %d", tc.name, d, DefaultSeenK)
		}
	}
	if r := e.do("POST", "/v1/documents", map[string]any{"id": "orig", "text": orig}); r.status != http.StatusCreated {
		t.Fatalf("insert: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/users/u1/seen", map[string]any{"items": []map[string]any{{"id": "item-orig", "doc_id": "orig"}}}); r.status/100 != 2 {
		t.Fatalf("mark: %d %s", r.status, r.body)
	}
	for i, tc := range cases {
		id := []string{"swap", "restyle"}[i]
		var c checkResponse
		e.do("POST", "/v1/check", map[string]any{"text": tc.text}).json(t, &c)
		var bc batchCheckResponse
		e.do("POST", "/v1/check/batch", map[string]any{"items": []map[string]any{{"text": tc.text}}}).json(t, &bc)
		var in insertResponse
		e.do("POST", "/v1/documents", map[string]any{"id": id, "text": tc.text, "mode": "insert-if-unique"}).json(t, &in)
		// The seen filter needs the candidate stored: store it (always).
		if r := e.do("POST", "/v1/documents", map[string]any{"id": id, "text": tc.text}); r.status/100 != 2 {
			t.Fatalf("store %s: %d %s", id, r.status, r.body)
		}
		var f struct {
			Kept    []string `json:"kept"`
			Dropped []struct {
				Reason string `json:"reason"`
			} `json:"dropped"`
		}
		e.do("POST", "/v1/users/u1/seen/filter", map[string]any{"candidates": []map[string]any{{"id": "item-" + id, "doc_id": id}}, "near": true}).json(t, &f)
		answers := map[string]bool{
			"check":            c.Duplicate,
			"batch check":      len(bc.Results) == 1 && bc.Results[0] != nil && bc.Results[0].Duplicate,
			"insert-if-unique": !in.Stored && in.DuplicateOf == "orig",
			"seen filter":      len(f.Dropped) == 1 && f.Dropped[0].Reason == "near",
		}
		for route, got := range answers {
			if got != tc.dup {
				t.Errorf("%s: %s says duplicate %v, want %v", tc.name, route, got, tc.dup)
			}
		}
	}
}
