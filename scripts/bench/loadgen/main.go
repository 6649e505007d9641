// Command loadgen measures a running simdex server over loopback: it can
// seed N documents by fingerprint (batch inserts), then drives one kind of
// request from C concurrent clients for a fixed time and prints requests/s
// and latency percentiles. It is bounded in count and time and talks only to
// the address it is given.
//
//	go run ./scripts/bench/loadgen --addr 127.0.0.1:8080 --seed 1000000 --mode check-fp --duration 20s
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

type config struct {
	addr        string
	mode        string
	seed        int
	duration    time.Duration
	concurrency int
	textFile    string
	apiKey      string
	idPrefix    string
	fpSeed      uint64
}

func main() {
	var c config
	flag.StringVar(&c.addr, "addr", "127.0.0.1:8080", "server address (loopback)")
	flag.StringVar(&c.mode, "mode", "check-fp", "check-fp | check-text | insert | insert-if-unique | none (seed only)")
	flag.IntVar(&c.seed, "seed", 0, "insert this many random fingerprints first (batches of 1000)")
	flag.DurationVar(&c.duration, "duration", 15*time.Second, "how long to drive load (capped at 5m)")
	flag.IntVar(&c.concurrency, "concurrency", 16, "concurrent clients")
	flag.StringVar(&c.textFile, "text", "internal/server/testdata/zh_article.txt", "base text for check-text (varied per request)")
	flag.StringVar(&c.apiKey, "api-key", "", "bearer token for writes")
	flag.StringVar(&c.idPrefix, "id-prefix", "load", "id prefix of inserted documents (vary it to insert new ids in a second run)")
	flag.Uint64Var(&c.fpSeed, "fp-seed", 99, "seed of the random fingerprints the clients send (vary it with --id-prefix)")
	flag.Parse()
	if err := run(context.Background(), c); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	if !strings.HasPrefix(c.addr, "127.") && !strings.HasPrefix(c.addr, "localhost:") && !strings.HasPrefix(c.addr, "[::1]:") {
		return fmt.Errorf("refusing non-loopback address %s", c.addr)
	}
	if c.duration > 5*time.Minute {
		c.duration = 5 * time.Minute
	}
	tr := &http.Transport{MaxIdleConnsPerHost: c.concurrency * 2, MaxConnsPerHost: c.concurrency * 2}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	base := "http://" + c.addr
	if c.seed > 0 {
		start := time.Now()
		r := rand.New(rand.NewPCG(7, 7))
		for done := 0; done < c.seed; {
			n := min(1000, c.seed-done)
			items := make([]map[string]any, n)
			for i := range items {
				items[i] = map[string]any{"id": fmt.Sprintf("seed-%d", done+i), "fingerprint": fmt.Sprintf("%016x", r.Uint64())}
			}
			if _, err := post(client, base+"/v1/documents/batch", c.apiKey, map[string]any{"items": items}); err != nil {
				return fmt.Errorf("seeding: %w", err)
			}
			done += n
		}
		el := time.Since(start)
		fmt.Printf("seeded %d documents in %v (%.0f docs/s)\n", c.seed, el.Round(time.Millisecond), float64(c.seed)/el.Seconds())
	}
	if c.mode == "none" {
		return nil
	}
	text := ""
	if c.mode == "check-text" {
		b, err := os.ReadFile(c.textFile)
		if err != nil {
			return err
		}
		text = string(b)
	}
	deadline := time.Now().Add(c.duration)
	var (
		mu        sync.Mutex // guards latencies and errs
		latencies []time.Duration
		errs      int
		bytesSent int64
		wg        sync.WaitGroup
	)
	for w := range c.concurrency {
		wg.Add(1)
		go func() { // joined by wg.Wait below; stops at the deadline
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), c.fpSeed))
			var local []time.Duration
			var localErrs int
			var localBytes int64
			for i := 0; time.Now().Before(deadline); i++ {
				var path string
				var body map[string]any
				switch c.mode {
				case "check-fp":
					path, body = "/v1/check", map[string]any{"fingerprint": fmt.Sprintf("%016x", r.Uint64())}
				case "check-text":
					path, body = "/v1/check", map[string]any{"text": fmt.Sprintf("%s 编号%d-%d。", text, w, i), "lang": "zh"}
				case "insert":
					path, body = "/v1/documents", map[string]any{"id": fmt.Sprintf("%s-%d-%d", c.idPrefix, w, i), "fingerprint": fmt.Sprintf("%016x", r.Uint64())}
				case "insert-if-unique":
					path, body = "/v1/documents", map[string]any{"id": fmt.Sprintf("%s-%d-%d", c.idPrefix, w, i), "fingerprint": fmt.Sprintf("%016x", r.Uint64()), "mode": "insert-if-unique"}
				default:
					localErrs++
					return
				}
				t0 := time.Now()
				n, err := post(client, base+path, c.apiKey, body)
				d := time.Since(t0)
				if err != nil {
					localErrs++
					continue
				}
				localBytes += int64(n)
				local = append(local, d)
			}
			mu.Lock()
			latencies = append(latencies, local...)
			errs += localErrs
			bytesSent += localBytes
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(latencies) == 0 {
		return fmt.Errorf("no successful requests (%d errors)", errs)
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))] }
	rate := float64(len(latencies)) / c.duration.Seconds()
	fmt.Printf("mode=%s concurrency=%d duration=%v requests=%d errors=%d rate=%.0f/s p50=%v p90=%v p99=%v max=%v",
		c.mode, c.concurrency, c.duration, len(latencies), errs, rate, pct(.50), pct(.90), pct(.99), latencies[len(latencies)-1])
	if c.mode == "check-text" {
		fmt.Printf(" text_MB/s=%.2f", float64(bytesSent)/c.duration.Seconds()/1e6)
	}
	fmt.Println()
	return nil
}

// post sends a JSON body and returns its size; a non-2xx answer is an error.
func post(client *http.Client, url, key string, body any) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequest("POST", url, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return 0, fmt.Errorf("%s: %d %s", url, resp.StatusCode, bytes.TrimSpace(out))
	}
	return len(b), nil
}
