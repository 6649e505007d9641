// Command index is the benchmark tool of package scripts/bench/internal/index,
// which says what it measures. The same tool is
// `go run ./scripts/bench/cmd/bench index`.
//
//	go run ./scripts/bench/index -n 10000000 -dist random
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/index"
)

func main() { cmdmain.Main("index", 1, index.Run) }
