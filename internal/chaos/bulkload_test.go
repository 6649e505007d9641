package chaos

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// loadSize is the fingerprints of one bulk load under an event: small
// enough that several loads run while an event's operations do.
const loadSize = 4000

// maxLoadTries bounds the runs of one load: its first, and the re-runs of
// the same command (the loader resumes from its checkpoint) after the event.
const maxLoadTries = 6

// load is one cmd/bulkload run into the servers' namespace.
type load struct {
	name  string
	mode  string // --hbase-import: hfile or puts
	dir   string // checkpoint directory (HFiles under it)
	input string
	ids   []string
	fps   []string

	tries    int
	firstErr string // the first run's failure, if it failed
	ok       bool
	took     time.Duration // the successful run's
}

// loads runs bulk loads one after the other, alternating HFiles and puts,
// while an event runs, the way a backfill keeps loading while the cluster
// changes under it.
type loads struct {
	r    *run
	bin  string
	tag  string
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	list []*load
}

// startLoads starts the loads of one event.
func (r *run) startLoads(t *testing.T, tag string) *loads {
	t.Helper()
	ls := &loads{r: r, bin: buildCmd(t, "bulkload"), tag: tag, stop: make(chan struct{}), done: make(chan struct{})}
	dir := t.TempDir()
	seed := r.rnd.Uint64()
	go func() {
		defer close(ls.done)
		for i := 0; ; i++ {
			select {
			case <-ls.stop:
				return
			default:
			}
			name := fmt.Sprintf("%s-%d", tag, i)
			l, err := newLoad(dir, name, []string{"hfile", "puts"}[i%2], rand.New(rand.NewPCG(seed, uint64(i))))
			if err != nil {
				ls.mu.Lock()
				ls.list = append(ls.list, &load{name: name, firstErr: err.Error()})
				ls.mu.Unlock()
				return
			}
			ls.mu.Lock()
			ls.list = append(ls.list, l)
			ls.mu.Unlock()
			ls.runOnce(l)
		}
	}()
	return ls
}

// newLoad writes a load's input: loadSize random fingerprints with fresh
// ids, as "id,fingerprint,unix time" lines.
func newLoad(dir, name, mode string, rnd *rand.Rand) (*load, error) {
	l := &load{name: name, mode: mode, dir: filepath.Join(dir, name), input: filepath.Join(dir, name+".csv")}
	var b bytes.Buffer
	now := time.Now().Unix()
	for j := range loadSize {
		id := fmt.Sprintf("bl-%s-%d", name, j)
		fp := fmt.Sprintf("%016x", rnd.Uint64())
		l.ids, l.fps = append(l.ids, id), append(l.fps, fp)
		fmt.Fprintf(&b, "%s,%s,%d\n", id, fp, now-int64(rnd.IntN(86400)))
	}
	return l, os.WriteFile(l.input, b.Bytes(), 0o644)
}

// runOnce runs the load's command once (a re-run resumes it) and records
// the outcome.
func (ls *loads) runOnce(l *load) {
	l.tries++
	args := []string{"--store", "hbase", "--hbase-zk", ls.r.c.zk, "--hbase-namespace", ls.r.ns,
		"--checkpoint-dir", l.dir, "--format", "fp", "--progress", "none", "--hbase-import", l.mode}
	if l.mode == "hfile" {
		// The region servers' root is on HDFS: they copy the HFiles over
		// from this machine's filesystem.
		args = append(args, "--hbase-hfile-remote-dir", "file://"+filepath.Join(l.dir, "hfiles"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, ls.bin, append(args, l.input)...).CombinedOutput()
	if err == nil {
		l.ok, l.took = true, time.Since(start)
		return
	}
	if l.firstErr == "" {
		if len(out) > 2000 {
			out = out[len(out)-2000:]
		}
		l.firstErr = fmt.Sprintf("%v: %s", err, out)
	}
}

// halt stops starting loads and waits for the one under way.
func (ls *loads) halt() {
	select {
	case <-ls.stop:
	default:
		close(ls.stop)
	}
	<-ls.done
}

// finish halts the loads, re-runs every load that failed until it
// completes (the loader's resume), and checks that every fingerprint of
// every load is found by a check at k = 0 under its id and that its
// documents are readable. It returns a one-line summary.
func (ls *loads) finish(t *testing.T) string {
	t.Helper()
	ls.halt()
	resumed := 0
	for _, l := range ls.list {
		if l.input == "" {
			t.Errorf("load %s: %s", l.name, l.firstErr)
			continue
		}
		for !l.ok && l.tries < maxLoadTries {
			time.Sleep(5 * time.Second)
			ls.runOnce(l)
		}
		switch {
		case !l.ok:
			t.Errorf("load %s (%s) did not complete in %d runs; first failure: %s", l.name, l.mode, l.tries, l.firstErr)
		case l.tries > 1:
			resumed++
			t.Logf("load %s (%s) completed on run %d; first failure: %s", l.name, l.mode, l.tries, lastLine(l.firstErr))
		}
	}
	var took []string
	for _, l := range ls.list {
		if l.ok {
			ls.verify(t, l)
			took = append(took, fmt.Sprintf("%s %.1fs", l.mode, l.took.Seconds()))
		}
	}
	return fmt.Sprintf("%d loads of %d fingerprints (%d completed on a re-run): %s", len(ls.list), loadSize, resumed, strings.Join(took, ", "))
}

// verify checks one completed load through the first server: every
// fingerprint found at k = 0 under its id, and the first and last
// documents readable.
func (ls *loads) verify(t *testing.T, l *load) {
	t.Helper()
	srv := ls.r.servers[0].url
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	missing := 0
	for from := 0; from < len(l.fps); from += 200 {
		to := min(from+200, len(l.fps))
		items := make([]map[string]any, 0, to-from)
		for _, fp := range l.fps[from:to] {
			items = append(items, map[string]any{"fingerprint": fp})
		}
		var res struct {
			Results []*checkAnswer `json:"results"`
		}
		if err := postJSON(client, srv+"/v1/check/batch", map[string]any{"items": items, "k": 0}, &res); err != nil || len(res.Results) != to-from {
			t.Fatalf("load %s: batch check: %v (%d results)", l.name, err, len(res.Results))
		}
		for i, a := range res.Results {
			found := false
			for _, d := range a.Duplicates {
				found = found || d.ID == l.ids[from+i]
			}
			if !found {
				missing++
				if missing <= 3 {
					t.Errorf("load %s (%s): %s (%s) not found by a check", l.name, l.mode, l.ids[from+i], l.fps[from+i])
				}
			}
		}
	}
	if missing > 3 {
		t.Errorf("load %s (%s): %d of %d fingerprints not found", l.name, l.mode, missing, len(l.fps))
	}
	for _, id := range []string{l.ids[0], l.ids[len(l.ids)-1]} {
		if st, err := get(srv + "/v1/documents/" + id); st != http.StatusOK {
			t.Errorf("load %s (%s): get %s: %d %v", l.name, l.mode, id, st, err)
		}
	}
}

// lastLine is the last non-empty line of a command's output.
func lastLine(s string) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return ls[len(ls)-1]
}
