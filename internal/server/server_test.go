package server

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func readText(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lightEdit changes one sentence's worth of text, the way a republished copy
// differs from its source.
func lightEdit(s string) string {
	if strings.Contains(s, "。") {
		// Recipe 3 drops the trailing sign-off line; the word change is
		// the edit (2 bits from the original).
		return strings.Replace(s, "专家建议", "专家们建议", 1) + "（记者 王明）"
	}
	return strings.Replace(s, "Critics on the council", "Some critics on the council", 1) + " Reporting by staff."
}

func TestDocumentLifecycle(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		e := newStoreEnv(t, store, "", nil)
		for _, name := range []string{"zh_article.txt", "en_article.txt"} {
			t.Run(name, func(t *testing.T) {
				text := readText(t, name)
				id := "news/" + name
				when := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)

				r := e.do("POST", "/v1/documents", map[string]any{"id": id, "title": "Library branches", "text": text, "time": when, "attrs": map[string]string{"source": "wire"}})
				if r.status != http.StatusCreated {
					t.Fatalf("insert: %d %s", r.status, r.body)
				}
				var ins insertResponse
				r.json(t, &ins)
				if !ins.Stored || ins.Replaced || ins.ID != id {
					t.Fatalf("insert: %+v", ins)
				}

				// The same text is an exact duplicate at distance 0.
				r = e.do("POST", "/v1/check", map[string]any{"title": "Library branches", "text": text})
				var chk checkResponse
				r.json(t, &chk)
				if r.status != 200 || !chk.Duplicate || !chk.ExactDuplicate || len(chk.Duplicates) != 1 || chk.Duplicates[0].ID != id || chk.Duplicates[0].Distance != 0 || !chk.Duplicates[0].Exact {
					t.Fatalf("check same text: %d %+v", r.status, chk)
				}
				if chk.Fingerprint != ins.Fingerprint {
					t.Fatalf("check fingerprint %s != insert fingerprint %s", chk.Fingerprint, ins.Fingerprint)
				}
				if !chk.Duplicates[0].Time.Equal(when) {
					t.Fatalf("time %v, want %v", chk.Duplicates[0].Time, when)
				}

				// A lightly edited copy is a near-duplicate, not exact.
				edited := lightEdit(text)
				r = e.do("POST", "/v1/check", map[string]any{"text": edited})
				chk = checkResponse{}
				r.json(t, &chk)
				if !chk.Duplicate || chk.ExactDuplicate || len(chk.Duplicates) != 1 || chk.Duplicates[0].ID != id || chk.Duplicates[0].Distance == 0 {
					t.Fatalf("check edited text: %+v", chk)
				}

				// By fingerprint, too.
				r = e.do("POST", "/v1/check", map[string]any{"fingerprint": ins.Fingerprint, "k": 0})
				chk = checkResponse{}
				r.json(t, &chk)
				if len(chk.Duplicates) != 1 || chk.Duplicates[0].ID != id || chk.K != 0 {
					t.Fatalf("check by fingerprint: %+v", chk)
				}

				// insert-if-unique of the edited copy is refused and names the original.
				r = e.do("POST", "/v1/documents", map[string]any{"id": id + "-copy", "text": edited, "mode": "insert-if-unique"})
				var dup insertResponse
				r.json(t, &dup)
				if r.status != http.StatusOK || dup.Stored || dup.DuplicateOf != id || dup.Original == nil {
					t.Fatalf("insert-if-unique of a copy: %d %+v", r.status, dup)
				}
				if g := e.do("GET", "/v1/documents/"+id+"-copy", nil); g.status != http.StatusNotFound {
					t.Fatalf("refused copy was stored: %d %s", g.status, g.body)
				}

				// Get returns what was stored.
				r = e.do("GET", "/v1/documents/"+id, nil)
				var doc documentResponse
				r.json(t, &doc)
				if r.status != 200 || doc.ID != id || doc.Fingerprint != ins.Fingerprint || doc.Attrs["source"] != "wire" || !doc.Time.Equal(when) {
					t.Fatalf("get: %d %+v", r.status, doc)
				}

				// Delete, then nothing is found and get is 404.
				if r = e.do("DELETE", "/v1/documents/"+id, nil); r.status != http.StatusNoContent {
					t.Fatalf("delete: %d %s", r.status, r.body)
				}
				r = e.do("POST", "/v1/check", map[string]any{"text": text})
				chk = checkResponse{}
				r.json(t, &chk)
				if chk.Duplicate || len(chk.Duplicates) != 0 {
					t.Fatalf("check after delete: %+v", chk)
				}
				if r = e.do("GET", "/v1/documents/"+id, nil); r.status != http.StatusNotFound {
					t.Fatalf("get after delete: %d", r.status)
				}
				if p := e.do("DELETE", "/v1/documents/"+id, nil).problem(t); p.Kind != "not-found" {
					t.Fatalf("second delete: %+v", p)
				}
			})
		}
	})
}

func TestRestartKeepsDocuments(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		dir := newStoreDir(t, store)
		e := newStoreEnv(t, store, dir, nil)
		text := readText(t, "zh_article.txt")
		if r := e.do("POST", "/v1/documents", map[string]any{"id": "a1", "text": text}); r.status != http.StatusCreated {
			t.Fatalf("insert: %d %s", r.status, r.body)
		}
		e.close()

		e2 := newStoreEnv(t, store, dir, nil)
		e2.checkFinds(text, "a1", "after restart")
	})
}

func TestReplaceDocument(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		e := newStoreEnv(t, store, "", nil)
		zh, en := readText(t, "zh_article.txt"), readText(t, "en_article.txt")
		e.do("POST", "/v1/documents", map[string]any{"id": "x", "text": zh})
		r := e.do("POST", "/v1/documents", map[string]any{"id": "x", "text": en})
		var ins insertResponse
		r.json(t, &ins)
		if !ins.Stored || !ins.Replaced {
			t.Fatalf("re-insert: %+v", ins)
		}
		var chk checkResponse
		e.do("POST", "/v1/check", map[string]any{"text": zh}).json(t, &chk)
		if len(chk.Duplicates) != 0 {
			t.Fatalf("old text still found: %+v", chk)
		}
		e.checkFinds(en, "x", "new text not found")
	})
}

func TestBatch(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		e := newStoreEnv(t, store, "", nil)
		zh, en := readText(t, "zh_article.txt"), readText(t, "en_article.txt")
		r := e.do("POST", "/v1/documents/batch", map[string]any{
			"mode": "insert-if-unique",
			"items": []map[string]any{
				{"id": "zh", "text": zh},
				{"id": "en", "text": en},
				{"id": "", "text": en},                                 // missing id
				{"id": "bad", "fingerprint": "xyz"},                    // bad fingerprint
				{"id": "fp", "fingerprint": "0123456789abcdef"},        // bare fingerprint
				{"id": "blank", "text": "  \n "},                       // empty after normalization
				{"id": strings.Repeat("i", 300), "fingerprint": "0x1"}, // id too long
			},
		})
		var br batchInsertResponse
		r.json(t, &br)
		if r.status != 200 || len(br.Results) != 7 {
			t.Fatalf("batch insert: %d %s", r.status, r.body)
		}
		for _, i := range []int{0, 1, 4} {
			if br.Results[i] == nil || !br.Results[i].Stored {
				t.Errorf("item %d not stored: %+v", i, br.Results[i])
			}
		}
		wantErr := map[int]string{2: "invalid-field", 3: "bad-fingerprint", 5: "empty-document", 6: "bad-id"}
		if len(br.Errors) != len(wantErr) {
			t.Fatalf("errors: %+v", br.Errors)
		}
		for _, ie := range br.Errors {
			if wantErr[ie.Index] != ie.Error.Kind || br.Results[ie.Index] != nil {
				t.Errorf("item %d: error %+v, want kind %q", ie.Index, ie.Error, wantErr[ie.Index])
			}
		}

		r = e.do("POST", "/v1/check/batch", map[string]any{
			"items": []map[string]any{{"text": lightEdit(zh)}, {"text": en}, {"fingerprint": "nope"}, {"fingerprint": "0123456789abcdef"}},
			"k":     3,
		})
		var bc batchCheckResponse
		r.json(t, &bc)
		if r.status != 200 || len(bc.Results) != 4 || len(bc.Errors) != 1 || bc.Errors[0].Index != 2 {
			t.Fatalf("batch check: %d %s", r.status, r.body)
		}
		if h := bc.Results[0].Duplicates; len(h) != 1 || h[0].ID != "zh" || bc.Results[0].ExactDuplicate {
			t.Errorf("item 0: %+v", bc.Results[0])
		}
		if h := bc.Results[1].Duplicates; len(h) != 1 || h[0].ID != "en" || !bc.Results[1].ExactDuplicate {
			t.Errorf("item 1: %+v", bc.Results[1])
		}
		if h := bc.Results[3].Duplicates; len(h) != 1 || h[0].ID != "fp" || h[0].Distance != 0 {
			t.Errorf("item 3: %+v", bc.Results[3])
		}
	})
}

func TestBadInput(t *testing.T) {
	e := newEnv(t, "", func(c *Config) { c.MaxBodyBytes = 64 << 10; c.MaxBatch = 3 })
	en := readText(t, "en_article.txt")
	tests := []problemCase{
		{"malformed json", "POST", "/v1/check", `{"text": "abc"`, 400, "malformed-json"},
		{"not an object", "POST", "/v1/check", `[1,2]`, 400, "invalid-field"},
		{"two values", "POST", "/v1/check", `{"text":"a"} {"text":"b"}`, 400, "malformed-json"},
		{"empty body", "POST", "/v1/check", ``, 400, "malformed-json"},
		{"unknown field", "POST", "/v1/check", `{"txt": "abc"}`, 400, "unknown-field"},
		{"wrong type", "POST", "/v1/check", `{"text": 5}`, 400, "invalid-field"},
		{"invalid utf-8", "POST", "/v1/check", "{\"text\": \"caf\xe9 au lait\"}", 400, "invalid-utf8"},
		{"missing text", "POST", "/v1/check", `{}`, 400, "invalid-field"},
		{"empty text", "POST", "/v1/check", `{"text": "   "}`, 422, "empty-document"},
		{"markup only", "POST", "/v1/check", `{"text": "<div><br/></div>"}`, 422, "empty-document"},
		{"bad fingerprint", "POST", "/v1/check", `{"fingerprint": "123456789012345678901"}`, 400, "bad-fingerprint"},
		{"text and fingerprint", "POST", "/v1/check", `{"fingerprint": "0x1", "text": "abc"}`, 400, "invalid-field"},
		{"k too big", "POST", "/v1/check", `{"fingerprint": "0x1", "k": 4}`, 400, "k-out-of-range"},
		{"k negative", "POST", "/v1/check", `{"fingerprint": "0x1", "k": -1}`, 400, "k-out-of-range"},
		{"limit zero", "POST", "/v1/check", `{"fingerprint": "0x1", "limit": 0}`, 400, "invalid-field"},
		{"bad time", "POST", "/v1/check", `{"fingerprint": "0x1", "since": "yesterday"}`, 400, "invalid-field"},
		{"bad lang", "POST", "/v1/check", `{"text": "abc", "lang": "fr"}`, 400, "invalid-field"},
		{"huge body", "POST", "/v1/check", `{"text": "` + strings.Repeat("a", 70<<10) + `"}`, 413, "body-too-large"},
		{"missing id", "POST", "/v1/documents", `{"fingerprint": "0x1"}`, 400, "invalid-field"},
		{"id too long", "POST", "/v1/documents", `{"id": "` + strings.Repeat("x", 257) + `", "fingerprint": "0x1"}`, 400, "bad-id"},
		{"id with control char", "POST", "/v1/documents", `{"id": "a\u0001b", "fingerprint": "0x1"}`, 400, "bad-id"},
		{"bad mode", "POST", "/v1/documents", `{"id": "a", "fingerprint": "0x1", "mode": "upsert"}`, 400, "invalid-field"},
		{"too many attrs", "POST", "/v1/documents", map[string]any{"id": "a", "fingerprint": "0x1", "attrs": manyAttrs(65)}, 400, "invalid-field"},
		{"empty batch", "POST", "/v1/check/batch", `{"items": []}`, 400, "invalid-field"},
		{"batch too big", "POST", "/v1/check/batch", map[string]any{"items": []map[string]string{{"fingerprint": "1"}, {"fingerprint": "2"}, {"fingerprint": "3"}, {"fingerprint": "4"}}}, 400, "invalid-field"},
		{"unknown document", "GET", "/v1/documents/nope", nil, 404, "not-found"},
		{"empty id in path", "GET", "/v1/documents/", nil, 400, "bad-id"},
		{"unknown route", "GET", "/v2/check", nil, 404, "no-route"},
		{"wrong method", "GET", "/v1/check", nil, 405, "method-not-allowed"},
		{"fingerprint without text", "POST", "/v1/fingerprint", `{"title": "x"}`, 400, "invalid-field"},
	}
	checkProblems(t, e, tests)
	// Nothing above was stored, and the server still works.
	var st statsResponse
	e.do("GET", "/v1/stats", nil).json(t, &st)
	if st.Documents != 0 {
		t.Fatalf("bad requests stored documents: %+v", st)
	}
	if r := e.do("POST", "/v1/documents", map[string]any{"id": "ok", "text": en}); r.status != 201 {
		t.Fatalf("server broken after bad input: %d %s", r.status, r.body)
	}
}

func manyAttrs(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprint("k", i)] = "v"
	}
	return m
}

func TestAuth(t *testing.T) {
	const key = "0123456789abcdef-test-key"
	e := newEnv(t, "", func(c *Config) { c.APIKeys = []string{key} })
	en := readText(t, "en_article.txt")
	r := e.do("POST", "/v1/documents", map[string]any{"id": "a", "text": en})
	if r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no key: %d %v", r.status, r.header)
	}
	e.apiKey = "wrong-key-wrong-key"
	if r = e.do("DELETE", "/v1/documents/a", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("wrong key: %d", r.status)
	}
	e.apiKey = ""
	if r = e.do("POST", "/v1/check", map[string]any{"text": en}); r.status != 200 {
		t.Fatalf("reads need no key: %d %s", r.status, r.body)
	}
	e.apiKey = key
	if r = e.do("POST", "/v1/documents", map[string]any{"id": "a", "text": en}); r.status != http.StatusCreated {
		t.Fatalf("with key: %d %s", r.status, r.body)
	}
}

// TestConcurrentInsertIfUnique: many clients publish the same article (each
// with its own id, lightly varied) at once; exactly one is stored as the
// original and every other answer names it.
func TestConcurrentInsertIfUnique(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		e := newStoreEnv(t, store, "", nil)
		base := readText(t, "zh_article.txt")
		for round := range 5 {
			const clients = 12
			var wg sync.WaitGroup
			results := make([]insertResponse, clients)
			statuses := make([]int, clients)
			for i := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					text := base
					if i%2 == 1 {
						text = lightEdit(base)
					}
					r := e.do("POST", "/v1/documents", map[string]any{"id": fmt.Sprintf("r%d-c%d", round, i), "text": text + fmt.Sprintf(" 第%d轮", round*100), "mode": "insert-if-unique"})
					statuses[i] = r.status
					if err := jsonUnmarshal(r.body, &results[i]); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			var originals []string
			for i, res := range results {
				if res.Stored {
					if statuses[i] != http.StatusCreated {
						t.Errorf("stored with status %d", statuses[i])
					}
					originals = append(originals, res.ID)
				}
			}
			if len(originals) != 1 {
				t.Fatalf("round %d: %d originals %v, want exactly 1", round, len(originals), originals)
			}
			for _, res := range results {
				if !res.Stored && res.DuplicateOf != originals[0] {
					t.Fatalf("round %d: %s says duplicate of %q, original is %q", round, res.ID, res.DuplicateOf, originals[0])
				}
			}
			// Clean up so the next round starts empty.
			if r := e.do("DELETE", "/v1/documents/"+originals[0], nil); r.status != http.StatusNoContent {
				t.Fatal(r.status)
			}
		}
	})
}

func TestFingerprintAndStats(t *testing.T) {
	e := newEnv(t, "", nil)
	zh := readText(t, "zh_article.txt")
	var fr fingerprintResponse
	r := e.do("POST", "/v1/fingerprint", map[string]any{"title": "图书馆分馆", "text": zh})
	r.json(t, &fr)
	if r.status != 200 || fr.Features < 10 || len(fr.TopFeatures) == 0 || len(fr.Fingerprint) != 16 || fr.TitleFingerprint == "" {
		t.Fatalf("fingerprint: %d %+v", r.status, fr)
	}
	if !strings.Contains(fmt.Sprint(fr.TopFeatures), "图书馆") {
		t.Errorf("top features of a library article lack 图书馆: %+v", fr.TopFeatures)
	}
	e.do("POST", "/v1/documents", map[string]any{"id": "s1", "text": zh})
	var st statsResponse
	r = e.do("GET", "/v1/stats", nil)
	r.json(t, &st)
	if st.Documents != 1 || st.Layout.B != 4 || st.Layout.K != 3 || st.Layout.Tables != 4 {
		t.Fatalf("stats: %+v", st)
	}
	// One document: 4 index rows, each holding its one fingerprint.
	if len(st.FullestRows) != 4 || st.FullestRows[0].Fingerprints != 1 || st.IndexRows != 4 {
		t.Fatalf("stats rows: %+v", st)
	}
	if r := e.do("GET", "/v1/stats?rows=abc", nil); r.status != 400 {
		t.Fatalf("stats?rows=abc: %d", r.status)
	}
	r = e.do("GET", "/v1/stats?rows=0", nil)
	st = statsResponse{}
	r.json(t, &st)
	if r.status != 200 || len(st.FullestRows) != 0 || st.Documents != 1 {
		t.Fatalf("stats?rows=0: %d %+v", r.status, st)
	}
	if r := e.do("GET", "/healthz", nil); r.status != 200 {
		t.Fatal(r.status)
	}
	if r := e.do("GET", "/readyz", nil); r.status != 200 {
		t.Fatal(r.status, string(r.body))
	}
	m := e.do("GET", "/metrics", nil)
	for _, want := range []string{"simdex_http_request_duration_seconds_bucket{code=\"201\",method=\"POST\",route=\"/v1/documents\"", "simdex_lookup_candidates", "simdex_fingerprint_duration_seconds"} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
