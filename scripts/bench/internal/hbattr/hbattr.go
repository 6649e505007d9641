// Package hbattr creates simdex's tables in a new namespace with the index
// family's attributes overridden, for measuring what each attribute costs a
// lookup (benchmarks/2026-11-23-hbase-lookup-cost.md). Load the namespace
// afterwards with scripts/bench/hbsrvload (which finds the tables there).
//
//	go run ./scripts/bench/hbattr -namespace e1 IS_MOB=- NEW_VERSION_BEHAVIOR=false
//
// KEY=VALUE sets an attribute of the index family; KEY=- removes it (HBase's
// default applies). With -alter the namespace exists already and only its
// index table is altered (what an admin's shell `alter` does; the files keep
// their old attributes until a major compaction: scripts/hbase/peer.sh
// major-compact ZK NS:index).
package hbattr

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/schema"
	"github.com/simdex/simdex/storage"
)

// Run runs the hbattr tool with args (its flags and arguments, without the
// command name).
func Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("hbattr", flag.ContinueOnError)
	zk := fs.String("hbase-zk", os.Getenv("SIMDEX_HBASE_ZK"), "HBase ZooKeeper quorum (host:port, loopback only)")
	ns := fs.String("namespace", "", "new namespace (required)")
	alter := fs.Bool("alter", false, "alter the index table of an existing namespace instead of creating one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	run := create
	if *alter {
		run = alterIndex
	}
	c, err := connect(*zk, *ns)
	if err != nil {
		return err
	}
	defer c.Close()
	return run(ctx, c, *ns, fs.Args())
}

// connect checks the flags and connects to a loopback HBase.
func connect(zk, ns string) (*hbase.Client, error) {
	if ns == "" || zk == "" {
		return nil, fmt.Errorf("-namespace and -hbase-zk are required")
	}
	if !strings.HasPrefix(zk, "127.") && !strings.HasPrefix(zk, "localhost:") {
		return nil, fmt.Errorf("refusing non-loopback HBase %s", zk)
	}
	return hbase.New(hbase.Config{ZooKeeper: []string{zk}})
}

// override applies KEY=VALUE / KEY=- overrides to a family's attributes.
func override(a map[string]string, overrides []string) error {
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
	return nil
}

// alterIndex changes the index family of an existing namespace.
func alterIndex(ctx context.Context, c *hbase.Client, ns string, overrides []string) error {
	name := schema.Schema{Namespace: ns}.WithDefaults().TableName(storage.TableIndex)
	td, err := c.DescribeTable(ctx, name)
	if err != nil {
		return err
	}
	if err := override(td.Families[0].Attributes, overrides); err != nil {
		return err
	}
	if err := c.ModifyTable(ctx, td); err != nil {
		return fmt.Errorf("alter %s: %w", name, err)
	}
	fmt.Println(schema.Describe(td, true))
	return nil
}

// create creates the namespace ns and simdex's tables in it, the index
// family's attributes overridden.
func create(ctx context.Context, c *hbase.Client, ns string, overrides []string) error {
	s := schema.Schema{Namespace: ns}.WithDefaults()
	if err := c.CreateNamespace(ctx, ns); err != nil {
		return err
	}
	for _, t := range s.Tables() {
		td := t.Descriptor
		if t.Table == storage.TableIndex {
			if err := override(td.Families[0].Attributes, overrides); err != nil {
				return err
			}
			fmt.Println(schema.Describe(&td, true))
		}
		if err := c.CreateTable(ctx, &td, t.SplitKeys); err != nil {
			return fmt.Errorf("create %s: %w", td.Name, err)
		}
	}
	return nil
}
