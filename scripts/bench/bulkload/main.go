// Command bulkload runs scripts/bench/internal/bulkgen; the same tool is
// `go run ./scripts/bench/cmd/bench bulkload`.
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/bulkgen"
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
)

func main() { cmdmain.Main("bulkload", 1, bulkgen.Run) }
