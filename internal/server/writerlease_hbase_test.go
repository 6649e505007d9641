package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/internal/open"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/hbasestore"
)

// TestHBaseWriterLease: two servers on an index whose writers take turns
// (--hbase-writer-lease). The standby sends its index writes on to the
// lease holder (at the URL the holder advertised in the lease), so of each
// round's near-copies racing through both servers exactly one is stored
// and the other names it; the standby answers checks itself, which find
// the holder's documents. A write the standby was itself sent (a lease
// that moved between two servers' reads) is not sent on again: 503
// not-writer with Retry-After, naming the holder. Once the holder stops,
// the standby answers 503 not-writer until it takes the lease over,
// without a restart, and then decides against what the first one stored.
func TestHBaseWriterLease(t *testing.T) {
	zk := hbasetest.ZK(t)
	ns := hbaseNamespace(t, zk)
	a := startHBaseServerWith(t, zk, ns, true, func(c *Config) { c.HBaseWriterLease = true })
	b := startHBaseServerWith(t, zk, ns, false, func(c *Config) { c.MaxBodyBytes = 64 << 10 })
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
		var hdrs [2]http.Header
		var wg sync.WaitGroup
		for i, s := range []*runServer{a, b} {
			wg.Go(func() {
				st, hdr, out := apiCallHeader(t, s.base, "", "POST", "/v1/documents", map[string]any{"id": fmt.Sprintf("r%d-%d", round, i), "text": body, "mode": "insert-if-unique"})
				if err := json.Unmarshal(out, &res[i]); err != nil || (st != 200 && st != 201) {
					t.Errorf("round %d, server %d: %d %s", round, i, st, out)
				}
				hdrs[i] = hdr
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		if res[0].Stored == res[1].Stored {
			t.Fatalf("round %d: racing near-copies through both servers, want exactly one stored: %+v", round, res)
		}
		orig, other := 0, 1
		if res[1].Stored {
			orig, other = 1, 0
		}
		if res[other].Original == nil || res[other].Original.ID != fmt.Sprintf("r%d-%d", round, orig) {
			t.Fatalf("round %d: the copy not stored names %+v, want r%d-%d", round, res[other].Original, round, orig)
		}
		if w := hdrs[1].Get(headerWriter); w == "" {
			t.Fatalf("round %d: the standby's answer has no %s header: the write was not sent on", round, headerWriter)
		}
		if hdrs[0].Get(headerWriter) != "" || hdrs[1].Get(headerRequestID) == "" || len(hdrs[1].Values(headerRequestID)) != 1 {
			t.Fatalf("round %d: headers: holder %v, standby %v", round, hdrs[0], hdrs[1])
		}
		id := fmt.Sprintf("r%d-%d", round, orig)
		var chk checkResponse
		st, out := b.do(t, "POST", "/v1/check", map[string]any{"text": body})
		if err := json.Unmarshal(out, &chk); err != nil || st != 200 || len(chk.Duplicates) == 0 || chk.Duplicates[0].ID != id {
			t.Fatalf("round %d: check on the standby: %d %s", round, st, out)
		}
		if st, out := b.do(t, "DELETE", "/v1/documents/"+id, nil); st != http.StatusNoContent {
			t.Fatalf("delete through the standby: %d %s", st, out)
		}
		if st, _ := a.do(t, "GET", "/v1/documents/"+id, nil); st != http.StatusNotFound {
			t.Fatalf("round %d: %s still stored after its delete through the standby: %d", round, id, st)
		}
	}
	// A body over the standby's limit is refused as such, not as the
	// holder being unreachable.
	if st, out := b.do(t, "POST", "/v1/documents", map[string]any{"id": "huge", "text": strings.Repeat("word ", 20<<10)}); st != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over the standby's limit: %d %s", st, out)
	}
	// A write sent on once is not sent on again.
	req, err := http.NewRequest("POST", b.base+"/v1/documents", strings.NewReader(`{"id":"hop","text":"a second hop"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(headerForwardedBy, "http://127.0.0.1:1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var pr problem
	err = json.NewDecoder(resp.Body).Decode(&pr)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || pr.Kind != "not-writer" || resp.Header.Get("Retry-After") == "" || !strings.Contains(pr.Detail, "holds the writer lease") {
		t.Fatalf("a forwarded write reaching the standby: %d (Retry-After %q) %+v", resp.StatusCode, resp.Header.Get("Retry-After"), pr)
	}
	if st, out := b.do(t, "GET", "/metrics", nil); st != 200 || !strings.Contains(string(out), `simdex_writes_forwarded_total{outcome="answered"} 10`+"\n") {
		t.Fatalf("the standby's forwarded writes, want 10 answered: %d %s", st, grepLines(string(out), "simdex_writes_forwarded_total"))
	}
	raceWithGuest(t, zk, ns, a, b)
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
		var pr problem
		if err := json.Unmarshal(out, &pr); err != nil || st != http.StatusServiceUnavailable || pr.Kind != "not-writer" || time.Now().After(deadline) {
			t.Fatalf("the writer lease was not taken over after its holder stopped: %d %s", st, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// raceWithGuest: a guest of the writer lease (a bulk load's index) writes
// beside the servers of an index whose writers take turns: its
// insert-if-unique races one through the holder and one through the
// standby, by fingerprint, and of the three near-copies exactly one is
// stored; the servers' writes go on while it is registered.
func raceWithGuest(t *testing.T, zk, ns string, a, b *runServer) {
	t.Helper()
	ctx := context.Background()
	gix, err := open.Index(ctx, open.Store{Kind: "hbase", HBase: hbasestore.Config{ZooKeeper: []string{zk}, Namespace: ns}},
		kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, AdoptStored: true, NoCreate: true, LeaseGuest: true})
	if err != nil {
		t.Fatal(err)
	}
	defer gix.Close()
	for round := range 3 {
		fp := fingerprint.Fingerprint([]uint64{0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210, 0x0f1e_2d3c_4b5a_6978}[round]) // far apart
		ids := [3]string{fmt.Sprintf("g%d-guest", round), fmt.Sprintf("g%d-holder", round), fmt.Sprintf("g%d-standby", round)}
		var stored [3]bool
		var wg sync.WaitGroup
		wg.Go(func() {
			r, err := gix.Insert(ctx, kvindex.Document{ID: ids[0], Fingerprint: fp, Time: time.Now()}, kvindex.InsertIfUnique, 3)
			if err != nil {
				t.Errorf("round %d: the guest's insert: %v", round, err)
			}
			stored[0] = r.Stored
		})
		for i, s := range []*runServer{a, b} {
			wg.Go(func() {
				near := fingerprint.Fingerprint(uint64(fp) ^ 1<<uint(i))
				st, out := s.do(t, "POST", "/v1/documents", map[string]any{"id": ids[i+1], "fingerprint": near.String(), "mode": "insert-if-unique"})
				var res insertResponse
				if err := json.Unmarshal(out, &res); err != nil || (st != 200 && st != 201) {
					t.Errorf("round %d, %s: %d %s", round, ids[i+1], st, out)
				}
				stored[i+1] = res.Stored
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		n := 0
		for _, s := range stored {
			if s {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("round %d: near-copies racing through a guest, the holder and the standby: %d stored (%v), want exactly 1", round, n, stored)
		}
	}
}
