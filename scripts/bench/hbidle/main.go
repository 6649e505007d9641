// Command hbidle runs scripts/bench/internal/hbidle; the same tool is
// `go run ./scripts/bench/cmd/bench hbidle`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/simdex/simdex/scripts/bench/internal/hbidle"
)

func main() {
	if err := hbidle.Run(context.Background(), os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "hbidle:", err)
		os.Exit(1)
	}
}
