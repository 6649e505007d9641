package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// groupSize is how many near-duplicates race in one group: each is its
// base fingerprint with one other bit flipped, so any two are within
// distance 2 and insert-if-unique at k=3 must store exactly one.
const groupSize = 3

// member is one racing insert of a group and what the server answered.
type member struct {
	id, fp string
	server int
	status int    // 0: no answer
	stored bool   // 201: it is the original
	dupOf  string // 200: the original it was found a duplicate of
}

// group is one set of racing near-duplicates.
type group struct {
	base    string // the fingerprint every member is within distance 1 of
	members [groupSize]member
}

// sample is one request as a client saw it.
type sample struct {
	start time.Time
	dur   time.Duration
	ok    bool // 2xx
}

// traffic runs insert-if-unique races and checks of acknowledged originals
// against the servers until halted, recording every request, every group
// and every answer a client must never see.
type traffic struct {
	servers []string
	client  *http.Client
	tag     string // prefix of this run's document ids
	stop    chan struct{}
	halted  sync.Once
	wg      sync.WaitGroup

	okInserts []atomic.Int64 // 2xx inserts per server

	mu       sync.Mutex // guards the fields below
	samples  []sample
	groups   []*group
	problems []string
	un503    int
}

func startTraffic(servers []string, tag string, workers int, seed uint64) *traffic {
	tr := &traffic{
		servers:   servers,
		client:    &http.Client{Timeout: 2 * time.Minute},
		tag:       tag,
		stop:      make(chan struct{}),
		okInserts: make([]atomic.Int64, len(servers)),
	}
	for w := range workers {
		tr.wg.Go(func() { tr.run(w, rand.New(rand.NewPCG(seed, uint64(w)))) })
	}
	return tr
}

// halt stops the workers and waits for them; later calls do nothing.
func (tr *traffic) halt() {
	tr.halted.Do(func() {
		close(tr.stop)
		tr.wg.Wait()
		tr.client.CloseIdleConnections()
	})
}

func (tr *traffic) problem(format string, args ...any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.problems) < 100 {
		tr.problems = append(tr.problems, fmt.Sprintf(format, args...))
	}
}

// post sends body to a server and returns the status (0 for no answer) and
// body, recording the sample and anything a client must never see.
func (tr *traffic) post(server int, path string, body any) (int, []byte) {
	b, _ := json.Marshal(body)
	start := time.Now()
	resp, err := tr.client.Post(tr.servers[server]+path, "application/json", bytes.NewReader(b))
	if err != nil {
		tr.problem("%s%s: %v", tr.servers[server], path, err)
		tr.record(sample{start: start, dur: time.Since(start)})
		return 0, nil
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s := sample{start: start, dur: time.Since(start), ok: resp.StatusCode/100 == 2}
	tr.record(s)
	switch {
	case s.ok:
	case resp.StatusCode == http.StatusServiceUnavailable:
		tr.mu.Lock()
		tr.un503++
		tr.mu.Unlock()
		if resp.Header.Get("Retry-After") == "" {
			tr.problem("%s%s: 503 without Retry-After", tr.servers[server], path)
		}
	default:
		tr.problem("%s%s: status %d: %.300s", tr.servers[server], path, resp.StatusCode, out)
	}
	return resp.StatusCode, out
}

func (tr *traffic) record(s sample) {
	tr.mu.Lock()
	tr.samples = append(tr.samples, s)
	tr.mu.Unlock()
}

type insertAnswer struct {
	ID          string `json:"id"`
	Stored      bool   `json:"stored"`
	DuplicateOf string `json:"duplicate_of"`
}

type checkAnswer struct {
	Duplicates []struct {
		ID string `json:"id"`
	} `json:"duplicates"`
}

func (tr *traffic) run(w int, r *rand.Rand) {
	for i := 0; ; i++ {
		select {
		case <-tr.stop:
			return
		case <-time.After(20 * time.Millisecond): // steady, modest load
		}
		base := r.Uint64()
		g := &group{base: fmt.Sprintf("%016x", base)}
		bits := r.Perm(64)
		var race sync.WaitGroup
		for m := range g.members {
			mb := &g.members[m]
			mb.id = fmt.Sprintf("%s-w%d-%d-%d", tr.tag, w, i, m)
			mb.fp = fmt.Sprintf("%016x", base^(1<<bits[m]))
			mb.server = (w + m) % len(tr.servers)
			race.Go(func() {
				st, out := tr.post(mb.server, "/v1/documents", map[string]any{"id": mb.id, "fingerprint": mb.fp, "mode": "insert-if-unique", "k": 3})
				mb.status = st
				if st/100 != 2 {
					return
				}
				var a insertAnswer
				if err := json.Unmarshal(out, &a); err != nil || a.ID != mb.id || a.Stored != (st == http.StatusCreated) || (!a.Stored && a.DuplicateOf == "") {
					tr.problem("insert %s: %d %s", mb.id, st, out)
					return
				}
				mb.stored, mb.dupOf = a.Stored, a.DuplicateOf
				if a.Stored {
					tr.okInserts[mb.server].Add(1)
				}
			})
		}
		race.Wait()
		tr.mu.Lock()
		tr.groups = append(tr.groups, g)
		// A check of an acknowledged original from an earlier group: when
		// the server answers, it must find it.
		var c *member
		for try := 0; try < 4 && len(tr.groups) > 0 && c == nil; try++ {
			pg := tr.groups[r.IntN(len(tr.groups))]
			for k := range pg.members {
				if pg.members[k].stored {
					c = &pg.members[k]
				}
			}
		}
		tr.mu.Unlock()
		if c == nil {
			continue
		}
		st, out := tr.post(i%len(tr.servers), "/v1/check", map[string]any{"fingerprint": c.fp, "k": 0})
		if st == http.StatusOK {
			var a checkAnswer
			if err := json.Unmarshal(out, &a); err != nil || len(a.Duplicates) != 1 || a.Duplicates[0].ID != c.id {
				tr.problem("check of acknowledged %s (%s): %s", c.id, c.fp, out)
			}
		}
	}
}

// window summarizes the requests started in [from, to): how many, how many
// failed, their p99, and the longest time in it with no 2xx answer
// completing (the longest unavailability a client saw).
type window struct {
	requests, failed int
	p99              time.Duration
	longestGap       time.Duration
}

func (tr *traffic) window(from, to time.Time) window {
	tr.mu.Lock()
	ss := slices.Clone(tr.samples)
	tr.mu.Unlock()
	var w window
	var durs []time.Duration
	var okEnds []time.Time
	for _, s := range ss {
		end := s.start.Add(s.dur)
		if s.ok && !end.Before(from) && end.Before(to) {
			okEnds = append(okEnds, end)
		}
		if s.start.Before(from) || !s.start.Before(to) {
			continue
		}
		w.requests++
		if !s.ok {
			w.failed++
		}
		durs = append(durs, s.dur)
	}
	if len(durs) > 0 {
		slices.Sort(durs)
		w.p99 = durs[min(len(durs)-1, len(durs)*99/100)]
	}
	sort.Slice(okEnds, func(i, j int) bool { return okEnds[i].Before(okEnds[j]) })
	prev := from
	for _, e := range append(okEnds, to) {
		w.longestGap = max(w.longestGap, e.Sub(prev))
		prev = e
	}
	return w
}

func (w window) String() string {
	return fmt.Sprintf("%d requests, %d not 2xx, p99 %v, longest unavailability %v",
		w.requests, w.failed, w.p99.Round(time.Millisecond), w.longestGap.Round(time.Millisecond))
}
