package server

import (
	"net/http"
	"testing"
)

// TestLowInformationTextsAreDocuments: a text with too few content words
// for a feature set (a one-line quote of common words, a five-clause
// saying) is stored and matched near-exactly, on every route: the same
// quote posted twice is caught, a typo'd copy too, another quote is not,
// and the answers say that only near-exact matching applies.
func TestLowInformationTextsAreDocuments(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		e := newStoreEnv(t, store, "", nil)
		quote := "Something impossible is just something that no one has done yet."
		saying := "天下难事，必作于易；天下大事，必作于细。"
		var ins insertResponse
		r := e.do("POST", "/v1/documents", map[string]any{"id": "q1", "text": quote})
		r.json(t, &ins)
		if r.status != http.StatusCreated || !ins.Stored || ins.Matching != "near_exact" {
			t.Fatalf("insert of a low-information quote: %d %s", r.status, r.body)
		}
		if r := e.do("POST", "/v1/documents", map[string]any{"id": "s1", "text": saying}); r.status != http.StatusCreated {
			t.Fatalf("insert of a saying: %d %s", r.status, r.body)
		}
		for _, tc := range []struct {
			name, text string
			want       string // id of the duplicate, "" for none
		}{
			{"the same quote", quote, "q1"},
			{"the quote with a typo", "Something impossible is just somthing that no one has done yet.", "q1"},
			{"the quote restyled", "SOMETHING IMPOSSIBLE IS JUST SOMETHING THAT NO ONE HAS DONE YET!", "q1"},
			{"another quote", "Nothing is impossible for the one who does not have to do it himself.", ""},
			{"the saying", saying, "s1"},
			{"the saying in traditional characters", "天下難事，必作於易；天下大事，必作於細。", "s1"},
			{"another saying", "千里之行，始于足下；九层之台，起于累土。", ""},
		} {
			var c checkResponse
			r := e.do("POST", "/v1/check", map[string]any{"text": tc.text})
			r.json(t, &c)
			got := ""
			if len(c.Duplicates) > 0 {
				got = c.Duplicates[0].ID
			}
			if r.status != http.StatusOK || got != tc.want || len(c.Duplicates) > 1 {
				t.Errorf("%s: %d %s; want duplicate %q", tc.name, r.status, r.body, tc.want)
			}
			// Insert-if-unique answers the same.
			var in insertResponse
			e.do("POST", "/v1/documents", map[string]any{"id": "try", "text": tc.text, "mode": "insert-if-unique"}).json(t, &in)
			if in.Stored == (tc.want != "") || !in.Stored && in.DuplicateOf != tc.want {
				t.Errorf("%s: insert-if-unique stored %v, duplicate of %q; want %q", tc.name, in.Stored, in.DuplicateOf, tc.want)
			}
			if in.Stored {
				e.do("DELETE", "/v1/documents/try", nil)
			}
		}
	})
}
