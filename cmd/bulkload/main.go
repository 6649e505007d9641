// Command bulkload backfills a simdex index (in an embedded store directory,
// or in HBase with --store hbase) from JSON Lines documents or delimited
// fingerprint lines, with bounded memory, resumable from a checkpoint
// directory and shardable by row-key range. See internal/bulkload for the
// pipeline and internal/bulkload/cli for the command; run with -h for
// flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/internal/bulkload/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cfg, err := cli.ParseArgs(os.Args[1:], os.Getenv, os.Stderr)
	if err == nil {
		err = cli.Run(ctx, cfg, os.Stdin, os.Stderr)
	}
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, bulkload.ErrConfig):
		fmt.Fprintln(os.Stderr, "bulkload:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "bulkload:", err)
		os.Exit(1)
	}
}
