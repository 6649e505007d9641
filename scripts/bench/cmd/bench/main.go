// Command bench runs the Go benchmark tools of scripts/bench as
// subcommands, one per tool, each taking the flags of the tool's own
// command:
//
//	go run ./scripts/bench/cmd/bench loadgen --addr 127.0.0.1:8080 --mode check-fp --duration 20s
//	go run ./scripts/bench/cmd/bench help
//
// A subcommand calls the tool package's Run(ctx, args); the tools' own
// commands (go run ./scripts/bench/loadgen, ...) call the same function.
package main

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/simdex/simdex/scripts/bench/internal/bandsel"
	"github.com/simdex/simdex/scripts/bench/internal/bulkgen"
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/compaction"
	"github.com/simdex/simdex/scripts/bench/internal/hbattr"
	"github.com/simdex/simdex/scripts/bench/internal/hbidle"
	"github.com/simdex/simdex/scripts/bench/internal/hbsrvload"
	"github.com/simdex/simdex/scripts/bench/internal/index"
	"github.com/simdex/simdex/scripts/bench/internal/jfrtop"
	"github.com/simdex/simdex/scripts/bench/internal/loadgen"
	"github.com/simdex/simdex/scripts/bench/internal/lsh"
	"github.com/simdex/simdex/scripts/bench/internal/seenbench"
	"github.com/simdex/simdex/scripts/bench/internal/storelookup"
)

// subcommand is one tool: its Run and a line of help.
type subcommand struct {
	run  func(ctx context.Context, args []string) error
	help string
}

var subcommands = map[string]subcommand{
	"bandsel":     {bandsel.Run, "compare LSH band parameters on the quality benchmark's pairs and corpus"},
	"bulkload":    {bulkgen.Run, "write the bulk loader's inputs: precomputed fingerprints or JSON text documents"},
	"compaction":  {compaction.Run, "add delta cells to an embedded index, then time one compaction and its bytes"},
	"hbattr":      {hbattr.Run, "create simdex tables in a namespace with index-family attributes overridden (or alter them)"},
	"hbidle":      {hbidle.Run, "time a lookup-shaped HBase Multi with pauses between calls"},
	"hbsrvload":   {hbsrvload.Run, "fill a fresh index (HBase or embedded) with random fingerprints through the bulk path"},
	"index":       {index.Run, "lookup latency, throughput and bytes of the embedded index against in-memory brute force"},
	"jfrtop":      {jfrtop.Run, "sum a JFR CPU profile of the region server (jfr print on stdin) by thread group and frame"},
	"loadgen":     {loadgen.Run, "drive a running server over loopback: seed documents, then closed or open loops of one request kind"},
	"seen":        {seenbench.Run, "seen sets on the embedded store against Redis holding the same data: load, bytes, filters (store, REST, floor, SMISMEMBER), marks"},
	"storelookup": {storelookup.Run, "store-level lookups (no HTTP) on the embedded store or HBase, closed and open loops, each checked for its document; a loaded index's bytes per fingerprint and lookups against brute force"},
	"lsh":         {lsh.Run, "what LSH band rows cost in bytes and check latency on the embedded store"},
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: bench <subcommand> [flags]   (bench <subcommand> -h for its flags)")
	fmt.Fprintln(os.Stderr, "subcommands:")
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-12s %s\n", n, subcommands[n].help)
	}
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "--help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	sc, ok := subcommands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "bench: unknown subcommand %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	cmdmain.Main("bench "+os.Args[1], 2, sc.run)
}
