// Command indexcheck is the benchmark tool of package scripts/bench/internal/indexcheck,
// which says what it measures. The same tool is
// `go run ./scripts/bench/cmd/bench indexcheck`.
//
//	go run ./scripts/bench/indexcheck -data-dir DIR -input fps.csv -queries 200
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/indexcheck"
)

func main() { cmdmain.Main("indexcheck", 1, indexcheck.Run) }
