// Command bandsel runs scripts/bench/internal/bandsel; the same tool is
// `go run ./scripts/bench/cmd/bench bandsel`.
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/bandsel"
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
)

func main() { cmdmain.Main("bandsel", 1, bandsel.Run) }
