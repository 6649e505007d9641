package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/simdex/simdex/internal/testmails"
)

// The page's files are text: the OpenAPI check of their responses
// (testEnv.do) reads them as such.
func init() {
	for _, ct := range []string{"text/html", "text/javascript", "text/css"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
}

// explainMail is a short reply on a list: its own body, then the author's
// signature and the list's footer, the same under every mail (template,
// once enough stored mails share it).
func explainMail(body string) string { return testmails.Load().ShortMail(body) }

// explainBodies are the stored mails' bodies.
var explainBodies = testmails.Load().Bodies

// joined is a side's segments put back together.
func joined(segs []explainSegment) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(s.Text)
	}
	return b.String()
}

// marked lists a side's segments of a kind as "kind/class:text".
func marked(segs []explainSegment) []string {
	var out []string
	for _, s := range segs {
		if s.Kind != "" && s.Kind != "same" {
			out = append(out, s.Kind+"/"+s.Class+":"+strings.TrimSpace(s.Text))
		}
	}
	return out
}

// TestExplainShowsTheRulesAlignment: a stored short article and a query
// with a typo, a changed number and an added sentence are near-identical,
// and the answer cuts both normalized texts into segments that mark each
// difference as the rule reads it; Chinese texts the same way.
func TestExplainShowsTheRulesAlignment(t *testing.T) {
	e := newEnv(t, "", nil)
	en := "The city council approved the new budget of 4.5 million dollars on Monday. The vote was close, and the mayor thanked the members of the finance committee for their work."
	zh := "市政府周一批准了新的预算，总额为四百五十万元。投票结果非常接近，市长感谢财政委员会成员的工作。"
	for id, text := range map[string]string{"en/1": en, "zh/1": zh} {
		if r := e.do("POST", "/v1/documents", map[string]any{"id": id, "text": text}); r.status != http.StatusCreated {
			t.Fatalf("insert %s: %d %s", id, r.status, r.body)
		}
	}
	for _, tc := range []struct {
		id, query  string
		wantQuery  []string
		wantStored []string
	}{
		{"en/1", strings.NewReplacer("approved", "aproved", "4.5", "5.2").Replace(en) + " More details will follow on Friday.",
			[]string{"changed/typo:aproved", "changed/number:5.2", "only/sentences:more details will follow on friday"},
			[]string{"changed/typo:approved", "changed/number:4.5"}},
		{"zh/1", strings.Replace(zh, "预算", "预箅", 1),
			[]string{"changed/typo:箅"}, []string{"changed/typo:算"}},
	} {
		var ex explainResponse
		r := e.do("POST", "/v1/explain", map[string]any{"id": tc.id, "query": map[string]any{"text": tc.query}})
		r.json(t, &ex)
		if r.status != http.StatusOK || ex.Relation != "near_identical" || !ex.Duplicate || !ex.Aligned || ex.Query == nil || ex.Distance == nil {
			t.Fatalf("%s: %d %s; want an aligned near-identical pair", tc.id, r.status, r.body)
		}
		if !ex.Stored.TextKept || joined(ex.Stored.Segments) != ex.Stored.Text || joined(ex.Query.Segments) != ex.Query.Text {
			t.Errorf("%s: the segments are not the whole texts: %q / %q", tc.id, joined(ex.Query.Segments), joined(ex.Stored.Segments))
		}
		if got := marked(ex.Query.Segments); !slices.Equal(got, tc.wantQuery) {
			t.Errorf("%s: query marks %q, want %q", tc.id, got, tc.wantQuery)
		}
		if got := marked(ex.Stored.Segments); !slices.Equal(got, tc.wantStored) {
			t.Errorf("%s: stored marks %q, want %q", tc.id, got, tc.wantStored)
		}
		if ex.Alignment == nil || ex.Alignment.Changed != 0 || ex.Alignment.Common == 0 {
			t.Errorf("%s: alignment %+v", tc.id, ex.Alignment)
		}
		// The verdict is the check's.
		var c checkResponse
		e.do("POST", "/v1/check", map[string]any{"text": tc.query}).json(t, &c)
		if len(c.Duplicates) != 1 || c.Duplicates[0].ID != tc.id || c.Duplicates[0].Relation != ex.Relation || c.Duplicates[0].Clause != ex.Clause ||
			c.Duplicates[0].Resemblance != ex.Resemblance || c.Duplicates[0].Distance != *ex.Distance {
			t.Errorf("%s: check says %+v, explain %s %s %v", tc.id, c.Duplicates, ex.Relation, ex.Clause, ex.Resemblance)
		}
	}

	// A word swapped is a content difference, and no duplicate.
	var ex explainResponse
	e.do("POST", "/v1/explain", map[string]any{"id": "en/1", "query": map[string]any{"text": strings.Replace(en, "council", "senate", 1)}}).json(t, &ex)
	if ex.Duplicate || !slices.Contains(marked(ex.Query.Segments), "changed/content:senate") {
		t.Errorf("a swapped word: duplicate %v, marks %q", ex.Duplicate, marked(ex.Query.Segments))
	}

	// Without a query: the stored document alone.
	ex = explainResponse{}
	r := e.do("POST", "/v1/explain", map[string]any{"id": "zh/1"})
	r.json(t, &ex)
	if r.status != http.StatusOK || ex.Query != nil || ex.Stored.Text == "" || !ex.Stored.TextKept || ex.Relation != "" {
		t.Errorf("explain without a query: %d %s", r.status, r.body)
	}

	for _, tc := range []struct {
		body any
		want int
	}{
		{map[string]any{"id": "nope", "query": map[string]any{"text": en}}, http.StatusNotFound},
		{map[string]any{"query": map[string]any{"text": en}}, http.StatusBadRequest},
		{map[string]any{"id": "en/1", "query": map[string]any{"title": "only a title"}}, http.StatusBadRequest},
		{map[string]any{"id": "en/1", "policy": "strict"}, http.StatusBadRequest},
		{map[string]any{"id": "en/1", "other": 1}, http.StatusBadRequest},
	} {
		if r := e.do("POST", "/v1/explain", tc.body); r.status != tc.want {
			t.Errorf("%v: %d %s, want %d", tc.body, r.status, r.body, tc.want)
		} else {
			r.problem(t)
		}
	}
}

// TestExplainLongStoredText: a stored document of TextChars normalized
// characters or more keeps no text; the answer says so and aligns
// nothing, and still gives the verdict.
func TestExplainLongStoredText(t *testing.T) {
	e := newEnv(t, "", nil)
	var b strings.Builder
	for i := 0; b.Len() < 6000; i++ {
		fmt.Fprintf(&b, "Paragraph %d of the long report describes the harbour works in the district number %d. ", i, i*7)
	}
	long := b.String()
	if r := e.do("POST", "/v1/documents", map[string]any{"id": "long", "text": long}); r.status != http.StatusCreated {
		t.Fatalf("insert: %d %s", r.status, r.body)
	}
	var ex explainResponse
	r := e.do("POST", "/v1/explain", map[string]any{"id": "long", "query": map[string]any{"text": long}})
	r.json(t, &ex)
	if r.status != http.StatusOK || ex.Stored.TextKept || ex.Stored.Text != "" || ex.Aligned || !strings.Contains(ex.Note, "4000") || ex.Relation != "near_identical" {
		t.Errorf("a long stored document: %d %+v", r.status, ex)
	}
}

// TestExplainMarksTemplate: the footer many stored mails share is the
// query's template: listed, marked as template on both texts and left
// out of the alignment, as a check leaves it out.
func TestExplainMarksTemplate(t *testing.T) {
	e := newEnv(t, "", nil)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i, body := range explainBodies {
		if r := e.do("POST", "/v1/documents", map[string]any{"id": fmt.Sprintf("mail/%d", i), "text": explainMail(body), "time": t0.Add(time.Duration(i) * time.Hour)}); r.status != http.StatusCreated {
			t.Fatalf("insert: %d %s", r.status, r.body)
		}
	}
	query := "Re: " + explainMail(explainBodies[2])
	var c checkResponse
	e.do("POST", "/v1/check", map[string]any{"text": query}).json(t, &c)
	if len(c.Template) == 0 || len(c.Duplicates) != 1 || c.Duplicates[0].ID != "mail/2" {
		t.Fatalf("check: template %q, duplicates %+v; want the footer as template and mail/2", c.Template, c.Duplicates)
	}
	var ex explainResponse
	e.do("POST", "/v1/explain", map[string]any{"id": "mail/2", "query": map[string]any{"text": query}}).json(t, &ex)
	if !slices.Equal(ex.Template, c.Template) || ex.Relation != c.Duplicates[0].Relation || !ex.Aligned {
		t.Fatalf("explain: template %q relation %s aligned %v; check: %q %s", ex.Template, ex.Relation, ex.Aligned, c.Template, c.Duplicates[0].Relation)
	}
	for side, segs := range map[string][]explainSegment{"query": ex.Query.Segments, "stored": ex.Stored.Segments} {
		var tmpl string
		for _, s := range segs {
			if s.Kind == "template" {
				tmpl += s.Text + "\n"
				if s.Step != nil {
					t.Errorf("%s: a template segment with a step", side)
				}
			}
		}
		for _, line := range c.Template {
			if !strings.Contains(tmpl, line) {
				t.Errorf("%s: template line %q is not marked (template segments %q)", side, line, tmpl)
			}
		}
	}
	if got := marked(ex.Query.Segments); !slices.Contains(got, "only/sentences:re") {
		t.Errorf("query marks %q: want the added \"re\" head", got)
	}
}

// TestPageIsServed: the page and its files come from the binary, with a
// policy that lets them load nothing from elsewhere; unknown files are
// problems; a known version is not sent again.
func TestPageIsServed(t *testing.T) {
	e := newEnv(t, "", nil)
	for path, want := range map[string]string{"/": "text/html", "/ui/app.js": "text/javascript", "/ui/app.css": "text/css"} {
		r := e.do("GET", path, nil)
		if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), want) || len(r.body) == 0 {
			t.Errorf("GET %s: %d %q", path, r.status, r.header.Get("Content-Type"))
		}
		if path == "/" {
			if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
				t.Errorf("GET /: policy %q", csp)
			}
			if !strings.Contains(string(r.body), `<meta charset="utf-8">`) || !strings.Contains(string(r.body), "/ui/app.js") {
				t.Errorf("GET /: %s", r.body)
			}
		}
		req, _ := http.NewRequest("GET", e.http.URL+path, nil)
		req.Header.Set("If-None-Match", r.header.Get("ETag"))
		resp, err := e.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d, want 304", path, resp.StatusCode)
		}
	}
	// Nothing the page loads names another host.
	for _, name := range []string{"index.html", "app.js", "app.css"} {
		if body := string(uiAssets[name].body); strings.Contains(body, "http://") || strings.Contains(body, "https://") || strings.Contains(body, "//cdn") {
			t.Errorf("%s names another host", name)
		}
	}
	if r := e.do("GET", "/ui/nope.js", nil); r.status != http.StatusNotFound {
		t.Errorf("GET /ui/nope.js: %d", r.status)
	} else {
		r.problem(t)
	}
}

// TestSeenUserSummary: GET /v1/users/{user}/seen counts the user's live
// items; an unknown user has seen nothing; without seen sets it is 501.
func TestSeenUserSummary(t *testing.T) {
	e := newSeenEnv(t, nil)
	if r := e.do("POST", "/v1/users/u7/seen", map[string]any{"items": []map[string]any{{"id": "a"}, {"id": "b"}, {"id": "a"}}}); r.status/100 != 2 {
		t.Fatalf("mark: %d %s", r.status, r.body)
	}
	var u seenUserResponse
	r := e.do("GET", "/v1/users/u7/seen", nil)
	r.json(t, &u)
	if r.status != http.StatusOK || u.User != "u7" || u.Items != 2 || u.Bytes == 0 || u.Retention == "" {
		t.Errorf("u7: %d %s", r.status, r.body)
	}
	u = seenUserResponse{}
	e.do("GET", "/v1/users/nobody/seen", nil).json(t, &u)
	if u.Items != 0 || u.Bytes != 0 {
		t.Errorf("nobody: %+v", u)
	}
	plain := newEnv(t, "", nil)
	if r := plain.do("GET", "/v1/users/u7/seen", nil); r.status != http.StatusNotImplemented {
		t.Errorf("without seen sets: %d %s", r.status, r.body)
	}
}
