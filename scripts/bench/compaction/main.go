// Command compaction is the benchmark tool of package scripts/bench/internal/compaction,
// which says what it measures. The same tool is
// `go run ./scripts/bench/cmd/bench compaction`.
//
//	go run ./scripts/bench/compaction -data-dir DIR -deltas 1000000
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/compaction"
)

func main() { cmdmain.Main("compaction", 1, compaction.Run) }
