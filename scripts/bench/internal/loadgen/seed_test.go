package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSeed: seed sends the documents in batches of 1,000 through the batch
// endpoint with the API key, and fails on an item's error.
func TestSeed(t *testing.T) {
	var calls, items int
	failAt := -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/documents/batch" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var req struct {
			Items []struct{ ID, Fingerprint string }
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		calls++
		items += len(req.Items)
		res := make([]string, len(req.Items))
		for i, it := range req.Items {
			if len(it.Fingerprint) != 16 || !strings.HasPrefix(it.ID, "seed-") {
				http.Error(w, "bad item", http.StatusBadRequest)
				return
			}
			res[i] = fmt.Sprintf(`{"id":%q,"stored":true}`, it.ID)
		}
		errs := "[]"
		if failAt >= 0 {
			res[failAt] = "null"
			errs = fmt.Sprintf(`[{"index":%d,"error":{"kind":"invalid","title":"bad"}}]`, failAt)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"results":[%s],"errors":%s}`, strings.Join(res, ","), errs)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	if err := seed(context.Background(), config{addr: addr, seed: 2500, apiKey: "k"}); err != nil {
		t.Fatal(err)
	}
	if calls != 3 || items != 2500 {
		t.Fatalf("%d calls, %d items; want 3 calls, 2500 items", calls, items)
	}
	failAt = 3
	if err := seed(context.Background(), config{addr: addr, seed: 10, apiKey: "k"}); err == nil || !strings.Contains(err.Error(), "item 3") {
		t.Fatalf("an item's error: %v", err)
	}
}
