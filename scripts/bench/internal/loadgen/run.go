// Package loadgen measures a running simdex server over loopback: it can
// seed N documents by fingerprint (batch inserts), then drives one kind of
// request from C concurrent connections for a fixed time and prints
// requests/s, latency percentiles and the CPU both processes used. It is
// bounded in count and time and talks only to the loopback address it is
// given.
//
//	go run ./scripts/bench/loadgen
//	go run ./scripts/bench/cmd/bench loadgen --addr 127.0.0.1:8080 --seed 1000000 --mode check-fp --duration 20s
//
// It runs on the same cores as the server, so its own CPU counts against
// the server's throughput; it is built like wrk to spend little: one
// goroutine per keep-alive HTTP/1.1 connection, requests written from a
// reused buffer (no net/http client, no JSON encoder), responses read with
// a reused buffer and checked only for what a client relies on (status
// 200/201, a Content-Length body that is the expected JSON object). See
// loadgen.go for the details and the latency notes.
package loadgen

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/simdex/simdex/client"
)

type config struct {
	addr        string
	mode        string
	seed        int
	duration    time.Duration
	warmup      time.Duration
	concurrency int
	rate        float64
	textFile    string
	apiKey      string
	idPrefix    string
	fpSeed      uint64
	batch       int
	docs        string
	source      string
}

// Run parses loadgen's flags from args (without the command name) and
// runs it.
func Run(ctx context.Context, args []string) error {
	var c config
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "server address (loopback)")
	fs.StringVar(&c.mode, "mode", "check-fp", "check-fp | check-text | insert | insert-if-unique | none (seed only) | fp-ceiling (fingerprint the check-text texts in-process on every core: the ceiling of check-text)")
	fs.IntVar(&c.seed, "seed", 0, "insert this many random fingerprints first (batches of 1000)")
	fs.DurationVar(&c.duration, "duration", 15*time.Second, "how long to measure (capped at 5m)")
	fs.DurationVar(&c.warmup, "warmup", 0, "drive load this long before measuring (not counted)")
	fs.IntVar(&c.concurrency, "concurrency", 16, "concurrent connections (one request in flight each)")
	fs.Float64Var(&c.rate, "rate", 0, "open loop: total requests/s, latency counted from each request's scheduled start (0: closed loop, as fast as answers come)")
	fs.StringVar(&c.textFile, "text", "internal/server/testdata/zh_article.txt", "base text for check-text (varied per request)")
	fs.StringVar(&c.apiKey, "api-key", "", "bearer token for writes")
	fs.StringVar(&c.idPrefix, "id-prefix", "load", "id prefix of inserted documents (vary it to insert new ids in a second run)")
	fs.Uint64Var(&c.fpSeed, "fp-seed", 0, "seed of the random fingerprints the clients send (0: from the clock; vary it with --id-prefix)")
	fs.IntVar(&c.batch, "batch", 0, "insert modes: documents per request to /v1/documents/batch (0: single inserts to /v1/documents)")
	fs.StringVar(&c.docs, "docs", "fp", "insert modes: fp (random fingerprints) or text (~1 KB random texts, half Chinese)")
	fs.StringVar(&c.source, "source", "", "check-text: name this source in every check (the server then also reads the text keys' rows scoped to it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return run(ctx, c)
}

func run(ctx context.Context, c config) error {
	if !strings.HasPrefix(c.addr, "127.") && !strings.HasPrefix(c.addr, "localhost:") && !strings.HasPrefix(c.addr, "[::1]:") {
		return fmt.Errorf("refusing non-loopback address %s", c.addr)
	}
	c.duration = min(c.duration, 5*time.Minute)
	c.warmup = min(c.warmup, 5*time.Minute)
	if c.concurrency < 1 || c.concurrency > 1024 {
		return fmt.Errorf("concurrency %d: want 1..1024", c.concurrency)
	}
	if c.batch < 0 || c.batch > 10000 {
		return fmt.Errorf("batch %d: want 0..10000", c.batch)
	}
	if c.seed > 0 {
		if err := seed(ctx, c); err != nil {
			return err
		}
	}
	switch c.mode {
	case "none":
		return nil
	case "fp-ceiling":
		return fpCeiling(c)
	}
	gen, err := newRequestMaker(c)
	if err != nil {
		return err
	}
	res, err := drive(ctx, c, gen)
	if err != nil {
		return err
	}
	res.print(os.Stdout, c)
	return nil
}

// seed inserts c.seed random fingerprints through the batch endpoint with
// the project's Go client (not measured closely), in calls of 1,000.
func seed(ctx context.Context, c config) error {
	opts := []client.Option{client.WithHTTPClient(&http.Client{Timeout: 10 * time.Minute}), client.WithMaxBatch(1000)}
	if c.apiKey != "" {
		opts = append(opts, client.WithAPIKey(c.apiKey))
	}
	cl, err := client.New("http://"+c.addr, opts...)
	if err != nil {
		return err
	}
	start := time.Now()
	r := rand.New(rand.NewPCG(7, 7))
	for done := 0; done < c.seed; {
		n := min(1000, c.seed-done)
		items := make([]client.DocumentInput, n)
		for i := range items {
			items[i].ID = fmt.Sprintf("seed-%d", done+i)
			items[i].Fingerprint = fmt.Sprintf("%016x", r.Uint64())
		}
		resp, err := cl.InsertDocuments(ctx, client.BatchInsertRequest{Items: items})
		if err != nil {
			return fmt.Errorf("seeding: %w", err)
		}
		if len(resp.Errors) > 0 {
			return fmt.Errorf("seeding: item %d: %v", done+resp.Errors[0].Index, resp.Errors[0].Problem)
		}
		done += n
	}
	el := time.Since(start)
	fmt.Printf("seeded %d documents in %v (%.0f docs/s)\n", c.seed, el.Round(time.Millisecond), float64(c.seed)/el.Seconds())
	return nil
}
