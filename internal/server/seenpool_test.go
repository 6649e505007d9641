package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
)

// TestSeenFilterPooledAnswers: single-user filters of up to 1,000
// candidates, alternating between users with different seen sets and
// between list sizes, each followed by a check of the same ids, so that
// every pooled buffer of the handlers (body, id list, candidates, answer,
// response) is reused with stale contents: each answer must be exactly the
// expected one, and a large answer goes out with its Content-Length (gin's
// Data sets it) rather than chunked.
func TestSeenFilterPooledAnswers(t *testing.T) {
	e := newSeenEnv(t, nil)
	users := []string{"pool-a", "pool-b"}
	marked := map[string]map[string]bool{}
	for u, user := range users {
		marked[user] = map[string]bool{}
		var items []map[string]any
		for j := range 1000 {
			if j%(u+2) == 0 { // a: every 2nd item, b: every 3rd
				id := fmt.Sprintf("item-%04d", j)
				items = append(items, map[string]any{"id": id})
				marked[user][id] = true
			}
		}
		if r := e.do("POST", "/v1/users/"+user+"/seen", map[string]any{"items": items}); r.status != http.StatusOK {
			t.Fatalf("mark %s: %d %s", user, r.status, r.body)
		}
	}
	for round := range 14 {
		user := users[round%2]
		n := []int{1000, 7, 500, 1}[round%4]
		ids := make([]string, n)
		for k := range ids {
			ids[k] = fmt.Sprintf("item-%04d", (k*7+round)%1000)
		}
		if round >= 12 { // every candidate seen: "kept" is [], not null
			ids = []string{"item-0000", "item-0006"}
		}
		ids = slices.Compact(ids)
		body, _ := json.Marshal(map[string]any{"ids": ids})
		resp, err := e.http.Client().Post(e.http.URL+"/v1/users/"+user+"/seen/filter", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("round %d: %d %v %s", round, resp.StatusCode, err, raw)
		}
		if resp.ContentLength != int64(len(raw)) || len(resp.TransferEncoding) != 0 {
			t.Fatalf("round %d: Content-Length %d, transfer encoding %q, body of %d bytes", round, resp.ContentLength, resp.TransferEncoding, len(raw))
		}
		if round >= 12 && !bytes.Contains(raw, []byte(`"kept":[]`)) {
			t.Fatalf("round %d: all seen, want \"kept\":[]: %s", round, raw)
		}
		var got seenFilterResponse
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		want := seenFilterResponse{User: user, Kept: []string{}, Dropped: []seenDropped{}}
		for k, id := range ids {
			if marked[user][id] {
				want.Dropped = append(want.Dropped, seenDropped{Index: k, ID: id, Reason: "seen"})
			} else {
				want.Kept = append(want.Kept, id)
			}
		}
		if got.User != want.User || !slices.Equal(got.Kept, want.Kept) || !slices.EqualFunc(got.Dropped, want.Dropped, func(a, b seenDropped) bool {
			return a.Index == b.Index && a.ID == b.ID && a.Reason == b.Reason && a.Distance == nil
		}) {
			t.Fatalf("round %d (%s, %d ids): got %d kept / %d dropped, want %d / %d\n%s", round, user, len(ids), len(got.Kept), len(got.Dropped), len(want.Kept), len(want.Dropped), raw)
		}
		// The check route shares the pooled scratch (body, id list) with
		// the filter route: its answers must not see a previous body.
		r := e.do("POST", "/v1/users/"+user+"/seen/check", map[string]any{"ids": ids})
		var chk seenCheckResponse
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.body), &chk) != nil || chk.User != user || len(chk.Seen) != len(ids) {
			t.Fatalf("round %d check: %d %s", round, r.status, r.body)
		}
		for k, id := range ids {
			if chk.Seen[k] != marked[user][id] {
				t.Fatalf("round %d check: %q seen %v, want %v", round, id, chk.Seen[k], marked[user][id])
			}
		}
	}
}
