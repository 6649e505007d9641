// Command jfrtop runs scripts/bench/internal/jfrtop; the same tool is
// `go run ./scripts/bench/cmd/bench jfrtop`.
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/jfrtop"
)

func main() { cmdmain.Main("jfrtop", 1, jfrtop.Run) }
