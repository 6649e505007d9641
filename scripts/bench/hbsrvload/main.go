// Command hbsrvload is the benchmark tool of package scripts/bench/internal/hbsrvload,
// which says what it measures. The same tool is
// `go run ./scripts/bench/cmd/bench hbsrvload`.
//
//	go run ./scripts/bench/hbsrvload --store hbase --hbase-zk 127.0.0.1:24281 --namespace bench -n 1000000
package main

import (
	"github.com/simdex/simdex/scripts/bench/internal/cmdmain"
	"github.com/simdex/simdex/scripts/bench/internal/hbsrvload"
)

func main() { cmdmain.Main("hbsrvload", 1, hbsrvload.Run) }
