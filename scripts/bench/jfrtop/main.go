// Command jfrtop runs scripts/bench/internal/jfrtop; the same tool is
// `go run ./scripts/bench/cmd/bench jfrtop`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/simdex/simdex/scripts/bench/internal/jfrtop"
)

func main() {
	if err := jfrtop.Run(context.Background(), os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "jfrtop:", err)
		os.Exit(1)
	}
}
