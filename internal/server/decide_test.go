package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/pebblestore"
)

// busesText is a short news text (three sentences, under
// fingerprint.TextKeyChars), and busesPage a longer page that holds it
// whole between a site's header and footer lines.
const (
	busesText = "The city council approved twelve electric buses for the northern routes on Monday. " +
		"Officials said the first buses will run in the spring after drivers finish their training. " +
		"The vote followed a long debate in the old town hall."
	busesPage = "Metro Daily Online - your source for local news and weather updates every day\n" +
		"Posted by the newsroom staff on a cold morning in the middle of the week\n" +
		busesText + "\n" +
		"Subscribe to our newsletter to receive the best stories of the week in your inbox.\n" +
		"Our readers also enjoyed a long feature about the history of the harbour and its lighthouse keepers.\n" +
		"Advertise with us and reach thousands of local families, shop owners and commuters."
)

// newRuleEnv is newEnv with the index opened the way Run opens it: the
// decision rule confirms insert-if-unique candidates too.
func newRuleEnv(t *testing.T) *testEnv {
	t.Helper()
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.DataDir = dir
	e := &testEnv{t: t, dir: dir, cfg: cfg, reg: prometheus.NewRegistry()}
	st, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.ix, err = kvindex.Open(context.Background(), st, kvindex.Config{Layout: cfg.Layout, RecipeVersion: fingerprint.RecipeVersion, Registerer: e.reg, Confirm: cfg.judge(sharedFingerprinter(t)).Confirm})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	if e.srv, err = New(cfg, e.ix, sharedFingerprinter(t), nil, e.reg); err != nil {
		t.Fatal(err)
	}
	e.http = httptest.NewServer(e.srv)
	e.router = openAPIRouter(t)
	t.Cleanup(e.close)
	return e
}

// On a short text, a copy with one key word swapped (a different fact) is
// not a duplicate although its simhash is within k, while a restyled copy
// is; check, batch check and insert-if-unique agree, and a bare-fingerprint
// check falls back to the distance rule.
func TestShortTextKeywordSwapIsNotADuplicate(t *testing.T) {
	e := newRuleEnv(t)
	orig := "The city council approved twelve electric buses for the northern routes on Monday, officials said after a long vote in the old town hall."
	swapped := strings.Replace(orig, "town", "harbour", 1) // 3 bits, Jaccard 0.8
	restyled := strings.ReplaceAll(orig, ",", " -")

	fpr := sharedFingerprinter(t)
	fo, _ := fpr.Fingerprint(fingerprint.Document{Body: orig})
	fs, _ := fpr.Fingerprint(fingerprint.Document{Body: swapped})
	if d := fingerprint.Distance(fo.Simhash, fs.Simhash); d > e.cfg.Layout.K {
		t.Fatalf("test text: the swap is %d bits away; it must be within k = %d for the rule to matter", d, e.cfg.Layout.K)
	}

	if r := e.do("POST", "/v1/documents", map[string]any{"id": "orig", "text": orig}); r.status != http.StatusCreated {
		t.Fatalf("insert: %d %s", r.status, r.body)
	}
	check := func(text string) checkResponse {
		t.Helper()
		var c checkResponse
		r := e.do("POST", "/v1/check", map[string]any{"text": text})
		if r.status != 200 {
			t.Fatalf("check: %d %s", r.status, r.body)
		}
		r.json(t, &c)
		return c
	}
	if c := check(swapped); c.Duplicate || len(c.Duplicates) != 0 {
		t.Errorf("one word swapped: duplicate %v %+v, want none", c.Duplicate, c.Duplicates)
	}
	if c := check(restyled); !c.Duplicate || len(c.Duplicates) != 1 || c.Duplicates[0].ID != "orig" {
		t.Errorf("restyled: duplicate %v %+v, want orig", c.Duplicate, c.Duplicates)
	}

	var bc batchCheckResponse
	r := e.do("POST", "/v1/check/batch", map[string]any{"items": []map[string]any{{"text": swapped}, {"text": restyled}, {"fingerprint": fs.Simhash.String()}}})
	if r.status != 200 {
		t.Fatalf("batch check: %d %s", r.status, r.body)
	}
	r.json(t, &bc)
	if len(bc.Results) != 3 || bc.Results[0].Duplicate || !bc.Results[1].Duplicate || !bc.Results[2].Duplicate {
		t.Errorf("batch: swapped %v, restyled %v, bare fingerprint %v; want false, true, true (bare: distance rule)",
			bc.Results[0].Duplicate, bc.Results[1].Duplicate, bc.Results[2].Duplicate)
	}

	var ins insertResponse
	r = e.do("POST", "/v1/documents", map[string]any{"id": "swapped", "text": swapped, "mode": "insert-if-unique"})
	r.json(t, &ins)
	if r.status != http.StatusCreated || !ins.Stored || len(ins.Duplicates) != 0 {
		t.Errorf("insert-if-unique of the swap: %d %+v, want stored with no duplicates", r.status, ins)
	}
	ins = insertResponse{}
	r = e.do("POST", "/v1/documents", map[string]any{"id": "restyled", "text": restyled, "mode": "insert-if-unique"})
	r.json(t, &ins)
	if ins.Stored || ins.DuplicateOf != "orig" {
		t.Errorf("insert-if-unique of the restyled copy: %d %+v, want a duplicate of orig", r.status, ins)
	}
	// The stored document carries its sketch and, being short, its
	// normalized text (docs cell 0x04) for the alignment clause.
	d, err := e.ix.Get(context.Background(), "orig")
	if err != nil || len(d.Sketch) == 0 || d.Chars == 0 || d.Text != fo.Text {
		t.Errorf("stored orig: sketch %v chars %d text %q err %v, want a sketch and the normalized text", d.Sketch, d.Chars, d.Text, err)
	}
}

// On a short text, typos are the same text to an
// editor even when they move the simhash and the sketch far (the alignment
// clause, found through the band rows); check, batch check and
// insert-if-unique agree, and a Chinese one-word swap is still not one.
func TestShortTextTyposAreADuplicate(t *testing.T) {
	e := newRuleEnv(t)
	orig := "The city council approved twelve electric buses for the northern routes on Monday, officials said after a long vote in the old town hall."
	typos := strings.NewReplacer("council", "coucnil", "approved", "aproved").Replace(orig)
	zh := "市政府周一批准了新的预算。投票结果非常接近,议员们讨论了很久。"
	zhSwap := strings.Replace(zh, "预算", "税法", 1)
	fpr := sharedFingerprinter(t)
	fo, _ := fpr.Fingerprint(fingerprint.Document{Body: orig})
	ft, _ := fpr.Fingerprint(fingerprint.Document{Body: typos})
	t.Logf("typos: distance %d, Jaccard %.2f", fingerprint.Distance(fo.Simhash, ft.Simhash), fingerprint.Jaccard(fo.Sketch, ft.Sketch))
	if fingerprint.Jaccard(fo.Sketch, ft.Sketch) >= e.cfg.rule().ShortMinJaccard {
		t.Fatal("test text: the typos must fail the sketch-only short clause for the test to matter")
	}
	for _, doc := range []map[string]any{{"id": "orig", "text": orig}, {"id": "zh", "text": zh}} {
		if r := e.do("POST", "/v1/documents", doc); r.status != http.StatusCreated {
			t.Fatalf("insert: %d %s", r.status, r.body)
		}
	}
	var bc batchCheckResponse
	r := e.do("POST", "/v1/check/batch", map[string]any{"items": []map[string]any{{"text": typos}, {"text": zhSwap}}})
	if r.status != 200 {
		t.Fatalf("batch check: %d %s", r.status, r.body)
	}
	r.json(t, &bc)
	if len(bc.Results) != 2 || !bc.Results[0].Duplicate || bc.Results[1].Duplicate {
		t.Fatalf("batch: typos %+v, zh swap %+v; want a duplicate of orig, no duplicate", bc.Results[0], bc.Results[1])
	}
	var c checkResponse
	e.do("POST", "/v1/check", map[string]any{"text": typos}).json(t, &c)
	if !c.Duplicate || len(c.Duplicates) != 1 || c.Duplicates[0].ID != "orig" {
		t.Errorf("check of the typos: %+v, want orig", c)
	}
	var ins insertResponse
	e.do("POST", "/v1/documents", map[string]any{"id": "typos", "text": typos, "mode": "insert-if-unique"}).json(t, &ins)
	if ins.Stored || ins.DuplicateOf != "orig" {
		t.Errorf("insert-if-unique of the typos: %+v, want a duplicate of orig", ins)
	}
	ins = insertResponse{}
	e.do("POST", "/v1/documents", map[string]any{"id": "zhswap", "text": zhSwap, "mode": "insert-if-unique"}).json(t, &ins)
	if !ins.Stored {
		t.Errorf("insert-if-unique of the zh swap: %+v, want stored", ins)
	}
}

// A short text quoted inside a longer page (its own dateline, header and
// footer: a scraper's copy over 400 characters, whose feature set overlaps
// the original's too little for the LSH bands) is found through the text
// keys and judged contained by the alignment; a text that shares one
// sentence with the original but has its own is not a duplicate; a
// teaser cut after the first sentences is found and accepted too.
func TestShortTextInsideALongerPageIsADuplicate(t *testing.T) {
	e := newRuleEnv(t)
	orig, page := busesText, busesPage
	shares := "Officials said the first buses will run in the spring after drivers finish their training. " +
		"Farmers in the valley expect a late harvest after the cold and wet weather of the last months."
	teaser := "The city council approved twelve electric buses for the northern routes on Monday. " +
		"Officials said the first buses will run in the spring after drivers finish their training."
	fpr := sharedFingerprinter(t)
	fo, _ := fpr.Fingerprint(fingerprint.Document{Body: orig})
	fp, _ := fpr.Fingerprint(fingerprint.Document{Body: page})
	t.Logf("page: %d characters, distance %d, Jaccard %.2f, LSH band shared %v", fp.Chars, fingerprint.Distance(fo.Simhash, fp.Simhash), fingerprint.Jaccard(fo.Sketch, fp.Sketch), fingerprint.SharesBand(fo.Bands.LSH(), fp.Bands.LSH()))
	if fp.Chars < fingerprint.TextKeyChars || fingerprint.SharesBand(fo.Bands.LSH(), fp.Bands.LSH()) {
		t.Fatal("test text: the page must be long and share no LSH band with the original for the test to matter")
	}
	if r := e.do("POST", "/v1/documents", map[string]any{"id": "orig", "text": orig}); r.status != http.StatusCreated {
		t.Fatalf("insert: %d %s", r.status, r.body)
	}
	// The page holds the stored text (stored_is_excerpt): a copy, which
	// the copy policy counts and the default policy reports as related
	// only (a new page that quotes a stored text is not "already had");
	// the teaser (two of the three sentences) aligns with the stored text
	// with one sentence dropped: near-identical under every policy.
	for _, tc := range []struct {
		name, text, policy string
		dup                bool
		rel                string
	}{
		{"page", page, "copy", true, "stored_is_excerpt"},
		{"page", page, "", false, "stored_is_excerpt"},
		{"page", page, "near_identical", false, "stored_is_excerpt"},
		{"teaser", teaser, "", true, "near_identical"},
		{"teaser", teaser, "near_identical", true, "near_identical"},
		{"one shared sentence", shares, "copy", false, ""},
	} {
		var c checkResponse
		body := map[string]any{"text": tc.text}
		if tc.policy != "" {
			body["policy"] = tc.policy
		}
		e.do("POST", "/v1/check", body).json(t, &c)
		hits := c.Related
		if tc.dup {
			hits = c.Duplicates
		}
		if c.Duplicate != tc.dup || tc.rel != "" && (len(hits) != 1 || hits[0].ID != "orig" || hits[0].Relation != tc.rel) || tc.rel == "" && len(c.Duplicates)+len(c.Related) != 0 {
			t.Errorf("%s, policy %q: %+v, want duplicate %v, relation %q", tc.name, tc.policy, c, tc.dup, tc.rel)
		}
	}
}
