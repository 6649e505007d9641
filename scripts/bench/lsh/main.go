// Command lsh is the benchmark tool of package scripts/bench/internal/lsh,
// which says what it measures. The same tool is
// `go run ./scripts/bench/cmd/bench lsh`.
//
//	go run ./scripts/bench/lsh -n 1000000 -queries 5000
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/lsh"
)

func main() { cmdmain.Main("lsh", 1, lsh.Run) }
