// Command bandsel runs scripts/bench/internal/bandsel; the same tool is
// `go run ./scripts/bench/cmd/bench bandsel`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/simdex/simdex/scripts/bench/internal/bandsel"
)

func main() {
	if err := bandsel.Run(context.Background(), os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "bandsel:", err)
		os.Exit(1)
	}
}
