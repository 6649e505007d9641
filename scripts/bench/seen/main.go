// Command seen is the seen-set benchmark of package
// scripts/bench/internal/seenbench, which says what it measures. The same
// tool is `go run ./scripts/bench/cmd/bench seen`.
//
//	go run ./scripts/bench/seen -redis 127.0.0.1:PORT -users 100000 -items 1000
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/seenbench"
)

func main() { cmdmain.Main("seen", 1, seenbench.Run) }
