// Package runner runs the benchmark's pairs through the real simdex
// service: it builds and starts cmd/server on loopback with a temporary
// embedded store, stores the originals with batch inserts, checks the
// queries with batch checks, and turns the answers into metrics.Outcome.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// ErrServer is returned (wrapped) when the server cannot be built,
// started or reached.
var ErrServer = errors.New("runner: server")

// BuildServer compiles the repository's cmd/server into dir and returns
// the binary's path. repo is the module root.
func BuildServer(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "simdex-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/server")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: go build ./cmd/server: %v\n%s", ErrServer, err, out)
	}
	return bin, nil
}

// Server is a running cmd/server process on loopback.
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT.
	URL string

	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	mu   sync.Mutex    // guards werr
	werr error         // the process's exit status, once done
}

// Start runs bin with a loopback address on a free port and dataDir as its
// embedded store, and waits (up to timeout) for /readyz to answer 200.
// The server's output goes to logOut. Close stops it.
func Start(ctx context.Context, log *slog.Logger, bin, dataDir string, timeout time.Duration, logOut io.Writer) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrServer, err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	// Not CommandContext: Close owns the process's end (SIGINT, then wait).
	cmd := exec.Command(bin, "--addr", addr, "--data-dir", dataDir)
	cmd.Stdout, cmd.Stderr = logOut, logOut
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start %s: %v", ErrServer, bin, err)
	}
	s := &Server{URL: "http://" + addr, cmd: cmd, done: make(chan struct{})}
	go func() { // joined by Close through s.done
		err := cmd.Wait()
		s.mu.Lock()
		s.werr = err
		s.mu.Unlock()
		close(s.done)
	}()
	log.Info("server starting", "addr", addr, "data_dir", dataDir)
	deadline := time.Now().Add(timeout)
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-s.done:
			return nil, fmt.Errorf("%w: exited before ready: %v", ErrServer, s.exitErr())
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), s.Close())
		case <-time.After(100 * time.Millisecond):
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/readyz", nil)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, errors.Join(fmt.Errorf("%w: not ready after %v", ErrServer, timeout), s.Close())
		}
	}
}

func (s *Server) exitErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.werr
}

// Close asks the server to shut down (SIGINT), kills it if it has not
// exited within 10 s, and waits for it. It reports any exit other than a
// clean one. Calling it again returns the same verdict.
func (s *Server) Close() error {
	select {
	case <-s.done: // exited already (or closed before): report how
		if err := s.exitErr(); err != nil {
			return fmt.Errorf("%w: exit: %v", ErrServer, err)
		}
		return nil
	default:
	}
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		return fmt.Errorf("%w: signal: %v", ErrServer, err)
	}
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("%w: killed after 10 s without exiting", ErrServer)
	}
	// The server shuts down cleanly on SIGINT: any other exit (a crash,
	// an error while closing the store) is reported.
	if err := s.exitErr(); err != nil {
		return fmt.Errorf("%w: exit: %v", ErrServer, err)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
