package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/simdex/simdex/scripts/bench/internal/hist"
	"github.com/simdex/simdex/scripts/bench/internal/pace"
	"github.com/simdex/simdex/scripts/bench/internal/rawhttp"
)

// How the load is driven and measured.
//
// Each connection is one goroutine with one request in flight: it builds
// the request into a reused buffer (the body's varying part, a random
// fingerprint or a numbered sentence appended to the text, is formatted in
// place; the rest is prepared once), writes it, and reads the answer with a
// reused bufio.Reader. An answer counts as a success only if its status is
// the expected one (200 for checks, 201 for inserts), its body has exactly
// Content-Length bytes and it is the expected JSON object (it starts with
// the response's first field). Anything else is an error and the
// connection is re-opened.
//
// Latency is the time from writing the request to reading the last byte
// of the answer; every latency is kept (hist.Samples, 8 bytes a request)
// and the quantiles are exact: the sample of rank ⌊q·n⌋ (hist's Rank).
//
// Coordinated omission: in the default closed loop a slow answer delays
// the connection's next request, so the latencies are those of requests
// that were sent, not of a steady arrival stream, and the tail is
// understated when the server stalls. With --rate R the load is open
// loop: connection i sends its n-th request at start + n*C/R (C
// connections) and its latency is counted from that scheduled time, so
// queueing behind a stall is included (if the server cannot keep up, the
// latencies grow without bound and the achieved rate falls below R).

// requestMaker writes the requests of one mode.
type requestMaker struct {
	mode   string
	head   []byte // request line and fixed headers, up to "Content-Length: "
	text   []byte // check-text: the JSON string of the base text, without its closing quote
	end    []byte // check-text: the body's end after the text (lang, and source when named)
	want   int    // expected status
	want2  int    // a second accepted status (0: none); insert-if-unique answers 200 for a duplicate
	id     []byte // insert modes: the body's start up to the id's variable part
	prefix []byte // the answer body's expected start
	// Insert modes: batch > 0 sends batches of that many documents to
	// /v1/documents/batch (the answer must list no item errors); text
	// sends ~1 KB text documents (bulkgen.RandomText, half Chinese)
	// instead of random fingerprints.
	batch  int
	text1k bool
	suffix []byte // the answer body's expected end (batches: no item errors)
}

func newRequestMaker(c config) (*requestMaker, error) {
	m := &requestMaker{mode: c.mode, want: http.StatusOK}
	path := "/v1/check"
	switch c.mode {
	case "check-fp":
		m.prefix = []byte(`{"fingerprint":"`)
	case "check-text":
		b, err := os.ReadFile(c.textFile)
		if err != nil {
			return nil, err
		}
		q, err := json.Marshal(string(b))
		if err != nil {
			return nil, err
		}
		m.text = q[:len(q)-1]
		m.end = []byte(`。","lang":"zh"}`)
		if c.source != "" {
			src, err := json.Marshal(c.source)
			if err != nil {
				return nil, err
			}
			m.end = append(append([]byte(`。","lang":"zh","source":`), src...), '}')
		}
		m.prefix = []byte(`{"fingerprint":"`)
	case "insert", "insert-if-unique":
		prefix := c.idPrefix
		if prefix == "" {
			prefix = "load"
		}
		m.id = []byte(`{"id":"` + prefix + `-`)
		path, m.want, m.prefix = "/v1/documents", http.StatusCreated, m.id
		if c.mode == "insert-if-unique" {
			m.want2 = http.StatusOK
		}
		switch c.docs {
		case "fp", "":
		case "text":
			m.text1k = true
		default:
			return nil, fmt.Errorf("unknown --docs %q: want fp or text", c.docs)
		}
		if c.batch > 0 {
			m.batch = c.batch
			m.id = []byte(`{"id":"` + prefix + `-`)
			path, m.want, m.want2 = "/v1/documents/batch", http.StatusOK, 0
			m.prefix, m.suffix = []byte(`{"results":[`), []byte(`"errors":[]}`)
		}
	default:
		return nil, fmt.Errorf("unknown mode %q", c.mode)
	}
	var auth []string
	if c.apiKey != "" {
		auth = append(auth, "Authorization: Bearer "+c.apiKey)
	}
	m.head = rawhttp.PostHead(c.addr, path, auth...)
	return m, nil
}

// appendRequest appends request number i of connection w to dst, using
// body as scratch.
func (m *requestMaker) appendRequest(dst, body []byte, r *rand.Rand, w, i int) ([]byte, []byte) {
	body = body[:0]
	switch m.mode {
	case "check-fp":
		body = append(body, `{"fingerprint":"`...)
		body = appendHex16(body, r.Uint64())
		body = append(body, `"}`...)
	case "check-text":
		body = append(body, `{"text":`...)
		body = append(body, m.text...)
		body = append(body, " 编号"...)
		body = strconv.AppendInt(body, int64(w), 10)
		body = append(body, '-')
		body = strconv.AppendInt(body, int64(i), 10)
		body = append(body, m.end...)
	case "insert", "insert-if-unique":
		if m.batch > 0 {
			body = append(body, `{"mode":"`...)
			body = append(body, m.mode...)
			body = append(body, `","items":[`...)
			for j := range m.batch {
				if j > 0 {
					body = append(body, ',')
				}
				body = m.appendDocument(body, r, w, i, j)
				body = append(body, '}')
			}
			body = append(body, `]}`...)
			break
		}
		body = m.appendDocument(body, r, w, i, -1)
		if m.mode == "insert-if-unique" {
			body = append(body, `,"mode":"insert-if-unique"}`...)
		} else {
			body = append(body, '}')
		}
	}
	return rawhttp.AppendPost(dst, m.head, body), body
}

// Text documents are ~1 KB of words drawn at random from a vocabulary of
// textWords pseudo-words (lower-case letters, or two or three common CJK
// characters), so that, as in a real corpus, two documents share few
// sentences and their fingerprints spread over the index: with a small
// vocabulary every document is near every other one's simhash and an
// insert's time goes into judging hundreds of candidates.
const textWords = 20000

var enWords, zhWords = func() ([]string, []string) {
	r := rand.New(rand.NewPCG(1, 1))
	en := make([]string, textWords)
	zh := make([]string, textWords)
	for i := range en {
		b := make([]byte, 3+r.IntN(7))
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		en[i] = string(b)
		w := make([]rune, 2+r.IntN(2))
		for j := range w {
			w[j] = rune(0x4E00 + r.IntN(3500))
		}
		zh[i] = string(w)
	}
	return en, zh
}()

// appendText appends ~1 KB of random words (no character needs JSON
// escaping), English or Chinese, in sentences of 8 to 24 words.
func appendText(dst []byte, r *rand.Rand, chinese bool) []byte {
	start := len(dst)
	for n := 0; len(dst)-start < 1000; n++ {
		if chinese {
			dst = append(dst, zhWords[r.IntN(textWords)]...)
		} else {
			dst = append(dst, enWords[r.IntN(textWords)]...)
		}
		switch {
		case n%16 != 15:
			if !chinese {
				dst = append(dst, ' ')
			}
		case chinese:
			dst = append(dst, "。"...)
		default:
			dst = append(dst, ". "...)
		}
	}
	return dst
}

// appendDocument appends document j of request i of connection w (j < 0:
// a single insert) without its closing brace: its id and a random
// fingerprint, or a random ~1 KB text (the vocabulary needs no JSON
// escaping).
func (m *requestMaker) appendDocument(body []byte, r *rand.Rand, w, i, j int) []byte {
	body = append(body, m.id...)
	body = strconv.AppendInt(body, int64(w), 10)
	body = append(body, '-')
	body = strconv.AppendInt(body, int64(i), 10)
	if j >= 0 {
		body = append(body, '-')
		body = strconv.AppendInt(body, int64(j), 10)
	}
	if m.text1k {
		body = append(body, `","text":"`...)
		body = appendText(body, r, r.IntN(2) == 0)
	} else {
		body = append(body, `","fingerprint":"`...)
		body = appendHex16(body, r.Uint64())
	}
	return append(body, '"')
}

func appendHex16(dst []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for s := 60; s >= 0; s -= 4 {
		dst = append(dst, digits[v>>uint(s)&0xf])
	}
	return dst
}

var errResponse = errors.New("unexpected response")

// readResponse reads one HTTP/1.1 answer into body (reused) and checks
// its status and shape. close reports that the server will close the
// connection.
func (m *requestMaker) readResponse(br *bufio.Reader, body []byte) (_ []byte, bodyLen int, close bool, err error) {
	status, body, close, err := rawhttp.Read(br, body)
	if err != nil {
		return body, 0, true, fmt.Errorf("%w: %w", errResponse, err)
	}
	n := len(body)
	if status != m.want && (m.want2 == 0 || status != m.want2) {
		return body, n, close, fmt.Errorf("%w: status %d: %s", errResponse, status, bytes.TrimSpace(body))
	}
	end := m.suffix
	if end == nil {
		end = []byte("}")
	}
	if !bytes.HasPrefix(body, m.prefix) || !bytes.HasSuffix(bytes.TrimRight(body, "\n"), end) {
		return body, n, close, fmt.Errorf("%w: body %.200q", errResponse, body)
	}
	return body, n, close, nil
}

// result is what one measured run produced.
type result struct {
	h hist.Samples
	// late: in an open loop, how long after its due time each request was
	// written (the load generator's own delay, part of h's latencies).
	late               hist.Samples
	errs               int
	firstErr           error
	bodyBytes          int64
	elapsed            time.Duration
	selfCPU, serverCPU time.Duration
	serverCPUErr       error
	// The server's latency histograms over the run (metrics.go), per
	// stage: bucket counts of this run only.
	stages       []stage
	stageBuckets [][]bucket
}

// drive runs the connections for the warm-up and the measured time.
func drive(ctx context.Context, c config, m *requestMaker) (*result, error) {
	if c.warmup > 0 {
		if _, err := driveOnce(ctx, c, m, c.warmup); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	stages := stagesFor(c.mode, c.batch)
	srv0, srvErr := scrape(ctx, c.addr, stages)
	self0 := selfCPU()
	res, err := driveOnce(ctx, c, m, c.duration)
	if err != nil {
		return nil, err
	}
	res.selfCPU = selfCPU() - self0
	srv1, err := scrape(ctx, c.addr, stages)
	res.serverCPU, res.serverCPUErr = srv1.cpu-srv0.cpu, errors.Join(srvErr, err)
	if res.serverCPUErr == nil {
		res.stages = stages
		for i := range stages {
			res.stageBuckets = append(res.stageBuckets, diffBuckets(srv0.buckets[i], srv1.buckets[i]))
		}
	}
	return res, nil
}

func driveOnce(ctx context.Context, c config, m *requestMaker, d time.Duration) (*result, error) {
	start := time.Now()
	deadline := start.Add(d)
	var (
		mu  sync.Mutex // guards res
		res = &result{}
		wg  sync.WaitGroup
	)
	var interval time.Duration
	if c.rate > 0 {
		interval = time.Duration(float64(c.concurrency) / c.rate * float64(time.Second))
	}
	for w := range c.concurrency {
		wg.Add(1)
		go func() { // joined by wg.Wait below; stops at the deadline
			defer wg.Done()
			var local result
			conn(ctx, c, m, w, start, deadline, interval, &local)
			mu.Lock()
			res.h.Merge(&local.h)
			res.late.Merge(&local.late)
			res.errs += local.errs
			if res.firstErr == nil {
				res.firstErr = local.firstErr
			}
			res.bodyBytes += local.bodyBytes
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	if res.h.Len() == 0 {
		return nil, fmt.Errorf("no successful requests (%d errors, first: %v)", res.errs, res.firstErr)
	}
	return res, nil
}

// conn drives one keep-alive connection until the deadline.
func conn(ctx context.Context, c config, m *requestMaker, w int, start, deadline time.Time, interval time.Duration, res *result) {
	seed := uint64(start.UnixNano())
	if c.fpSeed != 0 {
		seed = c.fpSeed
	}
	r := rand.New(rand.NewPCG(uint64(w), seed))
	var (
		nc      net.Conn
		br      *bufio.Reader
		req     []byte
		body    []byte
		scratch []byte
		dialer  net.Dialer
		sleep   = pace.NewSleeper()
	)
	defer sleep.Close()
	fail := func(err error) {
		res.errs++
		if res.firstErr == nil {
			res.firstErr = err
		}
		if nc != nil {
			nc.Close()
			nc = nil
		}
	}
	defer func() {
		if nc != nil {
			nc.Close()
		}
	}()
	for i := 0; ; i++ {
		t0 := time.Now()
		if interval > 0 {
			// Open loop: the i-th request of this connection is due at a
			// fixed time (connections staggered), whether or not the
			// previous answer was late.
			due := start.Add(time.Duration(i)*interval + time.Duration(w)*interval/time.Duration(c.concurrency))
			if due.After(deadline) {
				return
			}
			sleep.Until(due)
			t0 = due
		} else if !t0.Before(deadline) {
			return
		}
		if nc == nil {
			var err error
			if nc, err = dialer.DialContext(ctx, "tcp", c.addr); err != nil {
				fail(err)
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if br == nil {
				br = bufio.NewReaderSize(nc, 16<<10)
			} else {
				br.Reset(nc)
			}
		}
		req, body = m.appendRequest(req[:0], body, r, w, i)
		if interval > 0 {
			res.late.Add(time.Since(t0))
		}
		if _, err := nc.Write(req); err != nil {
			fail(err)
			continue
		}
		var n int
		var closing bool
		var err error
		scratch, n, closing, err = m.readResponse(br, scratch)
		if err != nil {
			fail(err)
			continue
		}
		res.h.Add(time.Since(t0))
		res.bodyBytes += int64(len(body))
		_ = n
		if closing {
			nc.Close()
			nc = nil
		}
	}
}

// selfCPU is this process's user+system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (r *result) print(out io.Writer, c config) {
	secs := r.elapsed.Seconds()
	loop := "closed"
	if c.rate > 0 {
		loop = fmt.Sprintf("open@%.0f/s", c.rate)
	}
	fmt.Fprintf(out, "mode=%s concurrency=%d loop=%s duration=%v requests=%d errors=%d rate=%.0f/s p50=%v p90=%v p99=%v p99.9=%v max=%v",
		c.mode, c.concurrency, loop, r.elapsed.Round(time.Millisecond), r.h.Len(), r.errs, float64(r.h.Len())/secs,
		r.h.Rank(.50), r.h.Rank(.90), r.h.Rank(.99), r.h.Rank(.999), r.h.Max())
	if c.mode == "check-text" {
		fmt.Fprintf(out, " text_MB/s=%.2f", float64(r.bodyBytes)/secs/1e6)
	}
	if c.batch > 0 {
		fmt.Fprintf(out, " batch=%d docs/s=%.0f", c.batch, float64(r.h.Len())*float64(c.batch)/secs)
	}
	fmt.Fprintf(out, "\ncpu: loadgen %.2fs (%.0f%% of one core, %.1f µs/request)", r.selfCPU.Seconds(), 100*r.selfCPU.Seconds()/secs,
		float64(r.selfCPU.Microseconds())/float64(r.h.Len()))
	if r.serverCPUErr == nil {
		fmt.Fprintf(out, "; server %.2fs (%.0f%% of one core, %.1f µs/request)", r.serverCPU.Seconds(), 100*r.serverCPU.Seconds()/secs,
			float64(r.serverCPU.Microseconds())/float64(r.h.Len()))
	} else {
		fmt.Fprintf(out, "; server CPU unknown (%v)", r.serverCPUErr)
	}
	fmt.Fprintln(out)
	var parts []string
	for i, st := range r.stages {
		p50, ok := quantile(r.stageBuckets[i], .50)
		if !ok {
			continue
		}
		p99, _ := quantile(r.stageBuckets[i], .99)
		p999, _ := quantile(r.stageBuckets[i], .999)
		parts = append(parts, fmt.Sprintf("%s p50=%v p99=%v p99.9=%v", st.name, seconds(p50), seconds(p99), seconds(p999)))
	}
	if len(parts) > 0 {
		fmt.Fprintf(out, "server's histograms (interpolated within doubling buckets): %s\n", strings.Join(parts, "; "))
	}
	if r.late.Len() > 0 {
		fmt.Fprintf(out, "sent after due: p50=%v p99=%v p99.9=%v max=%v (the load generator's own delay, counted in the latencies)\n",
			r.late.Rank(.50), r.late.Rank(.99), r.late.Rank(.999), r.late.Max())
	}
	if r.firstErr != nil {
		fmt.Fprintf(out, "first error: %v\n", r.firstErr)
	}
}

// seconds rounds a histogram estimate in seconds to a readable duration.
func seconds(v float64) time.Duration {
	return time.Duration(v * float64(time.Second)).Round(time.Microsecond)
}
