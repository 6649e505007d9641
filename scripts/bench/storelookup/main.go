// Command storelookup is the benchmark tool of package
// scripts/bench/internal/storelookup, which says what it measures. The same
// tool is `go run ./scripts/bench/cmd/bench storelookup`.
//
//	go run ./scripts/bench/storelookup -data-dir d1m -input fp1m.csv
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/storelookup"
)

func main() { cmdmain.Main("storelookup", 1, storelookup.Run) }
