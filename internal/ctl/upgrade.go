package ctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/simdex/simdex/kvindex"
)

var upgradeVerb = Verb{
	Name:  "upgrade",
	Usage: "(--data-dir DIR | --hbase-zk HOST:PORT [--hbase-namespace NS])",
	Summary: "raise an index of format 7 to the current format in place (docs/FORMAT.md); " +
		"run it once every server runs this version: servers shard their counters after they reopen the index",
	Run: runUpgrade,
}

// parseUpgrade parses the verb's arguments: the store, nothing else.
func parseUpgrade(env *Env, args []string) (storeChoice, error) {
	c := defaultStoreChoice()
	s := newSet(env, hbaseExample)
	c.flags(s)
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
	from, to, err := kvindex.UpgradeFormat(ctx, st)
	switch {
	case err != nil:
	case from == to:
		fmt.Fprintf(env.Stdout, "index format %d: nothing to do\n", from)
	default:
		fmt.Fprintf(env.Stdout, "index format %d -> %d\n", from, to)
	}
	return errors.Join(err, st.Close())
}
