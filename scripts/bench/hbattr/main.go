// Command hbattr creates simdex's tables in a new namespace with the index
// family's attributes overridden, for measuring what each attribute costs a
// lookup (BENCHMARKS.md, "HBase-side cost per lookup"). Load the namespace
// afterwards with scripts/bench/hbsrvload (which finds the tables there).
//
//	go run ./scripts/bench/hbattr -namespace e1 IS_MOB=- NEW_VERSION_BEHAVIOR=false
//
// KEY=VALUE sets an attribute of the index family; KEY=- removes it (HBase's
// default applies).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/schema"
)

func main() {
	zk := flag.String("hbase-zk", os.Getenv("SIMDEX_HBASE_ZK"), "HBase ZooKeeper quorum (host:port, loopback only)")
	ns := flag.String("namespace", "", "new namespace (required)")
	flag.Parse()
	if err := run(context.Background(), *zk, *ns, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "hbattr:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, zk, ns string, overrides []string) error {
	if ns == "" || zk == "" {
		return fmt.Errorf("-namespace and -hbase-zk are required")
	}
	if !strings.HasPrefix(zk, "127.") && !strings.HasPrefix(zk, "localhost:") {
		return fmt.Errorf("refusing non-loopback HBase %s", zk)
	}
	c, err := hbase.New(hbase.Config{ZooKeeper: []string{zk}})
	if err != nil {
		return err
	}
	defer c.Close()
	s := schema.Schema{Namespace: ns}.WithDefaults()
	if err := c.CreateNamespace(ctx, ns); err != nil {
		return err
	}
	for _, t := range s.Tables() {
		td := t.Descriptor
		if t.Table == kvindex.TableIndex {
			a := td.Families[0].Attributes
			for _, o := range overrides {
				k, v, ok := strings.Cut(o, "=")
				if !ok {
					return fmt.Errorf("override %q: want KEY=VALUE", o)
				}
				if v == "-" {
					delete(a, k)
				} else {
					a[k] = v
				}
			}
			fmt.Println(schema.Describe(&td, true))
		}
		if err := c.CreateTable(ctx, &td, t.SplitKeys); err != nil {
			return fmt.Errorf("create %s: %w", td.Name, err)
		}
	}
	return nil
}
