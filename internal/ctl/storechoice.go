package ctl

import (
	"fmt"
	"log/slog"

	"github.com/simdex/simdex/internal/config"
	"github.com/simdex/simdex/internal/open"
	"github.com/simdex/simdex/storage/pebblestore"
)

// storeChoice is the store of a verb that works on either: exactly one of
// DataDir (the embedded store) and HBaseZK.
type storeChoice struct {
	DataDir string
	config.HBase
}

func defaultStoreChoice() storeChoice { return storeChoice{HBase: config.DefaultHBase()} }

// flags registers --data-dir and the HBase flags.
func (c *storeChoice) flags(s *config.Set) {
	fs := s.Flags()
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory of the embedded store (the server must not be running on it)")
	c.HBaseFlags(fs, "", "")
}

// settle keeps one store when both were set from different sources (say
// SIMDEX_DATA_DIR set for the server and --hbase-zk given): the stronger
// source names the store. Call it after parsing.
func (c *storeChoice) settle(s *config.Set) {
	if c.DataDir == "" || c.HBaseZK == "" {
		return
	}
	switch dir, zk := s.Source("data-dir"), s.Source("hbase-zk"); {
	case dir > zk:
		c.HBaseZK = ""
	case zk > dir:
		c.DataDir = ""
	}
}

// validate reports what is wrong with the choice (wrapping ErrUsage);
// verb names the command in HBase errors.
func (c storeChoice) validate(verb string) error {
	if (c.DataDir == "") == (c.HBaseZK == "") {
		return fmt.Errorf("%w: give exactly one of --data-dir and --hbase-zk", ErrUsage)
	}
	if c.HBaseZK != "" {
		if err := c.ValidateHBase(verb); err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
	}
	return nil
}

// store is where to open the chosen store, logging to log.
func (c storeChoice) store(log *slog.Logger) open.Store {
	if c.HBaseZK != "" {
		where := open.Store{Kind: "hbase", HBase: c.HBaseStoreConfig()}
		where.HBase.Logger = log
		return where
	}
	return open.Store{DataDir: c.DataDir, Pebble: pebblestore.Options{Logger: log}}
}
