package seenbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/server"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/pebblestore"
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

// The measured region is the same for both clients (lean.go): the
// request's bytes are built before the clock starts (JSON for REST, RESP
// for Redis); inside it, the client writes them on its keep-alive
// connection, reads the whole answer (HTTP: status line, headers,
// Content-Length, the body; RESP: the array reply) and decodes it fully
// into a seen flag per candidate; the flags (and, for REST, the user, the
// kept and dropped ids) are compared with the store's answers after it.
// Neither client uses a general-purpose library inside the clock (net/http's
// client, fmt for RESP): that would time the client, not the server.

// restForms are the REST variants measured: the route and the request's
// "answer" field.
var restForms = []struct{ name, route, answer, label string }{
	{"full", "filter", "", `REST filter, full answer (POST .../seen/filter {"ids": [...]}: kept ids + an object per dropped id)`},
	{"kept", "filter", "kept", `REST filter, "answer": "kept" (only the kept ids)`},
	{"indexes", "filter", "indexes", `REST filter, "answer": "indexes" (only the kept positions)`},
	{"check", "check", "", `REST check (POST .../seen/check: a flag per id, as SMISMEMBER)`},
}

// measureREST runs a warm-up and a measured pass of one REST form against
// the server child at addr, on one keep-alive connection.
func measureREST(child *exec.Cmd, addr, form string, qs []query) filterRun {
	var route, answerField string
	for _, f := range restForms {
		if f.name == form {
			route, answerField = f.route, f.answer
		}
	}
	conn, err := dialHTTP(addr)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.c.Close()
	reqs := restRequests(addr, route, answerField, qs)
	bodies := make([][]byte, len(qs))
	answers := make([]answer, len(qs))
	var run filterRun
	for range 2 { // a warm-up pass, then the measured one
		run = filterRun{}
		settle()
		cpu0, srv0 := processCPU(), childCPU(child.Process.Pid)
		for i := range qs {
			a := &answers[i]
			t := time.Now()
			body, err := conn.roundTrip(reqs[i], bodies[i][:0])
			if err == nil {
				a.reset(len(qs[i].ids))
				err = decodeREST(body, form, qs[i].ids, a)
			}
			el := time.Since(t)
			if err != nil {
				log.Fatalf("REST %s: %v", form, err)
			}
			bodies[i] = body
			run.lat = append(run.lat, el)
		}
		run.clientCPU, run.serverCPU = processCPU()-cpu0, childCPU(child.Process.Pid)-srv0
	}
	for i, q := range qs {
		run.mismatches += restMismatches(&answers[i], form, q)
	}
	return run
}

// restRequests are the HTTP requests of qs to a seen route ("filter" or
// "check") of the server at addr, with answer as the "answer" field
// (omitted when empty).
func restRequests(addr, route, answer string, qs []query) [][]byte {
	reqs := make([][]byte, len(qs))
	for i, q := range qs {
		m := map[string]any{"ids": q.ids}
		if answer != "" {
			m["answer"] = answer
		}
		body, _ := json.Marshal(m)
		reqs[i] = buildRequest(addr, "/v1/users/"+q.user+"/seen/"+route, body)
	}
	return reqs
}

// restMismatches counts the candidates a decoded REST answer gets unlike
// the store: all of them when the answer is not for the user, or when the
// full form's kept and dropped ids do not partition the candidates in
// order with reason "seen".
func restMismatches(a *answer, form string, q query) int {
	if string(a.user) != q.user {
		return len(q.ids)
	}
	if form == "full" {
		k, d := 0, 0
		for j, id := range q.ids {
			if a.seen[j] {
				if d >= len(a.dropIDs) || string(a.dropIDs[d]) != id {
					return len(q.ids)
				}
				d++
			} else {
				if k >= len(a.kept) || string(a.kept[k]) != id {
					return len(q.ids)
				}
				k++
			}
		}
		if k != len(a.kept) || d != len(a.dropIDs) || a.reasons != 0 {
			return len(q.ids)
		}
	}
	n := 0
	for j := range q.ids {
		if a.seen[j] != q.seen[j] {
			n++
		}
	}
	return n
}

// measureRedis runs a warm-up and a measured pass of SMISMEMBER with the
// same candidates, on one connection.
func measureRedis(rc *redisConn, qs []query) filterRun {
	reqs := make([][]byte, len(qs))
	for i, q := range qs {
		reqs[i] = appendCommand(nil, append([]string{"SMISMEMBER", "seen:" + q.user}, q.ids...)...)
	}
	flags := make([][]bool, len(qs))
	var run filterRun
	for range 2 { // a warm-up pass, then the measured one
		run = filterRun{}
		settle()
		cpu0, srv0 := processCPU(), redisCPU(rc)
		for i := range qs {
			t := time.Now()
			_, err := rc.c.Write(reqs[i])
			if err == nil {
				flags[i], err = readFlags(rc.r, flags[i][:0])
			}
			el := time.Since(t)
			if err != nil {
				log.Fatal(err)
			}
			run.lat = append(run.lat, el)
		}
		run.clientCPU, run.serverCPU = processCPU()-cpu0, redisCPU(rc)-srv0
	}
	for i, q := range qs {
		if len(flags[i]) != len(q.ids) {
			run.mismatches += len(q.ids)
			continue
		}
		for j, x := range flags[i] {
			if x != q.seen[j] {
				run.mismatches++
			}
		}
	}
	return run
}

// settle collects this client's garbage before a timed pass. Why: the
// client's heap is large (every query's candidate ids and request bytes),
// and building a pass's requests started collections whose concurrent
// marking (20-40 ms on this heap) then ran beside the first timed requests,
// into whichever client (REST or Redis) happened to be measured then.
func settle() {
	runtime.GC()
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
// returns the child and its address (host:port).
func startServer(dir string, floor bool) (*exec.Cmd, string) {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	// The child is this tool again: the same command (and subcommand).
	args := append(cmdmain.SelfArgs(), "-serve", "-dir", dir)
	if floor {
		args = append(args, "-serve-floor")
	}
	if *pprofAddr != "" {
		args = append(args, "-pprof-addr", *pprofAddr)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	if *childEnv != "" {
		cmd.Env = append(os.Environ(), strings.Split(*childEnv, ",")...)
	}
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
	childStdins[cmd] = in
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		log.Fatalf("server child: %v", err)
	}
	return cmd, strings.TrimSpace(addr)
}

// childStdins are the server children's stdins: closing one stops its child.
var childStdins = map[*exec.Cmd]io.WriteCloser{}

func stopServer(cmd *exec.Cmd) {
	childStdins[cmd].Close()
	if err := cmd.Wait(); err != nil {
		log.Fatalf("server child: %v", err)
	}
}

// serve is the child's side: open the store as the server does (synced
// writes, row cache), serve REST on a loopback port, print the address,
// and stop when stdin is closed.
func serve(ctx context.Context, dir string, floor bool) {
	if floor {
		serveHTTP(ctx, http.HandlerFunc(floorHandler))
		return
	}
	st, svc := openSeen(ctx, dir, pebblestore.Options{})
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
	serveHTTP(ctx, srv)
	if err := errors.Join(ix.Close(), st.Close()); err != nil && !errors.Is(err, kvindex.ErrClosed) {
		log.Fatal(err)
	}
}

// serveHTTP serves h on a loopback port, prints the address, and returns
// when stdin is closed and the server has shut down.
func serveHTTP(ctx context.Context, h http.Handler) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	// The server's own settings (timeouts: a read deadline per request),
	// for the floor child too, so that the floor is the same HTTP stack.
	hs := server.NewHTTPServer(server.DefaultConfig(), h, slog.New(slog.NewTextHandler(os.Stderr, nil)))
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
}
