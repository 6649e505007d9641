// Package hbsrvload fills a fresh simdex index with N random fingerprints
// through the bulk path (base sets written directly, fp and docs cells in
// large batches), on HBase (a namespace, tables created) or the embedded
// store (a directory), so that scripts/bench/hbsrv.sh can measure a server
// over it. Document ids are "seed-<i>", times one fixed instant; the
// fingerprints come from a fixed seed, so both stores hold the same index.
//
//	go run ./scripts/bench/hbsrvload --store hbase --hbase-zk 127.0.0.1:24281 --namespace bench -n 1000000
//	go run ./scripts/bench/hbsrvload --store pebble --data-dir /tmp/bench-pebble -n 1000000
package hbsrvload

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// Run is the tool: its flags in args.
func Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("hbsrvload", flag.ContinueOnError)
	store := fs.String("store", "hbase", "hbase | pebble")
	zk := fs.String("hbase-zk", os.Getenv("SIMDEX_HBASE_ZK"), "HBase ZooKeeper quorum (host:port)")
	ns := fs.String("namespace", "bench", "HBase namespace (must not exist yet)")
	dir := fs.String("data-dir", "", "embedded store directory (must not exist yet)")
	n := fs.Int("n", 1_000_000, "fingerprints")
	indexOnly := fs.Bool("index-only", false, "write the index rows only, no fp/docs cells (lookups of random queries, which have no hits, read nothing else; a 10^7 load on a busy HBase then takes minutes instead of ~25)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return run(ctx, *store, *zk, *ns, *dir, *n, *indexOnly)
}

func run(ctx context.Context, store, zk, ns, dir string, n int, indexOnly bool) error {
	var st storage.Store
	switch store {
	case "hbase":
		if zk == "" {
			return fmt.Errorf("--hbase-zk (or SIMDEX_HBASE_ZK) is required")
		}
		if !strings.HasPrefix(zk, "127.") && !strings.HasPrefix(zk, "localhost:") {
			return fmt.Errorf("refusing non-loopback HBase %s", zk)
		}
		hs, err := hbasestore.Open(ctx, hbasestore.Config{ZooKeeper: []string{zk}, Namespace: ns, CreateTables: true})
		if err != nil {
			return err
		}
		st = hs
	case "pebble":
		if dir == "" {
			return fmt.Errorf("--data-dir is required")
		}
		if _, err := os.Stat(dir); err == nil {
			return fmt.Errorf("%s exists; give a new directory", dir)
		}
		ps, err := pebblestore.Open(dir, pebblestore.Options{})
		if err != nil {
			return err
		}
		st = ps
	default:
		return fmt.Errorf("--store %q: want hbase or pebble", store)
	}
	ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion})
	if err != nil {
		st.Close()
		return err
	}
	defer ix.Close()
	if s, err := ix.StatsWith(ctx, kvindex.StatsOptions{}); err == nil && s.Documents > 0 {
		return fmt.Errorf("the index already holds %d documents; give a new namespace or directory", s.Documents)
	}
	start := time.Now()
	r := rand.New(rand.NewPCG(7, 7))
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bucket := ix.Buckets().Of(at)
	if err := ix.BulkWriter().BaseSets(fps, bucket, 20_000, func(m []storage.Mutation) error { return ix.BulkWriter().Apply(ctx, m) }); err != nil {
		return err
	}
	var muts []storage.Mutation
	for i, f := range fps {
		if indexOnly {
			break
		}
		m, err := ix.BulkWriter().DocCells(kvindex.Document{ID: fmt.Sprintf("seed-%d", i), Fingerprint: fingerprint.Fingerprint(f), Time: at})
		if err != nil {
			return err
		}
		muts = append(muts, m...)
		if len(muts) >= 20_000 {
			if err := ix.BulkWriter().Apply(ctx, muts); err != nil {
				return err
			}
			muts = muts[:0]
		}
	}
	if !indexOnly {
		muts = append(muts, ix.BulkWriter().Counters(int64(n), int64(n))...)
	}
	if err := ix.BulkWriter().Apply(ctx, muts); err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Printf("loaded %d fingerprints into %s in %v (%.0f/s)\n", n, store, el.Round(time.Millisecond), float64(n)/el.Seconds())
	return nil
}
