package config

import (
	"flag"
	"fmt"
	"strings"

	"github.com/simdex/simdex/storage/hbasestore"
)

// DefaultHBaseNamespace is the namespace of the simdex tables unless
// --hbase-namespace says otherwise.
const DefaultHBaseNamespace = "simdex"

// HBase is the connection to HBase that the server, the bulk loader and
// simdexctl share: the same flags, defaults, checks and store
// configuration in each. Commands embed it in their Config, so its fields
// and methods read as the Config's own (cfg.HBaseZK, cfg.HBaseQuorum());
// the methods are named for HBase to read right there.
type HBase struct {
	// HBaseZK is the ZooKeeper quorum, host:port[,host:port...] (--hbase-zk).
	HBaseZK string
	// HBaseNamespace holds the simdex tables (--hbase-namespace).
	HBaseNamespace string
	// HBaseCreateTables creates missing tables with the default schema
	// (--hbase-create-tables, where the command declares it); without it
	// a missing table is refused, naming `simdexctl schema create`.
	HBaseCreateTables bool
}

// DefaultHBase is the HBase configuration of a command line without the
// HBase flags.
func DefaultHBase() HBase { return HBase{HBaseNamespace: DefaultHBaseNamespace} }

// HBaseFlags declares --hbase-zk and --hbase-namespace on fs, bound to h, and
// --hbase-create-tables when refusal (what a missing table does without
// it, e.g. "else refuse to start") is not empty. Every help text starts
// with prefix (e.g. "with --store hbase: ").
func (h *HBase) HBaseFlags(fs *flag.FlagSet, prefix, refusal string) {
	fs.StringVar(&h.HBaseZK, "hbase-zk", h.HBaseZK, prefix+"ZooKeeper quorum of HBase, host:port[,host:port...]")
	fs.StringVar(&h.HBaseNamespace, "hbase-namespace", h.HBaseNamespace, prefix+"namespace of the simdex tables")
	if refusal != "" {
		fs.BoolVar(&h.HBaseCreateTables, "hbase-create-tables", h.HBaseCreateTables, prefix+"create missing tables with the default schema ("+refusal+")")
	}
}

// HBaseQuorum is HBaseZK split at commas, blanks trimmed, empty items
// dropped.
func (h HBase) HBaseQuorum() []string {
	var out []string
	for _, a := range strings.Split(h.HBaseZK, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// HBaseStoreConfig is the HBase store's configuration of h (the quorum, the
// namespace, CreateTables); the command sets the rest.
func (h HBase) HBaseStoreConfig() hbasestore.Config {
	return hbasestore.Config{ZooKeeper: h.HBaseQuorum(), Namespace: h.HBaseNamespace, CreateTables: h.HBaseCreateTables}
}

// ValidateHBase reports what is wrong with h for user, what needs HBase (e.g.
// "--store hbase"): no quorum, an address without a port, a bad
// namespace.
func (h HBase) ValidateHBase(user string) error {
	if len(h.HBaseQuorum()) == 0 {
		return fmt.Errorf("%s needs --hbase-zk (%s): the ZooKeeper quorum, host:port[,host:port...]", user, EnvName("hbase-zk"))
	}
	return h.HBaseStoreConfig().WithDefaults().Validate()
}
