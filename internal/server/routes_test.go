package server

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
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
	return askEveryRouteFrom(t, e, user, id, text, orig, "")
}

// askEveryRouteFrom is askEveryRoute for a text of a source: the checks
// name it, the inserts carry it as the source attribute ("" for none).
func askEveryRouteFrom(t *testing.T, e *testEnv, user, id, text, orig, source string) map[string]bool {
	t.Helper()
	check := map[string]any{"text": text}
	doc := map[string]any{"id": id, "text": text}
	if source != "" {
		check["source"] = source
		doc["attrs"] = map[string]string{"source": source}
	}
	var c checkResponse
	e.do("POST", "/v1/check", check).json(t, &c)
	var bc batchCheckResponse
	e.do("POST", "/v1/check/batch", map[string]any{"items": []map[string]any{check}}).json(t, &bc)
	var in insertResponse
	unique := maps.Clone(doc)
	unique["mode"] = "insert-if-unique"
	e.do("POST", "/v1/documents", unique).json(t, &in)
	// The seen filter needs the candidate stored: store it (always).
	if r := e.do("POST", "/v1/documents", doc); r.status/100 != 2 {
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

// storeNearest stores texts as documents prefix-0, prefix-1, ... (with
// attrs, when given) and returns the index of the one nearest newText,
// which must lie within the seen filter's k of it.
func storeNearest(t *testing.T, e *testEnv, prefix string, texts []string, attrs map[string]string, newText string) int {
	t.Helper()
	fpr := sharedFingerprinter(t)
	fNew, _ := fpr.Fingerprint(fingerprint.Document{Body: newText})
	nearest, best := -1, 65
	for i, text := range texts {
		doc := map[string]any{"id": fmt.Sprintf("%s-%d", prefix, i), "text": text}
		if attrs != nil {
			doc["attrs"] = attrs
		}
		if r := e.do("POST", "/v1/documents", doc); r.status != http.StatusCreated {
			t.Fatalf("insert: %d %s", r.status, r.body)
		}
		f, _ := fpr.Fingerprint(fingerprint.Document{Body: text})
		if d := fingerprint.Distance(fNew.Simhash, f.Simhash); d < best {
			nearest, best = i, d
		}
	}
	if best > DefaultSeenK {
		t.Fatalf("test texts: the nearest stored %s is %d bits from the new one; the seen filter only considers pairs within %d", prefix, best, DefaultSeenK)
	}
	return nearest
}

// checkNewAndRestyled asks every route about a new text (newID, newText),
// which must be no duplicate anywhere, and about a restyled copy of
// origText (stored as orig and seen by user), a few bits from it, which
// must be a duplicate everywhere; source is the texts' source ("" for none).
func checkNewAndRestyled(t *testing.T, e *testEnv, user, orig, source, newID, newText, origText string) {
	t.Helper()
	// The seen filter considers pairs within its k only.
	restyled := testmails.Restyled(origText)
	fpr := sharedFingerprinter(t)
	fc, _ := fpr.Fingerprint(fingerprint.Document{Body: origText})
	fr, _ := fpr.Fingerprint(fingerprint.Document{Body: restyled})
	if d := fingerprint.Distance(fc.Simhash, fr.Simhash); d > DefaultSeenK {
		t.Fatalf("test texts: the restyled copy is %d bits from its original, beyond the seen filter's %d", d, DefaultSeenK)
	}
	for _, tc := range []struct {
		id, text string
		dup      bool
	}{
		{newID, newText, false},
		{"restyled-copy", restyled, true},
	} {
		for route, got := range askEveryRouteFrom(t, e, user, tc.id, tc.text, orig, source) {
			if got != tc.dup {
				t.Errorf("%s: %s says duplicate %v, want %v", tc.id, route, got, tc.dup)
			}
		}
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
	var texts []string
	for _, b := range mails.Bodies {
		texts = append(texts, mail(b))
	}
	nearest := storeNearest(t, e, "mail", texts, nil, mail(mails.New))
	orig := fmt.Sprintf("mail-%d", nearest)
	if r := e.do("POST", "/v1/users/u1/seen", map[string]any{"items": []map[string]any{{"id": "item-" + orig, "doc_id": orig}}}); r.status/100 != 2 {
		t.Fatalf("mark: %d %s", r.status, r.body)
	}
	// The seen filter considers pairs within its k only: the copy is a
	// restyled one, a few bits from its original.
	checkNewAndRestyled(t, e, "u1", orig, "", "new-mail", mail(mails.New), mail(mails.Bodies[nearest]))
}

// TestSourceTemplatePairSameAnswerOnEveryRoute: a site's pages share a
// header and a long footer (internal/testmails' signature and list
// footer), so a new page is within the seen filter's k of a stored one.
// Five pages of the site carry them; the new page's own sentence is also
// quoted on another site's longer page. Overall, the new page's rarest key
// is then in one document, so a sentence is template only from 3 x 2 = 6
// documents, and the footer (5) is not: checked without a source, the new
// page is a duplicate of its neighbour by the footer alone. Named as the
// site's, its template is also what the site's pages share, judged by the
// same rule over the site's counts (its own sentence: 0 there, so 5
// suffice): the new page is no duplicate on any route, and a restyled copy
// of a page is a duplicate on every one.
func TestSourceTemplatePairSameAnswerOnEveryRoute(t *testing.T) {
	e := newSeenEnv(t, nil)
	mails := testmails.Load()
	const site = "builders.example.org"
	const header = "Builders mailing list message from the release engineering team."
	page := func(body string) string { return header + "\n" + mails.Mail(body) }
	fpr := sharedFingerprinter(t)
	fNew, _ := fpr.Fingerprint(fingerprint.Document{Body: page(mails.New)})
	// The site's five pages nearest the new one (the seen filter needs one
	// within its k).
	dist := func(b string) int {
		f, _ := fpr.Fingerprint(fingerprint.Document{Body: page(b)})
		return fingerprint.Distance(fNew.Simhash, f.Simhash)
	}
	bodies := slices.Clone(mails.Bodies)
	slices.SortStableFunc(bodies, func(a, b string) int { return dist(a) - dist(b) })
	bodies = bodies[:5]
	var texts []string
	for _, b := range bodies {
		texts = append(texts, page(b))
	}
	nearest := storeNearest(t, e, "page", texts, map[string]string{"source": site}, page(mails.New))
	quote := "The weekly roundup of the regional software cooperatives collects what their lists discussed.\n" +
		"Two projects announced new maintainers and one retired its old mirror network.\n" +
		"On the builders list one message stood out among the many about failing machines.\n" +
		mails.New + "\n" +
		"The translation teams asked for more reviewers before the spring release.\n" +
		"Next week the roundup covers the documentation sprint and the accessibility audit.\n"
	if r := e.do("POST", "/v1/documents", map[string]any{"id": "roundup", "text": quote, "attrs": map[string]string{"source": "roundup.example.net"}}); r.status != http.StatusCreated {
		t.Fatalf("insert: %d %s", r.status, r.body)
	}
	orig := fmt.Sprintf("page-%d", nearest)
	if r := e.do("POST", "/v1/users/u1/seen", map[string]any{"items": []map[string]any{{"id": "item-" + orig, "doc_id": orig}}}); r.status/100 != 2 {
		t.Fatalf("mark: %d %s", r.status, r.body)
	}
	// The overall counts alone leave the footer in: without the source the
	// new page is its neighbour's duplicate (what the source changes).
	var blind checkResponse
	e.do("POST", "/v1/check", map[string]any{"text": page(mails.New)}).json(t, &blind)
	if !blind.Duplicate || len(blind.Template) != 0 {
		t.Fatalf("test corpus: without a source the new page is duplicate %v with template %q; want a duplicate by the footer, no template", blind.Duplicate, blind.Template)
	}
	var named checkResponse
	e.do("POST", "/v1/check", map[string]any{"text": page(mails.New), "source": site}).json(t, &named)
	if !slices.Contains(named.Template, strings.ToLower(mails.Footer[len(mails.Footer)-1])) || slices.ContainsFunc(named.Template, func(l string) bool { return strings.Contains(l, "roundup") }) {
		t.Errorf("template with the source: %q", named.Template)
	}
	checkNewAndRestyled(t, e, "u1", orig, site, "new-page", page(mails.New), page(bodies[nearest]))
}
