package server

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestOpenAPICoversRoutes: every registered route is documented and every
// documented operation is registered. Response bodies are checked against
// the document by every request the other tests send (testEnv.do).
func TestOpenAPICoversRoutes(t *testing.T) {
	openAPIRouter(t) // loads and validates the document
	srv, err := New(DefaultConfig(), &faultyIndex{}, sharedFingerprinter(t), nil, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{}
	for _, r := range srv.Routes() {
		path := r[1]
		if i := strings.Index(path, "*"); i >= 0 {
			path = path[:i] + "{" + path[i+1:] + "}"
		}
		// gin's :name segments are OpenAPI's {name}.
		segs := strings.Split(path, "/")
		for i, seg := range segs {
			if name, ok := strings.CutPrefix(seg, ":"); ok {
				segs[i] = "{" + name + "}"
			}
		}
		path = strings.Join(segs, "/")
		key := r[0] + " " + path
		registered[key] = true
		item := docT.Paths.Find(path)
		if item == nil || item.GetOperation(r[0]) == nil {
			t.Errorf("route %s is not in openapi.json", key)
		}
	}
	for path, item := range docT.Paths.Map() {
		for method := range item.Operations() {
			if !registered[method+" "+path] {
				t.Errorf("openapi.json documents %s %s, which the server does not serve", method, path)
			}
		}
	}
}
