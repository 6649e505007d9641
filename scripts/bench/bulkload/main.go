// Command bulkload runs scripts/bench/internal/bulkgen; the same tool is
// `go run ./scripts/bench/cmd/bench bulkload`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/simdex/simdex/scripts/bench/internal/bulkgen"
)

func main() {
	if err := bulkgen.Run(context.Background(), os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "bulkload:", err)
		os.Exit(1)
	}
}
