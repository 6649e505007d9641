package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary act as the real server process for
// TestGracefulShutdown (SIMDEX_TEST_SERVE=1): the same Run that cmd/server
// calls, with its signal handling.
func TestMain(m *testing.M) {
	if os.Getenv("SIMDEX_TEST_SERVE") == "1" {
		cfg, err := LoadConfig(nil, os.Getenv, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if err := Run(ctx, cfg, os.Stderr, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// syncBuffer collects a child's stderr while the test reads it.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestGracefulShutdown runs the server as a child process, loads it with
// inserts from several clients, sends SIGTERM mid-load, and then reopens the
// store: the process exits cleanly and every insert it acknowledged is there.
func TestGracefulShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child server process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SIMDEX_TEST_SERVE=1", "SIMDEX_ADDR=127.0.0.1:0", "SIMDEX_DATA_DIR="+dir, "SIMDEX_LOG_LEVEL=info")
	stderr := &syncBuffer{}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	addrCh := make(chan string, 1)
	copied := make(chan struct{})
	go func() { // owner: this test; ends when the child closes stderr
		defer close(copied)
		re := regexp.MustCompile(`msg=serving addr=(\S+)`)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			stderr.Write([]byte(line + "\n"))
			if m := re.FindStringSubmatch(line); m != nil {
				addrCh <- m[1]
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrCh:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("server did not start; stderr:\n%s", stderr.String())
	}
	base := "http://" + addr
	text := readText(t, "en_article.txt")

	var (
		mu    sync.Mutex // guards acked
		acked []string
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("w%d-%d", w, i)
				body, _ := json.Marshal(map[string]any{"id": id, "text": fmt.Sprintf("%s Edition %d of worker %d.", text, i, w)})
				resp, err := client.Post(base+"/v1/documents", "application/json", bytes.NewReader(body))
				if err != nil {
					return // the server has gone: expected after SIGTERM
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusCreated {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(700 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil {
			t.Fatalf("server exited with %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("server did not stop within 60s of SIGTERM")
	}
	close(stop)
	wg.Wait()
	<-copied
	if !strings.Contains(stderr.String(), "stopped cleanly") {
		t.Errorf("no clean-stop log line:\n%s", stderr.String())
	}
	if len(acked) == 0 {
		t.Fatal("no insert was acknowledged before SIGTERM")
	}

	ix := openIndex(t, dir, DefaultConfig().Layout, nil)
	defer ix.Close()
	for _, id := range acked {
		if _, err := ix.Get(context.Background(), id); err != nil {
			t.Errorf("acknowledged insert %s lost: %v", id, err)
		}
	}
	t.Logf("%d acknowledged inserts, all present after shutdown", len(acked))
}
