package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// Ports of the private HBase of TestHBaseFaults: apart from scripts/test.sh's
// shared instance (22281/26100/26120) and hbase's fault test
// (22381/26200/26220); StartPrivate refuses ports already in use.
const (
	faultZKPort     = 22481
	faultMasterPort = 26300
	faultRSPort     = 26320
)

// faultDoc is one document the fault traffic tried to insert.
type faultDoc struct {
	id, fp, mode string
}

// faultTraffic inserts documents by fingerprint (insert and
// insert-if-unique, alternating) and checks earlier acknowledged ones from
// a few clients until halted, through the real server. It records every
// acknowledged document, every insert answered 503 (to retry later), and
// every answer a client must never see: a status other than 2xx/503, a 503
// without Retry-After, a request slower than the deadline plus margin, or
// an acknowledged document a check does not find.
type faultTraffic struct {
	base    string
	client  *http.Client
	maxTime time.Duration // request deadline + margin

	ok          atomic.Int64 // successful requests
	unavailable atomic.Int64 // 503 answers

	mu       sync.Mutex // guards acked, failed, problems
	acked    []faultDoc
	failed   []faultDoc
	problems []string

	stop chan struct{}
	wg   sync.WaitGroup
}

func startFaultTraffic(base string, clients int, deadline time.Duration) *faultTraffic {
	tr := &faultTraffic{
		base:    base,
		client:  &http.Client{Timeout: deadline + 30*time.Second},
		maxTime: deadline + 3*time.Second,
		stop:    make(chan struct{}),
	}
	for w := range clients {
		tr.wg.Go(func() { tr.run(w) })
	}
	return tr
}

func (tr *faultTraffic) halt() {
	close(tr.stop)
	tr.wg.Wait()
}

func (tr *faultTraffic) problemsSoFar() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.problems)
}

func (tr *faultTraffic) problem(format string, args ...any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.problems) < 50 {
		tr.problems = append(tr.problems, fmt.Sprintf(format, args...))
	}
}

// post sends body and returns status, Retry-After and body; a transport
// error (the server hung past the client's timeout, or died) is a problem.
func (tr *faultTraffic) post(path string, body any) (int, string, []byte, bool) {
	b, _ := json.Marshal(body)
	start := time.Now()
	resp, err := tr.client.Post(tr.base+path, "application/json", bytes.NewReader(b))
	if err != nil {
		tr.problem("%s: %v", path, err)
		return 0, "", nil, false
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if d := time.Since(start); d > tr.maxTime {
		tr.problem("%s took %v (answer %d), more than the deadline plus margin %v", path, d, resp.StatusCode, tr.maxTime)
	}
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		tr.unavailable.Add(1)
		if resp.Header.Get("Retry-After") == "" {
			tr.problem("%s: 503 without Retry-After", path)
		}
	case resp.StatusCode/100 != 2:
		tr.problem("%s: status %d: %s", path, resp.StatusCode, out)
	default:
		tr.ok.Add(1)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), out, true
}

func (tr *faultTraffic) run(w int) {
	r := rand.New(rand.NewPCG(uint64(w), 42))
	for i := 0; ; i++ {
		select {
		case <-tr.stop:
			return
		case <-time.After(10 * time.Millisecond): // a steady, modest load
		}
		d := faultDoc{id: fmt.Sprintf("w%d-%d", w, i), fp: fmt.Sprintf("%016x", r.Uint64()), mode: "insert"}
		if i%2 == 1 {
			d.mode = "insert-if-unique"
		}
		st, _, out, sent := tr.post("/v1/documents", map[string]any{"id": d.id, "fingerprint": d.fp, "mode": d.mode})
		switch {
		case !sent:
		case st == http.StatusCreated:
			var ins insertResponse
			if err := json.Unmarshal(out, &ins); err != nil || !ins.Stored || ins.ID != d.id {
				tr.problem("insert %s: 201 with %s", d.id, out)
				break
			}
			tr.mu.Lock()
			tr.acked = append(tr.acked, d)
			tr.mu.Unlock()
		case st == http.StatusServiceUnavailable:
			tr.mu.Lock()
			tr.failed = append(tr.failed, d)
			tr.mu.Unlock()
		default:
			tr.problem("insert %s: status %d: %s", d.id, st, out)
		}

		// Check an acknowledged document: when the server answers, it must
		// find it.
		tr.mu.Lock()
		var c faultDoc
		if n := len(tr.acked); n > 0 {
			c = tr.acked[r.IntN(n)]
		}
		tr.mu.Unlock()
		if c.id == "" {
			continue
		}
		st, _, out, sent = tr.post("/v1/check", map[string]any{"fingerprint": c.fp, "k": 0})
		if sent && st == http.StatusOK {
			var chk checkResponse
			if err := json.Unmarshal(out, &chk); err != nil || len(chk.Duplicates) != 1 || chk.Duplicates[0].ID != c.id {
				tr.problem("check of acknowledged %s (%s): %s", c.id, c.fp, out)
			}
		}
	}
}

// waitFor polls cond every 100ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestHBaseFaults runs the whole server on a private HBase and disturbs
// HBase under steady insert and check traffic: first HBase is killed and
// started again, then its JVM is frozen (SIGSTOP) and resumed. Throughout,
// the server answers 2xx or 503 with Retry-After within its request
// deadline (never 500, never a hang); afterwards it serves again without
// being restarted, every acknowledged insert is found by get and by check,
// and every insert that got 503 (stored or not) can be retried and is then
// stored exactly once.
func TestHBaseFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private HBase (~1-2 minutes)")
	}
	began := time.Now()
	phase := func(what string) { t.Logf("%6.1fs %s", time.Since(began).Seconds(), what) }
	in := hbasetest.StartPrivate(t, "server-faults", faultZKPort, faultMasterPort, faultRSPort)
	phase("private HBase serves")
	const deadline = 2 * time.Second
	// The server as Run builds it on HBase (lease Locker, group commit), on
	// real HTTP, sharing the suite's dictionaries (Run would load its own:
	// over a minute under -race on a busy machine).
	s := newStoreEnv(t, "hbase", "simdex", func(c *Config) { c.HBaseZK = in.ZK; c.RequestTimeout = deadline })
	tr := startFaultTraffic(s.http.URL, 4, deadline)
	halted := false
	defer func() {
		if !halted {
			tr.halt()
		}
	}()
	progress := func(n int64, d time.Duration) bool {
		from := tr.ok.Load()
		return waitFor(d, func() bool { return tr.ok.Load() >= from+n })
	}
	if !progress(20, time.Minute) {
		t.Fatalf("no traffic got through before the faults: %v", tr.problemsSoFar())
	}

	// 1. HBase killed mid-traffic, then started again.
	phase("traffic flows; killing HBase")
	downFrom := tr.unavailable.Load()
	in.Kill(t)
	if !waitFor(30*time.Second, func() bool { return tr.unavailable.Load() >= downFrom+10 }) {
		t.Errorf("HBase down: only %d answers 503", tr.unavailable.Load()-downFrom)
	}
	assertNotReady(t, s.http.URL, deadline)
	phase("starting HBase again")
	in.Start(t)
	phase("HBase serves again")
	if !progress(40, 2*time.Minute) {
		t.Fatalf("server did not serve again after HBase restarted; problems: %v", tr.problemsSoFar())
	}
	assertReady(t, s.http.URL)
	t.Logf("after restart: %d ok, %d answers 503 so far", tr.ok.Load(), tr.unavailable.Load())

	// 2. A hung region server: the JVM frozen for a few seconds.
	downFrom = tr.unavailable.Load()
	phase("freezing HBase")
	in.Signal(t, syscall.SIGSTOP)
	frozen := true
	defer func() {
		if frozen {
			in.Signal(t, syscall.SIGCONT)
		}
	}()
	if !waitFor(3*deadline+5*time.Second, func() bool { return tr.unavailable.Load() >= downFrom+8 }) {
		t.Errorf("HBase frozen: only %d answers 503", tr.unavailable.Load()-downFrom)
	}
	assertNotReady(t, s.http.URL, deadline)
	phase("resuming HBase")
	in.Signal(t, syscall.SIGCONT)
	frozen = false
	if !progress(40, time.Minute) {
		t.Fatalf("server did not serve again after HBase resumed; problems: %v", tr.problemsSoFar())
	}
	assertReady(t, s.http.URL)
	tr.halt()
	halted = true

	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, p := range tr.problems {
		t.Error(p)
	}
	t.Logf("%d inserts acknowledged, %d answered 503, %d requests 503 in all", len(tr.acked), len(tr.failed), tr.unavailable.Load())
	if len(tr.failed) == 0 {
		t.Error("no insert failed during the faults: the test did not disturb anything")
	}

	phase("traffic halted; retrying failed inserts")
	// Every insert that failed is retried until it is stored: whether or not
	// its first attempt reached HBase, the retry stores it once.
	for _, d := range tr.failed {
		var ins insertResponse
		var st int
		var out []byte
		ok := waitFor(time.Minute, func() bool {
			st, _, out, _ = tr.post("/v1/documents", map[string]any{"id": d.id, "fingerprint": d.fp, "mode": d.mode})
			return st/100 == 2
		})
		if !ok || json.Unmarshal(out, &ins) != nil || !ins.Stored {
			t.Fatalf("retry of %s (%s): %d %s", d.id, d.mode, st, out)
		}
	}
	all := append(append([]faultDoc(nil), tr.acked...), tr.failed...)
	phase("verifying")
	verifyStored(t, s, all)
	phase("done")
}

func assertNotReady(t *testing.T, base string, deadline time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("readyz with HBase unavailable: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if d := time.Since(start); d > deadline+3*time.Second {
		t.Errorf("readyz took %v", d)
	}
}

func assertReady(t *testing.T, base string) {
	t.Helper()
	var st int
	if !waitFor(30*time.Second, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		st = resp.StatusCode
		return st == http.StatusOK
	}) {
		t.Errorf("readyz after recovery: %d", st)
	}
}

// verifyStored checks that every document is found by get (with its
// fingerprint) and by a check of its fingerprint at k=0 (exactly itself:
// a retried insert must not leave a second copy).
func verifyStored(t *testing.T, s *testEnv, docs []faultDoc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, d := range docs {
		if ctx.Err() != nil {
			t.Fatal("verification took too long")
		}
		r := s.do("GET", "/v1/documents/"+d.id, nil)
		var doc documentResponse
		if r.status != http.StatusOK || json.Unmarshal(r.body, &doc) != nil || doc.Fingerprint != d.fp {
			t.Errorf("get %s: %d %s (want fingerprint %s)", d.id, r.status, r.body, d.fp)
		}
	}
	for from := 0; from < len(docs); from += 500 {
		part := docs[from:min(from+500, len(docs))]
		items := make([]map[string]any, len(part))
		for i, d := range part {
			items[i] = map[string]any{"fingerprint": d.fp}
		}
		r := s.do("POST", "/v1/check/batch", map[string]any{"items": items, "k": 0})
		var bc batchCheckResponse
		if r.status != http.StatusOK || json.Unmarshal(r.body, &bc) != nil || len(bc.Results) != len(part) {
			t.Fatalf("batch check: %d %.300s", r.status, r.body)
		}
		for i, d := range part {
			r := bc.Results[i]
			if r == nil || len(r.Duplicates) != 1 || r.Duplicates[0].ID != d.id {
				t.Errorf("check %s (%s): %+v", d.id, d.fp, r)
			}
		}
	}
}
