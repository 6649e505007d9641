// Package hbidle measures the latency of one lookup-shaped HBase Multi (T
// point Gets on the index table) straight through the hbase client, with a
// pause between calls: 0 (back to back, every process hot) or more (each
// call finds the client, the region server and the CPUs idle, as at a
// moderate open-loop rate). Comparing the two separates the idle-path cost
// (thread wake-ups) from the work, without HTTP or a load generator in the
// way.
//
//	go run ./scripts/bench/hbidle -zk 127.0.0.1:23281 -namespace hbrest1000000 -gaps 0,1ms,5ms
package hbidle

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/scripts/bench/internal/hist"
)

// Run runs the hbidle tool with args (its flags and arguments, without the
// command name).
func Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("hbidle", flag.ContinueOnError)
	zk := fs.String("zk", os.Getenv("SIMDEX_HBASE_ZK"), "HBase ZooKeeper host:port")
	ns := fs.String("namespace", "hbrest1000000", "simdex namespace (its index table is read)")
	gaps := fs.String("gaps", "0,1ms,5ms", "pauses between calls, comma-separated")
	n := fs.Int("n", 2000, "calls per gap")
	gets := fs.Int("gets", 4, "gets per Multi (T)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *zk == "" {
		log.Fatal("hbidle: -zk or SIMDEX_HBASE_ZK is required")
	}
	c, err := hbase.New(hbase.Config{ZooKeeper: []string{*zk}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	table := *ns + ":index"
	rnd := rand.New(rand.NewPCG(1, 2))
	call := func() time.Duration {
		acts := make([]hbase.Action, *gets)
		for i := range acts {
			// Index row keys: table id byte, then a 16-bit prefix (B=4).
			acts[i] = &hbase.Get{Row: binary.BigEndian.AppendUint16([]byte{byte(i)}, uint16(rnd.Uint32()))}
		}
		start := time.Now()
		res, err := c.Multi(ctx, table, acts)
		d := time.Since(start)
		if err != nil {
			log.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				log.Fatal(r.Err)
			}
		}
		return d
	}
	for range 500 { // warm-up
		call()
	}
	for _, g := range strings.Split(*gaps, ",") {
		gap, err := time.ParseDuration(g)
		if err != nil {
			log.Fatalf("hbidle: gap %q: %v", g, err)
		}
		ds := make([]time.Duration, 0, *n)
		for range *n {
			if gap > 0 {
				time.Sleep(gap)
			}
			ds = append(ds, call())
		}
		q := hist.New(ds).At
		fmt.Printf("gap %-6s calls %d: p50 %v p90 %v p99 %v\n", gap, len(ds), q(0.5), q(0.9), q(0.99))
	}
	return nil
}
