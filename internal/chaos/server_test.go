package chaos

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// serverBin is cmd/server built once per test binary (without -race: the
// servers are the system under test, the race detector runs in the test).
var serverBin struct {
	once sync.Once
	path string
	err  error
}

// TestMain removes the built server when the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if serverBin.path != "" {
		os.RemoveAll(filepath.Dir(serverBin.path))
	}
	os.Exit(code)
}

func buildServer(t *testing.T) string {
	t.Helper()
	serverBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "simdex-chaos-")
		if err != nil {
			serverBin.err = err
			return
		}
		serverBin.path = filepath.Join(dir, "server")
		cmd := exec.Command("go", "build", "-o", serverBin.path, "./cmd/server")
		cmd.Dir = hbasetest.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			serverBin.err = fmt.Errorf("go build ./cmd/server: %v\n%s", err, out)
		}
	})
	if serverBin.err != nil {
		t.Fatal(serverBin.err)
	}
	return serverBin.path
}

// server is one simdex server process on loopback HTTP.
type server struct {
	url string
	cmd *exec.Cmd
	log string
}

// startServer starts cmd/server on the cluster's namespace ns; waitReady
// waits until it serves.
func startServer(t *testing.T, zk, ns string, port int, timeout time.Duration) *server {
	t.Helper()
	bin := buildServer(t)
	s := &server{url: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(t.TempDir(), "server.log")}
	logf, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(bin,
		"--store", "hbase", "--hbase-zk", zk, "--hbase-namespace", ns, "--hbase-create-tables",
		"--addr", fmt.Sprintf("127.0.0.1:%d", port), "--request-timeout", timeout.String(),
		"--log-level", "warn")
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	goroutines, conns = -1, -1
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		f, perr := strconv.ParseFloat(v, 64)
		switch {
		case perr != nil:
		case name == "go_goroutines":
			goroutines = int(f)
		case name == "hbase_client_open_connections":
			conns = int(f)
		}
	}
	if goroutines < 0 || conns < 0 {
		return 0, 0, fmt.Errorf("%s/metrics: no go_goroutines or hbase_client_open_connections", s.url)
	}
	return goroutines, conns, sc.Err()
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
