// Command simdex-spark is the worker and driver helper of the Spark
// backfill (spark/simdex_backfill.py; package internal/sparkjob says what
// each step does). The job ships this binary to its executors and runs:
//
//	simdex-spark prepare --data-dir DIR --load-id ID --meta FILE [--layout-b B --layout-k K --bucket D --bands auto|on|off]
//	simdex-spark map --meta FILE --parts FILE --format docs|fp        (stdin: order TAB where TAB line; stdout: frames)
//	simdex-spark write --meta FILE --parts FILE --part N --out DIR [--superseded FILE]   (stdin: run frames)
//	simdex-spark ingest --data-dir DIR --out DIR --parts FILE --load-id ID --documents N --fingerprints N
//	simdex-spark compare DIR1 DIR2
//
// and for the batch self-dedup (spark/simdex_dedup.py) the dedup-* steps
// of dedup.go.
//
// SIMDEX_SPARK_FAIL_ONCE=PATH makes the first map and the first write
// worker that find no PATH.map (PATH.write) create it and fail halfway:
// for tests of the job's task retries.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/sparkjob"
	"github.com/simdex/simdex/kvindex"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "simdex-spark:", err)
		code := 1
		if errors.Is(err, sparkjob.ErrConfig) || errors.Is(err, sparkjob.ErrNotEmpty) {
			code = 2
		}
		os.Exit(code)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: want a step: prepare, map, write, ingest, compare or dedup-*", sparkjob.ErrConfig)
	}
	step, args := args[0], args[1:]
	if strings.HasPrefix(step, "dedup-") {
		return runDedup(ctx, step, args, stdin, stdout)
	}
	fs := flag.NewFlagSet("simdex-spark "+step, flag.ContinueOnError)
	var (
		dataDir      = fs.String("data-dir", "", "the embedded store's directory")
		loadID       = fs.String("load-id", "", "the load's id (its marker cell)")
		metaPath     = fs.String("meta", "", "the job's meta file")
		partsPath    = fs.String("parts", "", "the job's parts file")
		format       = fs.String("format", "docs", "input lines: docs (JSON Lines) or fp (id,fingerprint,time)")
		part         = fs.Int("part", -1, "the part this write worker writes")
		out          = fs.String("out", "", "the directory of the parts' sstables")
		supPath      = fs.String("superseded", "", "the superseded records file")
		layoutB      = fs.Int("layout-b", fingerprint.DefaultLayout.B, "blocks B of a new index")
		layoutK      = fs.Int("layout-k", fingerprint.DefaultLayout.K, "distance K of a new index")
		bucket       = fs.Duration("bucket", kvindex.DefaultBucketWidth, "time-bucket width of a new index")
		bands        = fs.String("bands", "auto", "LSH band rows: auto, on or off")
		documents    = fs.Int64("documents", 0, "documents loaded (counter)")
		fingerprints = fs.Int64("fingerprints", 0, "fingerprints loaded (counter)")
	)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", sparkjob.ErrConfig, err)
	}
	failOnce := func(stage string) bool {
		p := os.Getenv("SIMDEX_SPARK_FAIL_ONCE")
		if p == "" {
			return false
		}
		f, err := os.OpenFile(p+"."+stage, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return false
		}
		f.Close()
		return true
	}
	switch step {
	case "prepare":
		mode, err := bandsMode(*bands)
		if err != nil {
			return err
		}
		cfg := sparkjob.IndexConfig{Layout: fingerprint.Layout{B: *layoutB, K: *layoutK}, BucketWidth: *bucket, Bands: mode}
		done, err := sparkjob.Prepare(ctx, *dataDir, cfg, *loadID, *metaPath)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]bool{"already_loaded": done})
	case "map":
		meta, parts, err := readMetaParts(*metaPath, *partsPath)
		if err != nil {
			return err
		}
		cfg := sparkjob.MapConfig{Meta: meta, Parts: parts, Format: *format}
		if failOnce("map") {
			cfg.FailAfter = 2
		}
		_, err = sparkjob.Map(ctx, cfg, stdin, stdout)
		return err
	case "write":
		meta, parts, err := readMetaParts(*metaPath, *partsPath)
		if err != nil {
			return err
		}
		cfg := sparkjob.WriteConfig{Meta: meta, Parts: parts, Part: *part, OutDir: *out}
		if *supPath != "" {
			if err := readJSON(*supPath, &cfg.Superseded); err != nil {
				return err
			}
		}
		if failOnce("write") {
			cfg.FailAfter = 2
		}
		st, err := sparkjob.Write(ctx, cfg, stdin)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(st)
	case "ingest":
		var parts sparkjob.Parts
		if err := readJSON(*partsPath, &parts); err != nil {
			return err
		}
		t0 := time.Now()
		st, err := sparkjob.Ingest(ctx, *dataDir, *out, parts.Total(), *loadID, sparkjob.Counts{Documents: *documents, Fingerprints: *fingerprints})
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"files": st.Files, "parts": st.Parts, "already_loaded": st.Loaded, "seconds": time.Since(t0).Seconds()})
	case "compare":
		if fs.NArg() != 2 {
			return fmt.Errorf("%w: compare wants two store directories", sparkjob.ErrConfig)
		}
		diffs, err := sparkjob.CompareStores(ctx, fs.Arg(0), fs.Arg(1), 20)
		if err != nil {
			return err
		}
		for _, d := range diffs {
			fmt.Fprintln(stdout, d)
		}
		if len(diffs) > 0 {
			return fmt.Errorf("the stores differ (first %d differences above)", len(diffs))
		}
		fmt.Fprintln(stdout, "equal")
		return nil
	}
	return fmt.Errorf("%w: unknown step %q", sparkjob.ErrConfig, step)
}

func bandsMode(s string) (kvindex.BandsMode, error) {
	switch s {
	case "auto":
		return kvindex.BandsAuto, nil
	case "on":
		return kvindex.BandsOn, nil
	case "off":
		return kvindex.BandsOff, nil
	}
	return 0, fmt.Errorf("%w: --bands %q: want auto, on or off", sparkjob.ErrConfig, s)
}

func readMetaParts(metaPath, partsPath string) (sparkjob.Meta, sparkjob.Parts, error) {
	var parts sparkjob.Parts
	meta, err := sparkjob.ReadMeta(metaPath)
	if err != nil {
		return meta, parts, err
	}
	return meta, parts, readJSON(partsPath, &parts)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: %v", sparkjob.ErrConfig, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: %v", sparkjob.ErrConfig, path, err)
	}
	return nil
}
