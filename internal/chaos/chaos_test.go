package chaos

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/schema"
)

// EnvEvents selects the events TestChaos runs, comma-separated, in order
// (default: all of allEvents).
const EnvEvents = "SIMDEX_CHAOS_EVENTS"

// EnvWriterLease, set to 1, runs TestChaos on an index whose writers take
// turns (the first server creates it with --hbase-writer-lease): the
// lease holder writes, the other sends its inserts on to it, and the bulk
// loads write as guests of the lease.
const EnvWriterLease = "SIMDEX_CHAOS_WRITER_LEASE"

// allEvents are the events in the order TestChaos runs them by default.
var allEvents = []string{"rs-kill", "move", "split-merge", "rolling-restart", "master-kill"}

// requestTimeout is the servers' --request-timeout: the longest a client
// waits for an answer (a 503 when HBase does not answer in time).
const requestTimeout = 5 * time.Second

// run is one TestChaos run: the cluster, the servers and the traffic of the
// event under way.
type run struct {
	c       *cluster
	servers []*server
	ns      string
	rnd     *rand.Rand
	// baseline goroutines of each server, idle, before the first event.
	baseline []int
	all      []*group
	// lease: the index's writers take turns (EnvWriterLease).
	lease bool
}

func (r *run) table(t string) string { return r.ns + ":" + t }

// TestChaos runs each selected event under insert-if-unique and check
// traffic from two servers and bulk loads (HFiles and puts, one after the
// other), and checks after each one what must survive it.
func TestChaos(t *testing.T) {
	c := openCluster(t)
	events := allEvents
	if e := os.Getenv(EnvEvents); e != "" {
		events = strings.Split(e, ",")
	}
	for _, e := range events {
		if _, ok := eventFuncs[e]; !ok {
			t.Fatalf("%s: unknown event %q (events: %v)", EnvEvents, e, allEvents)
		}
	}
	began := time.Now()
	logf := func(format string, args ...any) {
		t.Logf("%6.1fs %s", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
	}
	c.waitServers(t, 3, true, 3*time.Minute)

	// A fresh namespace, its index table pre-split into 16 regions so region
	// events have index regions on every server.
	seed := uint64(time.Now().UnixNano())
	r := &run{c: c, ns: fmt.Sprintf("chaos%x", seed&0xffffff), rnd: rand.New(rand.NewPCG(seed, 7)), lease: os.Getenv(EnvWriterLease) == "1"}
	logf("namespace %s (seed %d, writer lease %v)", r.ns, seed, r.lease)
	createSchema(t, c.zk, r.ns)
	t.Cleanup(func() { dropSchema(t, c.zk, r.ns) })
	// One after the other: the first creates the index's metadata rows,
	// the second opens what the first created.
	for i := range 2 {
		var extra []string
		if r.lease && i == 0 {
			extra = []string{"--hbase-writer-lease"}
		}
		s := startServer(t, c.zk, r.ns, c.base+400+i, requestTimeout, extra...)
		s.waitReady(t)
		r.servers = append(r.servers, s)
	}
	logf("two servers ready; balancing")
	c.must(t, "balance")

	// Warm-up: traffic until both servers acknowledged inserts, then the
	// idle goroutine baseline.
	tr := r.traffic("warm")
	t.Cleanup(tr.halt)
	if !waitFor(2*time.Minute, func() bool { return r.acknowledged(tr, []int64{0, 0}, 10) }) {
		tr.halt()
		t.Fatalf("warm-up: no traffic got through: %v", tr.problems)
	}
	tr.halt()
	r.check(t, "warm-up", tr)
	for _, s := range r.servers {
		g, _, err := s.gauges()
		if err != nil {
			t.Fatal(err)
		}
		r.baseline = append(r.baseline, g)
	}
	logf("warm-up done: %d groups; idle goroutines %v", len(tr.groups), r.baseline)

	for _, name := range events {
		ok := t.Run(name, func(t *testing.T) {
			tr := r.traffic(name)
			t.Cleanup(tr.halt) // when the event fails the test
			ls := r.startLoads(t, name)
			t.Cleanup(ls.halt)
			from := time.Now()
			eventFuncs[name](t, r, logf)
			logf("%s: operations done; waiting for recovery", name)
			to := r.recovered(t, tr)
			tr.halt()
			w := tr.window(from, to)
			t.Logf("%s: %v (%d groups, %d answers 503)", name, w, len(tr.groups), tr.un503)
			fmt.Printf("chaos: %-16s %v\n", name, w)
			r.check(t, name, tr)
			if ls != nil {
				fmt.Printf("chaos: %-16s bulk loads: %s\n", name, ls.finish(t))
			}
			r.noLeaks(t)
		})
		if !ok {
			break
		}
	}
	logf("final check of all %d groups", len(r.all))
	r.verify(t, r.all)
	// The entries lookups passed over because their docs cell was
	// missing: inserts that failed between their first writes and their
	// docs cell (verify fails if a check found one).
	var passed float64
	for _, s := range r.servers {
		m, err := s.metrics("simdex_lookup_uncommitted_entries_total")
		if err != nil {
			t.Fatal(err)
		}
		passed += m["simdex_lookup_uncommitted_entries_total"]
	}
	fmt.Printf("chaos: %.0f fp entries passed over as uncommitted (inserts that failed before their docs cell)\n", passed)
}

// traffic starts the traffic of one phase.
func (r *run) traffic(tag string) *traffic {
	urls := make([]string, len(r.servers))
	for i, s := range r.servers {
		urls[i] = s.url
	}
	return startTraffic(urls, tag, 3, r.rnd.Uint64())
}

// recovered waits until, after the event's operations, every server
// acknowledged fresh inserts and is ready again (without a restart), and
// returns when.
func (r *run) recovered(t *testing.T, tr *traffic) time.Time {
	t.Helper()
	from := make([]int64, len(r.servers))
	for i := range r.servers {
		from[i] = tr.okInserts[i].Load()
	}
	if !waitFor(3*time.Minute, func() bool {
		if !r.acknowledged(tr, from, 5) {
			return false
		}
		for _, s := range r.servers {
			if st, _ := get(s.url + "/readyz"); st != http.StatusOK {
				return false
			}
		}
		return true
	}) {
		tr.halt()
		t.Fatalf("servers did not recover within 3 minutes; problems: %v", tr.problems)
	}
	return time.Now()
}

// acknowledged reports whether every server acknowledged n inserts more
// than from (its counts) in tr (with a writer lease, the standby's through
// the holder it sends them to).
func (r *run) acknowledged(tr *traffic, from []int64, n int64) bool {
	for i := range r.servers {
		if tr.okInserts[i].Load() < from[i]+n {
			return false
		}
	}
	return true
}

// check reports the traffic's problems and verifies its groups.
func (r *run) check(t *testing.T, phase string, tr *traffic) {
	t.Helper()
	for _, p := range tr.problems {
		t.Errorf("%s: %s", phase, p)
	}
	r.verify(t, tr.groups)
	r.all = append(r.all, tr.groups...)
}

// verify checks every group: exactly one original stored among its racing
// members (found by a check at k=3 of the base fingerprint, readable by
// get), and every acknowledged answer agreeing with it.
func (r *run) verify(t *testing.T, groups []*group) {
	t.Helper()
	srv := r.servers[0].url
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	for from := 0; from < len(groups); from += 200 {
		part := groups[from:min(from+200, len(groups))]
		items := make([]map[string]any, len(part))
		for i, g := range part {
			items[i] = map[string]any{"fingerprint": g.base}
		}
		var res struct {
			Results []*checkAnswer `json:"results"`
		}
		if err := postJSON(client, srv+"/v1/check/batch", map[string]any{"items": items, "k": 3}, &res); err != nil || len(res.Results) != len(part) {
			t.Fatalf("verify: batch check: %v (%d results)", err, len(res.Results))
		}
		for i, g := range part {
			r.verifyGroup(t, client, srv, g, res.Results[i])
		}
	}
}

func (r *run) verifyGroup(t *testing.T, client *http.Client, srv string, g *group, res *checkAnswer) {
	t.Helper()
	ids := map[string]bool{}
	acked := false
	for _, m := range g.members {
		ids[m.id] = true
		acked = acked || m.status/100 == 2
	}
	var found []string
	if res != nil {
		for _, d := range res.Duplicates {
			if ids[d.ID] {
				found = append(found, d.ID)
			}
		}
	}
	if len(found) > 1 || (acked && len(found) != 1) {
		t.Errorf("group %s: originals stored %v, want exactly one; answers %+v", g.base, found, g.members)
		return
	}
	if len(found) == 0 {
		return // every member got 503 and none was stored: allowed
	}
	orig := found[0]
	for _, m := range g.members {
		switch {
		case m.stored && m.id != orig:
			t.Errorf("group %s: %s acknowledged as stored, but the stored original is %s", g.base, m.id, orig)
		case m.status == http.StatusOK && m.dupOf != orig:
			t.Errorf("group %s: %s answered duplicate of %s, but the stored original is %s", g.base, m.id, m.dupOf, orig)
		}
	}
	var doc struct {
		ID string `json:"id"`
	}
	resp, err := client.Get(srv + "/v1/documents/" + orig)
	if err != nil {
		t.Fatalf("get %s: %v", orig, err)
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK && err == nil && doc.ID == orig {
		return
	}
	// A check finds only committed documents (their docs cell written):
	// an original it finds and get cannot read is a document a check
	// shows and nobody stored, whether or not its insert was acknowledged.
	t.Errorf("get %s (the original a check finds for group %s): %d %v; answers %+v", orig, g.base, resp.StatusCode, err, g.members)
}

// noLeaks waits until each server is back near its idle goroutine baseline
// and holds at most one connection per region server plus the master's.
func (r *run) noLeaks(t *testing.T) {
	t.Helper()
	const slack = 25
	for i, s := range r.servers {
		var g, conns int
		var err error
		if !waitFor(time.Minute, func() bool {
			g, conns, err = s.gauges()
			return err == nil && g <= r.baseline[i]+slack && conns <= 4
		}) {
			t.Errorf("server %s: %d goroutines (idle baseline %d), %d HBase connections (at most 4: 3 region servers, the master); %v", s.url, g, r.baseline[i], conns, err)
		}
	}
}

func postJSON(client *http.Client, url string, body, out any) error {
	b, _ := json.Marshal(body)
	resp, err := client.Post(url, "application/json", strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// waitFor polls cond every 200ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func newClient(t *testing.T, zk string) *hbase.Client {
	t.Helper()
	cl, err := hbase.New(hbase.Config{ZooKeeper: []string{zk}})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func createSchema(t *testing.T, zk, ns string) {
	t.Helper()
	cl := newClient(t, zk)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := schema.Create(ctx, cl, schema.Schema{Namespace: ns, IndexRegions: 16}.WithDefaults()); err != nil {
		t.Fatalf("create schema %s: %v", ns, err)
	}
}

// dropSchema drops the namespace after the test, unless it failed (then
// its data stays for a look).
func dropSchema(t *testing.T, zk, ns string) {
	if t.Failed() {
		t.Logf("namespace %s kept for inspection", ns)
		return
	}
	cl := newClient(t, zk)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := schema.Drop(ctx, cl, schema.Schema{Namespace: ns}.WithDefaults()); err != nil {
		t.Logf("drop namespace %s: %v", ns, err)
	}
}

// indexHolder returns the live region server holding the most index regions.
func (r *run) indexHolder(t *testing.T) string {
	t.Helper()
	count := map[string]int{}
	for _, l := range r.c.regions(t, r.table("index")) {
		count[l.server]++
	}
	best := ""
	for s, n := range count {
		if s != "-" && (best == "" || n > count[best]) {
			best = s
		}
	}
	if best == "" {
		t.Fatal("no index region is assigned")
	}
	return best
}

// liveServers are the region servers the master reports, sorted.
func (r *run) liveServers(t *testing.T) []string {
	t.Helper()
	st, err := r.c.status()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for s := range st.servers {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// unhex decodes a regions listing's key ("-" is empty).
func unhex(s string) []byte {
	if s == "-" {
		return nil
	}
	b, _ := hex.DecodeString(s)
	return b
}
