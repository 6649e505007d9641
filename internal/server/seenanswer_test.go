package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/simdex/simdex/seen"
)

// keptIndexes is the reference for what appendFilterForm writes as
// "kept_indexes": the positions not named by Dropped (in candidate order),
// up to len(Kept)+len(Dropped).
func keptIndexes(r seen.FilterResult) []int {
	out := []int{}
	n, next := len(r.Kept)+len(r.Dropped), 0
	for i := 0; i < n; i++ {
		if next < len(r.Dropped) && r.Dropped[next].Index == i {
			next++
			continue
		}
		out = append(out, i)
	}
	return out
}

// referenceForm is the response struct of a filter answer in form, for
// encoding/json to encode.
func referenceForm(user string, r seen.FilterResult, form answerForm) any {
	switch form {
	case answerKept:
		return seenFilterKeptResponse{User: user, Kept: r.Kept, UnknownDocIDs: r.UnknownDocs}
	case answerIndexes:
		return seenFilterIndexesResponse{User: user, KeptIndexes: keptIndexes(r), UnknownDocIDs: r.UnknownDocs}
	}
	return filterResponse(user, r)
}

// TestSeenFilterAnswerForms: the "answer" field of a filter, single-user
// and batch, over real HTTP: absent and "full" answer exactly as before
// (the full object), "kept" only the kept ids, "indexes" only the kept
// candidates' positions; unknown document ids of a near filter are in
// every form; an unknown form is a 400 naming the field. Each answer is
// compared byte for byte with encoding/json's encoding of the expected
// response struct, and goes out with its Content-Length.
func TestSeenFilterAnswerForms(t *testing.T) {
	e := newSeenEnv(t, nil)
	user := "forms-reader"
	var items []map[string]any
	for j := range 40 {
		if j%3 == 0 {
			items = append(items, map[string]any{"id": fmt.Sprintf("it-%02d", j)})
		}
	}
	items = append(items, map[string]any{"id": "it-fp", "fingerprint": "00000000000000ff"})
	if r := e.do("POST", "/v1/users/"+user+"/seen", map[string]any{"items": items}); r.status != http.StatusOK {
		t.Fatalf("mark: %d %s", r.status, r.body)
	}
	ids := []string{"it-00", "it-01", "it-02", "it-03", "it-<&>", "it-39", "it-38", "it-06", "new"}
	// The expected answer, built from the marks (every third id is seen).
	want := seen.FilterResult{Kept: []string{}}
	for k, id := range ids {
		n, err := strconv.Atoi(id[3:])
		if err == nil && n%3 == 0 {
			want.Dropped = append(want.Dropped, seen.Dropped{Index: k, ID: id, Reason: seen.ReasonSeen})
		} else {
			want.Kept = append(want.Kept, id)
		}
	}
	allSeen := seen.FilterResult{Kept: []string{}, Dropped: []seen.Dropped{{Index: 0, ID: "it-00", Reason: seen.ReasonSeen}, {Index: 1, ID: "it-03", Reason: seen.ReasonSeen}}}
	nearUnknown := seen.FilterResult{Kept: []string{"x1", "x3"}, Dropped: []seen.Dropped{{Index: 1, ID: "x2", Reason: seen.ReasonNear, Distance: 1}}, UnknownDocs: []string{"no-such-doc"}}
	for _, tc := range []struct {
		name   string
		answer any // nil: field absent
		form   answerForm
		bad    bool
	}{
		{"absent", nil, answerFull, false},
		{"full", "full", answerFull, false},
		{"kept", "kept", answerKept, false},
		{"indexes", "indexes", answerIndexes, false},
		{"unknown", "bitmap", 0, true},
		{"case", "Kept", 0, true},
		{"empty", "", answerFull, false},
		{"not a string", 1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := func(ids []string, extra map[string]any) map[string]any {
				m := map[string]any{"ids": ids}
				if tc.answer != nil {
					m["answer"] = tc.answer
				}
				for k, v := range extra {
					delete(m, "ids")
					m[k] = v
				}
				return m
			}
			nearBody := body(nil, map[string]any{"candidates": []map[string]any{{"id": "x1", "doc_id": "no-such-doc"}, {"id": "x2", "fingerprint": "00000000000000fe"}, {"id": "x3"}}, "near": true})
			single := []struct {
				body map[string]any
				want seen.FilterResult
			}{{body(ids, nil), want}, {body([]string{"it-00", "it-03"}, nil), allSeen}, {nearBody, nearUnknown}}
			for i, s := range single {
				r := e.do("POST", "/v1/users/"+user+"/seen/filter", s.body)
				if tc.bad {
					if r.status != http.StatusBadRequest {
						t.Fatalf("single %d: %d %s, want 400", i, r.status, r.body)
					}
					if p := r.problem(t); p.Kind != "invalid-field" && p.Kind != "unknown-field" || !bytes.Contains(r.body, []byte("answer")) {
						t.Fatalf("single %d: problem %s does not name the answer field", i, r.body)
					}
					continue
				}
				wantBody := encodeReference(t, referenceForm(user, s.want, tc.form))
				if r.status != http.StatusOK || !bytes.Equal(r.body, wantBody) {
					t.Fatalf("single %d: %d\ngot  %s\nwant %s", i, r.status, r.body, wantBody)
				}
				if cl := r.header.Get("Content-Length"); cl != strconv.Itoa(len(r.body)) {
					t.Fatalf("single %d: Content-Length %q for %d bytes", i, cl, len(r.body))
				}
			}
			// Batch: this user in the case's form, a second user (nothing
			// seen) always in the full form.
			u1 := body(ids, nil)
			u1["user"] = user
			batch := map[string]any{"users": []map[string]any{u1, {"user": "forms-nobody", "ids": []string{"a", "b"}}}}
			r := e.do("POST", "/v1/seen/filter", batch)
			if tc.bad {
				if r.status != http.StatusBadRequest {
					t.Fatalf("batch: %d %s, want 400", r.status, r.body)
				}
				return
			}
			var ref bytes.Buffer
			if err := json.NewEncoder(&ref).Encode(map[string]any{"results": []any{
				referenceForm(user, want, tc.form),
				referenceForm("forms-nobody", seen.FilterResult{Kept: []string{"a", "b"}}, answerFull),
			}}); err != nil {
				t.Fatal(err)
			}
			if r.status != http.StatusOK || !bytes.Equal(r.body, ref.Bytes()) {
				t.Fatalf("batch: %d\ngot  %s\nwant %s", r.status, r.body, ref.Bytes())
			}
		})
	}
}

// TestParseAnswer: the accepted names and the error of any other.
func TestParseAnswer(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want answerForm
		ok   bool
	}{
		{"", answerFull, true}, {"full", answerFull, true}, {"kept", answerKept, true}, {"indexes", answerIndexes, true},
		{"index", 0, false}, {"FULL", 0, false}, {" kept", 0, false},
	} {
		got, err := parseAnswer(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parseAnswer(%q) = %v, %v", tc.in, got, err)
		}
	}
}
