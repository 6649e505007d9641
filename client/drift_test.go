package client_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/simdex/simdex/client"
)

// operations maps every operation of the server's OpenAPI document to the
// Client method that calls it ("": deliberately none, the browser page).
// TestDrift compares it with the document the live server serves and with
// the client's own route table, so an operation added to (or changed in)
// the server without a client method fails the test.
var operations = map[string]struct{ method, path, goMethod string }{
	"check":           {"POST", "/v1/check", "Check"},
	"checkBatch":      {"POST", "/v1/check/batch", "CheckBatch"},
	"insertDocument":  {"POST", "/v1/documents", "InsertDocument"},
	"insertDocuments": {"POST", "/v1/documents/batch", "InsertDocuments"},
	"getDocument":     {"GET", "/v1/documents/{id}", "GetDocument"},
	"deleteDocument":  {"DELETE", "/v1/documents/{id}", "DeleteDocument"},
	"fingerprint":     {"POST", "/v1/fingerprint", "Fingerprint"},
	"explain":         {"POST", "/v1/explain", "Explain"},
	"stats":           {"GET", "/v1/stats", "Stats"},
	"healthz":         {"GET", "/healthz", "Health"},
	"readyz":          {"GET", "/readyz", "Ready"},
	"metrics":         {"GET", "/metrics", "Metrics"},
	"openapi":         {"GET", "/openapi.json", "OpenAPI"},
	"seenUser":        {"GET", "/v1/users/{user}/seen", "SeenUser"},
	"seenMark":        {"POST", "/v1/users/{user}/seen", "SeenMark"},
	"seenForget":      {"DELETE", "/v1/users/{user}/seen", "SeenForget"},
	"seenCheck":       {"POST", "/v1/users/{user}/seen/check", "SeenCheck"},
	"seenFilter":      {"POST", "/v1/users/{user}/seen/filter", "SeenFilter"},
	"seenDelete":      {"DELETE", "/v1/users/{user}/seen/items/{item}", "SeenDelete"},
	"seenMarkBatch":   {"POST", "/v1/seen/mark", "SeenMarkBatch"},
	"seenCheckBatch":  {"POST", "/v1/seen/check", "SeenCheckBatch"},
	"seenFilterBatch": {"POST", "/v1/seen/filter", "SeenFilterBatch"},
	// The editor's page and its script and style: HTML for browsers.
	"page":     {"GET", "/", ""},
	"pageFile": {"GET", "/ui/{file}", ""},
}

func TestDrift(t *testing.T) {
	c, _ := newClient(t, "")
	raw, err := c.OpenAPI(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	inDoc := map[string]bool{}
	for path, item := range doc.Paths {
		for method, opRaw := range item {
			if method == "parameters" || strings.HasPrefix(method, "x-") {
				continue
			}
			var op struct {
				OperationID string `json:"operationId"`
			}
			if err := json.Unmarshal(opRaw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			method = strings.ToUpper(method)
			want, ok := operations[op.OperationID]
			switch {
			case !ok:
				t.Errorf("the server's %s %s (operationId %q) has no client method", method, path, op.OperationID)
			case want.method != method || want.path != path:
				t.Errorf("operation %q is %s %s in the document, %s %s in the client", op.OperationID, method, path, want.method, want.path)
			}
			inDoc[op.OperationID] = true
		}
	}
	for id := range operations {
		if !inDoc[id] {
			t.Errorf("the client calls operation %q, which the server's document does not have", id)
		}
	}

	// The table is the client's route table, and each method exists.
	routes := map[string]client.Route{}
	for _, r := range client.Routes() {
		routes[r.Op] = r
	}
	ct := reflect.TypeOf(c)
	methods := 0
	for id, want := range operations {
		if want.goMethod == "" {
			if r, ok := routes[id]; ok {
				t.Errorf("operation %q has a client route %+v but no method in the table", id, r)
			}
			continue
		}
		methods++
		if r, ok := routes[id]; !ok || r.Method != want.method || r.Path != want.path {
			t.Errorf("operation %q: client route %+v, want %s %s", id, r, want.method, want.path)
		}
		if _, ok := ct.MethodByName(want.goMethod); !ok {
			t.Errorf("operation %q: no method Client.%s", id, want.goMethod)
		}
	}
	if len(routes) != methods {
		t.Errorf("the client has %d routes, the table %d methods", len(routes), methods)
	}

	// Every call takes a context first.
	ctxType := reflect.TypeOf((*context.Context)(nil)).Elem()
	for i := 0; i < ct.NumMethod(); i++ {
		m := ct.Method(i)
		if m.Name == "BaseURL" {
			continue
		}
		if m.Type.NumIn() < 2 || m.Type.In(1) != ctxType {
			t.Errorf("Client.%s does not take a context.Context first", m.Name)
		}
	}
}

// TestDriftLimits: every maxItems of the document is the client's chunk
// size. The item lists of /v1/check/batch and /v1/documents/batch declare
// none; TestBatchLimitIsTheServers checks the server's limit on them.
func TestDriftLimits(t *testing.T) {
	c, _ := newClient(t, "")
	raw, err := c.OpenAPI(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var found []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if m, ok := v["maxItems"].(float64); ok {
				found = append(found, path)
				if int(m) != client.DefaultMaxBatch {
					t.Errorf("%s: maxItems %v, the client cuts at %d", path, m, client.DefaultMaxBatch)
				}
			}
			for k, x := range v {
				walk(path+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(path+"/"+strconv.Itoa(i), x)
			}
		}
	}
	walk("", doc)
	if len(found) == 0 {
		t.Fatal("the document declares no maxItems")
	}
	sort.Strings(found)
	for _, schema := range []string{"BatchCheckRequest", "BatchInsertRequest"} {
		declared := false
		for _, f := range found {
			declared = declared || strings.Contains(f, "/"+schema+"/")
		}
		if !declared {
			t.Logf("%s declares no maxItems for its items (the server's limit is %d)", schema, client.DefaultMaxBatch)
		}
	}
}
