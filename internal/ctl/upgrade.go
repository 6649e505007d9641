package ctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/simdex/simdex/internal/config"
	"github.com/simdex/simdex/internal/open"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/pebblestore"
)

var upgradeVerb = Verb{
	Name:  "upgrade",
	Usage: "(--data-dir DIR | --hbase-zk HOST:PORT [--hbase-namespace NS])",
	Summary: "raise an index of format 7 to the current format in place (docs/FORMAT.md); " +
		"run it once every server runs this version: servers shard their counters after they reopen the index",
	Run: runUpgrade,
}

// upgradeConfig is the upgrade verb's configuration: the store, exactly
// one of DataDir and HBaseZK.
type upgradeConfig struct {
	DataDir string
	config.HBase
}

// Validate reports what is wrong with c (wrapping ErrUsage).
func (c upgradeConfig) Validate() error {
	if (c.DataDir == "") == (c.HBaseZK == "") {
		return fmt.Errorf("%w: give exactly one of --data-dir and --hbase-zk", ErrUsage)
	}
	if c.HBaseZK != "" {
		if err := c.ValidateHBase("upgrade"); err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
	}
	return nil
}

// parseUpgrade parses the verb's arguments; when the data directory and
// the quorum come from different sources, the stronger one names the
// store (as for seen).
func parseUpgrade(env *Env, args []string) (upgradeConfig, error) {
	c := upgradeConfig{HBase: config.DefaultHBase()}
	s := newSet(env, hbaseExample)
	fs := s.Flags()
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory of the embedded store (the server must not be running on it)")
	c.HBaseFlags(fs, "", "")
	pos, err := parse(env, s, args)
	if err != nil {
		return c, err
	}
	if len(pos) != 0 {
		return c, fmt.Errorf("%w: upgrade takes no positional arguments", ErrUsage)
	}
	if c.DataDir != "" && c.HBaseZK != "" {
		switch dir, zk := s.Source("data-dir"), s.Source("hbase-zk"); {
		case dir > zk:
			c.HBaseZK = ""
		case zk > dir:
			c.DataDir = ""
		}
	}
	return c, c.Validate()
}

func runUpgrade(ctx context.Context, env *Env, args []string) error {
	c, err := parseUpgrade(env, args)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	where := open.Store{DataDir: c.DataDir, Pebble: pebblestore.Options{Logger: log}}
	if c.HBaseZK != "" {
		where = open.Store{Kind: "hbase", HBase: c.HBaseStoreConfig()}
		where.HBase.Logger = log
	}
	st, _, err := where.Open(ctx)
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
