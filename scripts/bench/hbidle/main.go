// Command hbidle runs scripts/bench/internal/hbidle; the same tool is
// `go run ./scripts/bench/cmd/bench hbidle`.
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/hbidle"
)

func main() { cmdmain.Main("hbidle", 1, hbidle.Run) }
