package chaos

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// bins are the commands the tests start (cmd/server, cmd/bulkload), each
// built once per test binary into one directory (without -race: they are
// the system under test, the race detector runs in the test).
var bins struct {
	mu    sync.Mutex
	dir   string
	built map[string]string
}

// TestMain removes the built commands when the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if bins.dir != "" {
		os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

// buildCmd returns ./cmd/name built, building it on the first call.
func buildCmd(t *testing.T, name string) string {
	t.Helper()
	bins.mu.Lock()
	defer bins.mu.Unlock()
	if p, ok := bins.built[name]; ok {
		return p
	}
	if bins.dir == "" {
		dir, err := os.MkdirTemp("", "simdex-chaos-")
		if err != nil {
			t.Fatal(err)
		}
		bins.dir, bins.built = dir, map[string]string{}
	}
	p := filepath.Join(bins.dir, name)
	cmd := exec.Command("go", "build", "-o", p, "./cmd/"+name)
	cmd.Dir = hbasetest.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/%s: %v\n%s", name, err, out)
	}
	bins.built[name] = p
	return p
}

// server is one simdex server process on loopback HTTP.
type server struct {
	url string
	cmd *exec.Cmd
	log string
}

// startServer starts cmd/server on the cluster's namespace ns; waitReady
// waits until it serves.
func startServer(t *testing.T, zk, ns string, port int, timeout time.Duration, extra ...string) *server {
	t.Helper()
	bin := buildCmd(t, "server")
	s := &server{url: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(t.TempDir(), "server.log")}
	logf, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(bin, append([]string{
		"--store", "hbase", "--hbase-zk", zk, "--hbase-namespace", ns, "--hbase-create-tables",
		"--addr", fmt.Sprintf("127.0.0.1:%d", port), "--request-timeout", timeout.String(),
		"--log-level", "warn"}, extra...)...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logf.Close()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// waitReady waits until the server's /readyz answers 200.
func (s *server) waitReady(t *testing.T) {
	t.Helper()
	for end := time.Now().Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if st, _ := get(s.url + "/readyz"); st == http.StatusOK {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("server %s not ready within 3 minutes; log:\n%s", s.url, tail(s.log))
		}
	}
}

// stop ends the server with SIGTERM (its graceful shutdown) and waits.
func (s *server) stop(t *testing.T) {
	if s.cmd.Process == nil || s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("server %s exited: %v; log:\n%s", s.url, err, tail(s.log))
		}
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-done
		t.Errorf("server %s did not stop within a minute of SIGTERM", s.url)
	}
}

// gauges reads the server's goroutine count and open HBase connections
// from /metrics.
func (s *server) gauges() (goroutines, conns int, err error) {
	m, err := s.metrics("go_goroutines", "hbase_client_open_connections")
	if err != nil {
		return 0, 0, err
	}
	return int(m["go_goroutines"]), int(m["hbase_client_open_connections"]), nil
}

// metrics reads the named unlabelled metrics from the server's /metrics;
// each must be there.
func (s *server) metrics(names ...string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[name] = f
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("%s/metrics: no %s", s.url, n)
		}
	}
	return out, nil
}

func get(url string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// tail is the end of a log file, for failure messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
