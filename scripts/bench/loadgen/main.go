// Command loadgen measures a running simdex server over loopback; package
// scripts/bench/internal/loadgen says how. The same command is
// `go run ./scripts/bench/cmd/bench loadgen`.
//
//	go run ./scripts/bench/loadgen --addr 127.0.0.1:8080 --seed 1000000 --mode check-fp --duration 20s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/simdex/simdex/scripts/bench/internal/loadgen"
)

func main() {
	if err := loadgen.Run(context.Background(), os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}
