package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// TestHBaseWriterLease: two servers on an index whose writers take turns
// (--hbase-writer-lease). The lease holder stores exactly one of each
// round's racing near-copies; the other answers its inserts 503 not-writer
// with Retry-After, naming the holder, and answers checks, which find the
// holder's documents. Once the holder stops, the other takes the lease
// over without a restart and decides against what the first one stored.
func TestHBaseWriterLease(t *testing.T) {
	zk := hbasetest.ZK(t)
	ns := hbaseNamespace(t, zk)
	a := startHBaseServerWith(t, zk, ns, true, func(c *Config) { c.HBaseWriterLease = true })
	b := startHBaseServer(t, zk, ns, false)
	text := readText(t, "en_article.txt")
	ready := func(s *runServer, query string) (int, map[string]string) {
		t.Helper()
		st, out := s.do(t, "GET", "/readyz"+query, nil)
		var m map[string]string
		_ = json.Unmarshal(out, &m)
		return st, m
	}
	if st, m := ready(a, "?writer=1"); st != 200 || m["writer"] != "holder" {
		t.Fatalf("the holder's /readyz?writer=1: %d %v", st, m)
	}
	if st, m := ready(b, ""); st != 200 || m["writer"] != "standby" {
		t.Fatalf("the other server's /readyz: %d %v", st, m)
	}
	if st, m := ready(b, "?writer=1"); st != http.StatusServiceUnavailable || m["kind"] != "not-writer" {
		t.Fatalf("the other server's /readyz?writer=1: %d %v", st, m)
	}
	for s, want := range map[*runServer]string{a: "simdex_writer_lease_held 1\n", b: "simdex_writer_lease_held 0\n"} {
		if st, out := s.do(t, "GET", "/metrics", nil); st != 200 || !strings.Contains(string(out), want) {
			t.Fatalf("/metrics: %d, want a line %q", st, want)
		}
	}
	for round := range 5 {
		body := fmt.Sprintf("%s Round %d.", text, round)
		var res [2]insertResponse
		var codes [2]int
		for i, s := range []*runServer{a, b} {
			st, hdr, out := apiCallHeader(t, s.base, "", "POST", "/v1/documents", map[string]any{"id": fmt.Sprintf("r%d-%d", round, i), "text": body, "mode": "insert-if-unique"})
			codes[i] = st
			if i == 0 {
				if err := json.Unmarshal(out, &res[i]); err != nil || (st != 200 && st != 201) {
					t.Fatalf("round %d, the holder: %d %s", round, st, out)
				}
				continue
			}
			var pr problem
			if err := json.Unmarshal(out, &pr); err != nil || st != http.StatusServiceUnavailable || pr.Kind != "not-writer" || hdr.Get("Retry-After") == "" || !strings.Contains(pr.Detail, "holds the writer lease") {
				t.Fatalf("round %d, the other server: %d (Retry-After %q) %s", round, st, hdr.Get("Retry-After"), out)
			}
		}
		if !res[0].Stored {
			t.Fatalf("round %d: the holder did not store the first copy: %v %+v", round, codes, res[0])
		}
		var chk checkResponse
		st, out := b.do(t, "POST", "/v1/check", map[string]any{"text": body})
		if err := json.Unmarshal(out, &chk); err != nil || st != 200 || len(chk.Duplicates) == 0 || chk.Duplicates[0].ID != fmt.Sprintf("r%d-0", round) {
			t.Fatalf("round %d: check on the other server: %d %s", round, st, out)
		}
		if st, out := a.do(t, "DELETE", fmt.Sprintf("/v1/documents/r%d-0", round), nil); st != http.StatusNoContent {
			t.Fatalf("delete: %d %s", st, out)
		}
	}
	if st, out := a.do(t, "POST", "/v1/documents", map[string]any{"id": "kept", "text": text, "mode": "insert-if-unique"}); st != 201 {
		t.Fatalf("insert before the holder stops: %d %s", st, out)
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, out := b.do(t, "POST", "/v1/documents", map[string]any{"id": "copy", "text": text, "mode": "insert-if-unique"})
		if st == 200 {
			var r insertResponse
			if err := json.Unmarshal(out, &r); err != nil || r.Stored || r.Original == nil || r.Original.ID != "kept" {
				t.Fatalf("after the takeover, a copy of the first server's document: %s", out)
			}
			if st, m := ready(b, "?writer=1"); st != 200 || m["writer"] != "holder" {
				t.Fatalf("the new holder's /readyz?writer=1: %d %v", st, m)
			}
			break
		}
		if st != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("the writer lease was not taken over after its holder stopped: %d %s", st, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
