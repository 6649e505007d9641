// Command hbattr runs scripts/bench/internal/hbattr; the same tool is
// `go run ./scripts/bench/cmd/bench hbattr`.
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/hbattr"
)

func main() { cmdmain.Main("hbattr", 1, hbattr.Run) }
