package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/server"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/kvindex/pebblestore"
	"github.com/simdex/simdex/seen"
)

// query is one filter: a user and candidate ids; seen is the store's
// answer per candidate, which REST and Redis must reproduce.
type query struct {
	user string
	ids  []string
	seen []bool
}

// filterRun is one client's measured pass.
type filterRun struct {
	lat        []time.Duration
	serverCPU  time.Duration // the server process's CPU over the pass
	clientCPU  time.Duration // this process's CPU over the pass
	mismatches int           // candidates answered unlike the store
}

// The measured region is the same for both clients: the request's bytes
// are built before the clock starts (JSON for REST, RESP for Redis), the
// clock stops when the whole answer has been read (the HTTP body to its
// end; the RESP reply to its last element, framing parsed only), and the
// answers are decoded and compared after it. (Until session 5 the Redis
// client formatted its command with fmt inside the clock and decoded the
// reply into boxed values there, while REST did neither: Redis' figure
// carried ~client work REST's did not.)

// measureREST runs a warm-up and a measured pass of POST
// /v1/users/{user}/seen/<route> ("filter" or "check") against the server
// child, with the plain-ids body.
func measureREST(child *exec.Cmd, base, route string, qs []query) filterRun {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	bodies := make([][]byte, len(qs))
	urls := make([]string, len(qs))
	for i, q := range qs {
		bodies[i], _ = json.Marshal(map[string]any{"ids": q.ids})
		urls[i] = base + "/v1/users/" + q.user + "/seen/" + route
	}
	answers := make([][]byte, len(qs))
	var run filterRun
	for range 2 { // a warm-up pass, then the measured one
		run = filterRun{}
		cpu0, srv0 := processCPU(), childCPU(child.Process.Pid)
		for i := range qs {
			buf := bytes.NewBuffer(answers[i][:0])
			t := time.Now()
			resp, err := client.Post(urls[i], "application/json", bytes.NewReader(bodies[i]))
			if err != nil {
				log.Fatal(err)
			}
			_, err = buf.ReadFrom(resp.Body)
			resp.Body.Close()
			el := time.Since(t)
			if err != nil || resp.StatusCode != 200 {
				log.Fatalf("REST %s: %d %v", route, resp.StatusCode, err)
			}
			answers[i] = buf.Bytes()
			run.lat = append(run.lat, el)
		}
		run.clientCPU, run.serverCPU = processCPU()-cpu0, childCPU(child.Process.Pid)-srv0
	}
	for i, q := range qs {
		var got []bool
		if route == "check" {
			got = checkAnswer(answers[i], q)
		} else {
			got = filterAnswer(answers[i], q)
		}
		for j := range q.ids {
			if got == nil || got[j] != q.seen[j] {
				run.mismatches++
			}
		}
	}
	return run
}

// checkAnswer decodes a check answer ({"user", "seen": [bools]}).
func checkAnswer(raw []byte, q query) []bool {
	var cr struct {
		User string `json:"user"`
		Seen []bool `json:"seen"`
	}
	if err := json.Unmarshal(raw, &cr); err != nil {
		log.Fatal(err)
	}
	if cr.User != q.user || len(cr.Seen) != len(q.ids) {
		log.Fatalf("REST check answered %d flags for user %q", len(cr.Seen), cr.User)
	}
	return cr.Seen
}

// filterAnswer decodes a filter answer into a seen flag per candidate;
// nil when kept and dropped do not partition the candidates in order.
func filterAnswer(raw []byte, q query) []bool {
	var fr struct {
		User    string   `json:"user"`
		Kept    []string `json:"kept"`
		Dropped []struct {
			Index  int    `json:"index"`
			ID     string `json:"id"`
			Reason string `json:"reason"`
		} `json:"dropped"`
	}
	if err := json.Unmarshal(raw, &fr); err != nil {
		log.Fatal(err)
	}
	got := make([]bool, len(q.ids))
	for _, d := range fr.Dropped {
		if d.Index < 0 || d.Index >= len(q.ids) || q.ids[d.Index] != d.ID || d.Reason != seen.ReasonSeen {
			return nil
		}
		got[d.Index] = true
	}
	k := 0
	for j, id := range q.ids {
		if !got[j] {
			if k >= len(fr.Kept) || fr.Kept[k] != id {
				return nil
			}
			k++
		}
	}
	if fr.User != q.user || k != len(fr.Kept) {
		return nil
	}
	return got
}

// measureRedis runs a warm-up and a measured pass of SMISMEMBER with the
// same candidates, on one connection.
func measureRedis(rc *redisConn, qs []query) filterRun {
	reqs := make([][]byte, len(qs))
	for i, q := range qs {
		reqs[i] = appendCommand(nil, append([]string{"SMISMEMBER", "seen:" + q.user}, q.ids...)...)
	}
	answers := make([][]byte, len(qs))
	var run filterRun
	for range 2 { // a warm-up pass, then the measured one
		run = filterRun{}
		cpu0, srv0 := processCPU(), redisCPU(rc)
		for i := range qs {
			t := time.Now()
			if _, err := rc.w.Write(reqs[i]); err != nil {
				log.Fatal(err)
			}
			if err := rc.w.Flush(); err != nil {
				log.Fatal(err)
			}
			raw, err := readRaw(rc.r, answers[i][:0])
			el := time.Since(t)
			if err != nil {
				log.Fatal(err)
			}
			answers[i] = raw
			run.lat = append(run.lat, el)
		}
		run.clientCPU, run.serverCPU = processCPU()-cpu0, redisCPU(rc)-srv0
	}
	for i, q := range qs {
		v, err := parseReply(answers[i])
		if err != nil {
			log.Fatal(err)
		}
		a, ok := v.([]any)
		if !ok || len(a) != len(q.ids) {
			log.Fatalf("SMISMEMBER answered %v", v)
		}
		for j, x := range a {
			if (x == int64(1)) != q.seen[j] {
				run.mismatches++
			}
		}
	}
	return run
}

// appendCommand appends args as a RESP array of bulk strings.
func appendCommand(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// maxReplyElems bounds an array reply's length (SMISMEMBER of 1,000 ids
// answers 1,000) so that a corrupt length cannot make readRaw loop long.
const maxReplyElems = 1 << 20

var errReply = errors.New("redis: malformed reply")

// readRaw appends the bytes of one complete RESP2 reply from r to dst,
// parsing only its framing (line types, bulk lengths, array counts).
func readRaw(r *bufio.Reader, dst []byte) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return dst, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return dst, fmt.Errorf("%w: line %q", errReply, line)
	}
	dst = append(dst, line...)
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', '-', ':':
		return dst, nil
	case '$':
		n, err := strconv.Atoi(string(body))
		if err != nil || n < -1 {
			return dst, fmt.Errorf("%w: bulk length %q", errReply, body)
		}
		if n < 0 {
			return dst, nil
		}
		start := len(dst)
		dst = append(dst, make([]byte, n+2)...)
		if _, err := io.ReadFull(r, dst[start:]); err != nil {
			return dst, err
		}
		return dst, nil
	case '*':
		n, err := strconv.Atoi(string(body))
		if err != nil || n < -1 || n > maxReplyElems {
			return dst, fmt.Errorf("%w: array length %q", errReply, body)
		}
		for range max(n, 0) {
			if dst, err = readRaw(r, dst); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	return dst, fmt.Errorf("%w: type %q", errReply, line[0])
}

// parseReply decodes one whole RESP2 reply (as readRaw returns it):
// strings, errors (as error values), integers (int64), bulk strings (nil
// for a null one) and arrays ([]any).
func parseReply(b []byte) (any, error) {
	v, rest, err := parseValue(b, 0)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errReply, len(rest))
	}
	return v, nil
}

func parseValue(b []byte, depth int) (any, []byte, error) {
	if depth > 32 {
		return nil, nil, fmt.Errorf("%w: nested too deep", errReply)
	}
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 {
		return nil, nil, fmt.Errorf("%w: no line", errReply)
	}
	body, rest := string(b[1:i]), b[i+2:]
	switch b[0] {
	case '+':
		return body, rest, nil
	case '-':
		return errors.New("redis: " + body), rest, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: integer %q", errReply, body)
		}
		return n, rest, nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return nil, nil, fmt.Errorf("%w: bulk length %q", errReply, body)
		}
		if n < 0 {
			return nil, rest, nil
		}
		if len(rest) < n+2 || rest[n] != '\r' || rest[n+1] != '\n' {
			return nil, nil, fmt.Errorf("%w: bulk string of %d bytes truncated", errReply, n)
		}
		return string(rest[:n]), rest[n+2:], nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxReplyElems || n > len(rest)/3 {
			return nil, nil, fmt.Errorf("%w: array length %q", errReply, body)
		}
		if n < 0 {
			return nil, rest, nil
		}
		out := make([]any, n)
		for k := range out {
			if out[k], rest, err = parseValue(rest, depth+1); err != nil {
				return nil, nil, err
			}
		}
		return out, rest, nil
	}
	return nil, nil, fmt.Errorf("%w: type %q", errReply, b[0])
}

// redisCPU is the Redis server's CPU time so far (INFO cpu:
// used_cpu_sys + used_cpu_user, all its threads).
func redisCPU(rc *redisConn) time.Duration {
	v, err := rc.do("INFO", "cpu")
	if err != nil {
		log.Fatal(err)
	}
	var total float64
	for _, l := range strings.Split(v.(string), "\n") {
		for _, k := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if s, ok := strings.CutPrefix(strings.TrimSpace(l), k); ok {
				f, err := strconv.ParseFloat(s, 64)
				if err != nil {
					log.Fatal(err)
				}
				total += f
			}
		}
	}
	return time.Duration(total * float64(time.Second))
}

// childCPU is the CPU time (user + system) of process pid so far, from
// /proc/PID/stat (clock ticks of 10 ms: USER_HZ is 100 on Linux).
func childCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		log.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) in
	// parentheses: state is field 3, utime 14, stime 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		log.Fatal(err)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// startServer starts this program with -serve on the store directory and
// returns the child and its base URL.
func startServer(dir string) (*exec.Cmd, string) {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	args := []string{"-serve", "-dir", dir}
	if *pprofAddr != "" {
		args = append(args, "-pprof-addr", *pprofAddr)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	childStdin = in
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		log.Fatalf("server child: %v", err)
	}
	return cmd, "http://" + strings.TrimSpace(addr)
}

// childStdin is the server child's stdin: closing it stops the child.
var childStdin io.WriteCloser

func stopServer(cmd *exec.Cmd) {
	childStdin.Close()
	if err := cmd.Wait(); err != nil {
		log.Fatalf("server child: %v", err)
	}
}

// serve is the child's side: open the store as the server does (synced
// writes, row cache), serve REST on a loopback port, print the address,
// and stop when stdin is closed.
func serve(ctx context.Context, dir string) {
	st, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	svc, err := seen.Open(ctx, st, seen.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion})
	if err != nil {
		log.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.DataDir = dir
	srv, err := server.New(cfg, ix, nil, nil, prometheus.NewRegistry(), server.WithSeen(svc))
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }() // stopped by Shutdown below, joined through done
	fmt.Println(ln.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it
	if err := hs.Shutdown(ctx); err != nil {
		log.Print(err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Print(err)
	}
	if err := errors.Join(ix.Close(), st.Close()); err != nil && !errors.Is(err, kvindex.ErrClosed) {
		log.Fatal(err)
	}
}
