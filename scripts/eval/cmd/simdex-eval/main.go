// Command simdex-eval builds and runs simdex's detection-quality benchmark:
//
//	simdex-eval corpus -out corpus.jsonl      # plain documents from installed packages
//	simdex-eval pairs  -corpus corpus.jsonl -out pairs.jsonl [-seed N] [-kinds a,b]
//	simdex-eval run    -pairs pairs.jsonl -out docs/QUALITY.md
//	simdex-eval explain -pairs pairs.jsonl -kind mirror   # why a kind's pairs are far apart
//	simdex-eval sample -hits content-hits.jsonl -lines content-hits.jsonl.lines -select sel.tsv -out sample.jsonl
//	simdex-eval spotsigs -pairs pairs.jsonl -whole whole.jsonl [-d 2 -c 3]   # the SpotSigs peer alone
//
// scripts/eval/run.sh runs all three after scripts/eval/install.sh; see
// docs/QUALITY.md for what is measured.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, log, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "simdex-eval:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: simdex-eval corpus|pairs|run|explain|sample|spotsigs [flags]")
	}
	switch args[0] {
	case "corpus":
		return cmdCorpus(ctx, log, args[1:])
	case "pairs":
		return cmdPairs(ctx, log, args[1:])
	case "run":
		return cmdRun(ctx, log, args[1:])
	case "explain":
		return cmdExplain(ctx, log, args[1:])
	case "sample":
		return cmdSample(ctx, log, args[1:])
	case "spotsigs":
		return cmdSpotSigs(log, args[1:])
	}
	return fmt.Errorf("unknown command %q (want corpus, pairs, run, explain, sample or spotsigs)", args[0])
}
