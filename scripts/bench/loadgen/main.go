// Command loadgen measures a running simdex server over loopback; package
// scripts/bench/internal/loadgen says how. The same command is
// `go run ./scripts/bench/cmd/bench loadgen`.
//
//	go run ./scripts/bench/loadgen --addr 127.0.0.1:8080 --seed 1000000 --mode check-fp --duration 20s
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/loadgen"
)

func main() { cmdmain.Main("loadgen", 1, loadgen.Run) }
