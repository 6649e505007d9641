package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/testmails"
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
		answers := askEveryRoute(t, e, "u1", id, tc.text, "orig")
		for route, got := range answers {
			if got != tc.dup {
				t.Errorf("%s: %s says duplicate %v, want %v", tc.name, route, got, tc.dup)
			}
		}
	}
}

// askEveryRoute asks whether text (to be stored as id) is a duplicate of
// the stored document orig on every route: a check, a batch check,
// insert-if-unique, and the seen filter of user (who has seen orig) with
// near=true. It leaves text stored as id.
func askEveryRoute(t *testing.T, e *testEnv, user, id, text, orig string) map[string]bool {
	t.Helper()
	var c checkResponse
	e.do("POST", "/v1/check", map[string]any{"text": text}).json(t, &c)
	var bc batchCheckResponse
	e.do("POST", "/v1/check/batch", map[string]any{"items": []map[string]any{{"text": text}}}).json(t, &bc)
	var in insertResponse
	e.do("POST", "/v1/documents", map[string]any{"id": id, "text": text, "mode": "insert-if-unique"}).json(t, &in)
	// The seen filter needs the candidate stored: store it (always).
	if r := e.do("POST", "/v1/documents", map[string]any{"id": id, "text": text}); r.status/100 != 2 {
		t.Fatalf("store %s: %d %s", id, r.status, r.body)
	}
	var f struct {
		Kept    []string `json:"kept"`
		Dropped []struct {
			Reason string `json:"reason"`
		} `json:"dropped"`
	}
	e.do("POST", "/v1/users/"+user+"/seen/filter", map[string]any{"candidates": []map[string]any{{"id": "item-" + id, "doc_id": id}}, "near": true}).json(t, &f)
	return map[string]bool{
		"check":            c.Duplicate,
		"batch check":      len(bc.Results) == 1 && bc.Results[0] != nil && bc.Results[0].Duplicate,
		"insert-if-unique": !in.Stored && in.DuplicateOf == orig,
		"seen filter":      len(f.Dropped) == 1 && f.Dropped[0].Reason == "near",
	}
}

// TestTemplatePairSameAnswerOnEveryRoute: one author's mails on a list
// share a long signature and footer, so a new mail is within the seen
// filter's k of a stored one (internal/testmails). Every
// route learns the template (a check from its query's text-key rows, the
// seen filter from the stored document's): the new mail is no duplicate
// anywhere, a restyled copy of a mail is a duplicate everywhere.
func TestTemplatePairSameAnswerOnEveryRoute(t *testing.T) {
	e := newSeenEnv(t, nil)
	mails := testmails.Load()
	mail := mails.Mail
	fpr := sharedFingerprinter(t)
	fNew, _ := fpr.Fingerprint(fingerprint.Document{Body: mail(mails.New)})
	nearest, best := -1, 65
	for i, b := range mails.Bodies {
		if r := e.do("POST", "/v1/documents", map[string]any{"id": fmt.Sprintf("mail-%d", i), "text": mail(b)}); r.status != http.StatusCreated {
			t.Fatalf("insert: %d %s", r.status, r.body)
		}
		f, _ := fpr.Fingerprint(fingerprint.Document{Body: mail(b)})
		if d := fingerprint.Distance(fNew.Simhash, f.Simhash); d < best {
			nearest, best = i, d
		}
	}
	if best > DefaultSeenK {
		t.Fatalf("test texts: the nearest stored mail is %d bits from the new one; the seen filter only considers pairs within %d", best, DefaultSeenK)
	}
	orig := fmt.Sprintf("mail-%d", nearest)
	if r := e.do("POST", "/v1/users/u1/seen", map[string]any{"items": []map[string]any{{"id": "item-" + orig, "doc_id": orig}}}); r.status/100 != 2 {
		t.Fatalf("mark: %d %s", r.status, r.body)
	}
	// The seen filter considers pairs within its k only: the copy is a
	// restyled one, a few bits from its original.
	restyled := testmails.Restyled(mail(mails.Bodies[nearest]))
	fc, _ := fpr.Fingerprint(fingerprint.Document{Body: mail(mails.Bodies[nearest])})
	fr, _ := fpr.Fingerprint(fingerprint.Document{Body: restyled})
	if d := fingerprint.Distance(fc.Simhash, fr.Simhash); d > DefaultSeenK {
		t.Fatalf("test texts: the restyled copy is %d bits from its original, beyond the seen filter's %d", d, DefaultSeenK)
	}
	for _, tc := range []struct {
		id, text string
		dup      bool
	}{
		{"new-mail", mail(mails.New), false},
		{"restyled-copy", restyled, true},
	} {
		for route, got := range askEveryRoute(t, e, "u1", tc.id, tc.text, orig) {
			if got != tc.dup {
				t.Errorf("%s: %s says duplicate %v, want %v", tc.id, route, got, tc.dup)
			}
		}
	}
}
