// Command hbattr runs scripts/bench/internal/hbattr; the same tool is
// `go run ./scripts/bench/cmd/bench hbattr`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/simdex/simdex/scripts/bench/internal/hbattr"
)

func main() {
	if err := hbattr.Run(context.Background(), os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "hbattr:", err)
		os.Exit(1)
	}
}
