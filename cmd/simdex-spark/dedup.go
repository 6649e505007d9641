package main

// The batch self-dedup's steps (spark/simdex_dedup.py runs them):
//
//	simdex-spark dedup-map --format docs|fp [--layout-b B --layout-k K --k N --bands --source-attr A]   (stdin: order TAB where TAB line; stdout: frames)
//	simdex-spark dedup-judge [--k N --policy P]                  (stdin: pair frames; stdout: confirmed and end frames)
//	simdex-spark dedup-components                                (stdin: id_a TAB id_b lines; stdout: id TAB cluster lines)
//	simdex-spark dedup-reference --out DIR [--format --layout-b --layout-k --k --bands --policy --source-attr] FILE...
//	simdex-spark dedup-compare [--k N --bands] REFERENCE_DIR JOB_DIR
//
// dedup-reference is the single-process reference (brute force over every
// pair, union-find); dedup-compare checks a job's output against it.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/sparkjob"
	"github.com/simdex/simdex/kvindex"
)

func runDedup(ctx context.Context, step string, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("simdex-spark "+step, flag.ContinueOnError)
	var (
		format  = fs.String("format", "docs", "input lines: docs (JSON Lines) or fp (id,fingerprint,time)")
		layoutB = fs.Int("layout-b", fingerprint.DefaultLayout.B, "blocks B of the block keys' layout")
		layoutK = fs.Int("layout-k", fingerprint.DefaultLayout.K, "distance K of the block keys' layout (at least --k)")
		k       = fs.Int("k", fingerprint.DefaultLayout.K, "largest distance of a pair")
		bands   = fs.Bool("bands", false, "also pairs beyond k that share an LSH band (texts)")
		policy  = fs.String("policy", sparkjob.DefaultDedupPolicy.String(), "relations that confirm a pair, in either direction: default, copy or near_identical")
		out     = fs.String("out", "", "dedup-reference: the output directory")
		srcAttr = fs.String("source-attr", kvindex.DefaultSourceAttr, "document attribute naming its source (site, list), whose sentences are also counted per source to learn its template, as the server's and cmd/bulkload's flag for a new index: - for none (empty: \"source\")")
	)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", sparkjob.ErrConfig, err)
	}
	pol, err := sparkjob.ParseDedupPolicy(*policy)
	if err != nil {
		return err
	}
	cfg := sparkjob.DedupConfig{Layout: fingerprint.Layout{B: *layoutB, K: *layoutK}, K: *k, Format: *format, Bands: *bands, Policy: pol,
		SourceAttr: *srcAttr}
	switch step {
	case "dedup-map":
		if dedupFailOnce("dedup-map") {
			cfg.FailAfter = 2
		}
		_, err := sparkjob.DedupMap(ctx, cfg, stdin, stdout)
		return err
	case "dedup-judge":
		if dedupFailOnce("dedup-judge") {
			cfg.FailAfter = 2
		}
		_, err := sparkjob.DedupJudge(ctx, cfg, stdin, stdout)
		return err
	case "dedup-components":
		_, _, err := sparkjob.ComponentsStream(stdin, stdout)
		return err
	case "dedup-reference":
		if *out == "" || fs.NArg() == 0 {
			return fmt.Errorf("%w: dedup-reference wants --out DIR and input files", sparkjob.ErrConfig)
		}
		t0 := time.Now()
		res, err := sparkjob.DedupReference(ctx, cfg, fs.Args())
		if err != nil {
			return err
		}
		if err := sparkjob.WriteDedupResult(*out, res); err != nil {
			return err
		}
		b, _ := json.Marshal(res.Summary)
		fmt.Fprintf(stdout, "reference summary: %s (%.1f s)\n", b, time.Since(t0).Seconds())
		return nil
	case "dedup-compare":
		if fs.NArg() != 2 {
			return fmt.Errorf("%w: dedup-compare wants the reference's and the job's output directories", sparkjob.ErrConfig)
		}
		want, err := sparkjob.ReadDedupOutput(fs.Arg(0))
		if err != nil {
			return err
		}
		got, err := sparkjob.ReadDedupOutput(fs.Arg(1))
		if err != nil {
			return err
		}
		diffs := sparkjob.CompareDedup(want, got, *k, *bands, 20)
		for _, d := range diffs {
			fmt.Fprintln(stdout, d)
		}
		if len(diffs) > 0 {
			return fmt.Errorf("the job's dedup differs from the reference (first %d differences above)", len(diffs))
		}
		fmt.Fprintf(stdout, "equal: %d confirmed pairs, %d documents in %d clusters\n", len(got.Pairs), len(got.Clusters), got.Summary.Clusters)
		return nil
	}
	return fmt.Errorf("%w: unknown step %q", sparkjob.ErrConfig, step)
}

// dedupFailOnce is the dedup steps' SIMDEX_SPARK_FAIL_ONCE: true for the
// first worker of a stage that finds no PATH.stage (it creates it).
func dedupFailOnce(stage string) bool {
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
