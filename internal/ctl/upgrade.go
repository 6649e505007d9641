package ctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/hbasestore"
)

var upgradeVerb = Verb{
	Name:  "upgrade",
	Usage: "(--data-dir DIR | --hbase-zk HOST:PORT [--hbase-namespace NS] --writers-stopped)",
	Summary: "raise an index of format 7 or 8 to the current format in place (docs/FORMAT.md); " +
		"on HBase it moves the lease locks into the meta table's lock family, so stop every process that writes to the index first " +
		"(servers, bulk loads, compaction) and say so with --writers-stopped",
	Run: runUpgrade,
}

// upgradeArgs are the verb's arguments: the store, and on HBase the
// operator's word that no writer runs.
type upgradeArgs struct {
	storeChoice
	WritersStopped bool
}

func parseUpgrade(env *Env, args []string) (upgradeArgs, error) {
	c := upgradeArgs{storeChoice: defaultStoreChoice()}
	s := newSet(env, hbaseExample)
	c.flags(s)
	s.Flags().BoolVar(&c.WritersStopped, "writers-stopped", false, "no process writes to the index while the upgrade runs (required on HBase, where the locks move)")
	pos, err := parse(env, s, args)
	if err != nil {
		return c, err
	}
	if len(pos) != 0 {
		return c, fmt.Errorf("%w: upgrade takes no positional arguments", ErrUsage)
	}
	c.settle(s)
	return c, c.validate("upgrade")
}

func runUpgrade(ctx context.Context, env *Env, args []string) error {
	c, err := parseUpgrade(env, args)
	if err != nil {
		return err
	}
	st, _, err := c.store(slog.New(slog.NewTextHandler(env.Stderr, nil))).Open(ctx)
	if err != nil {
		return err
	}
	from, to, err := kvindex.UpgradeFormat(ctx, st, func(ctx context.Context, from int) error {
		hs, ok := st.(*hbasestore.Store)
		if !ok {
			return nil // one process at a time: nothing else writes
		}
		// The servers that open the index after this lock in the lock
		// family; one that still runs locks where it did (a server of this
		// version that opened the index before keeps its place until it
		// reopens it), so no writer may run.
		if !c.WritersStopped {
			return fmt.Errorf("%w: raising format %d to %d moves the lease locks into the meta table's lock family: stop every process that writes to the index (servers, bulk loads, compaction), then run upgrade again with --writers-stopped", ErrUsage, from, kvindex.FormatVersion)
		}
		return hs.AddLockFamily(ctx)
	})
	if err == nil {
		printFormatChange(env, from, to)
	}
	return errors.Join(err, st.Close())
}

// printFormatChange prints what a verb that rewrites the index's format
// did: "index format F: nothing to do" or "index format F -> T".
func printFormatChange(env *Env, from, to int) {
	if from == to {
		fmt.Fprintf(env.Stdout, "index format %d: nothing to do\n", from)
		return
	}
	fmt.Fprintf(env.Stdout, "index format %d -> %d\n", from, to)
}
