// Package open opens the store a command's index lives in, from the
// settings the commands share (an embedded store's directory, or the
// HBase connection), and the index in that store: the one way the server,
// the bulk loader, simdexctl and the benchmarks get from their settings
// to a *kvindex.Index.
package open

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// Store says which store to open and how.
type Store struct {
	// Kind is "hbase" (HBase, through HBase) or "pebble" (the embedded
	// store in DataDir, through Pebble); "" is "pebble".
	Kind string
	// DataDir is the embedded store's directory.
	DataDir string
	// MakeDir creates DataDir when it is missing; without it a missing
	// directory is an error.
	MakeDir bool
	// Pebble and HBase are the options of the embedded store and the
	// configuration of the HBase store.
	Pebble pebblestore.Options
	HBase  hbasestore.Config
}

// Open opens the store, and returns with it the Locker that serializes
// writers across the processes sharing it: HBase's lease locks, nil for
// the embedded store (one process at a time).
func (s Store) Open(ctx context.Context) (storage.Store, storage.Locker, error) {
	switch s.Kind {
	case "hbase":
		hs, err := hbasestore.Open(ctx, s.HBase)
		if err != nil {
			return nil, nil, fmt.Errorf("opening HBase store (namespace %s): %w", s.HBase.WithDefaults().Namespace, err)
		}
		return hs, hs.Locker(), nil
	case "", "pebble":
	default:
		return nil, nil, fmt.Errorf("open: store %q: want pebble or hbase", s.Kind)
	}
	if s.MakeDir {
		if err := os.MkdirAll(s.DataDir, 0o755); err != nil {
			return nil, nil, err
		}
	} else if _, err := os.Stat(s.DataDir); err != nil {
		return nil, nil, fmt.Errorf("data dir: %w", err)
	}
	ps, err := pebblestore.Open(s.DataDir, s.Pebble)
	if err != nil {
		return nil, nil, fmt.Errorf("opening store in %s: %w (is the server running on this directory? one process at a time)", s.DataDir, err)
	}
	return ps, nil, nil
}

// Index opens the store and the index in it with cfg (kvindex.Open: with
// cfg.AdoptStored an existing index keeps its layout and bucket width,
// with cfg.NoCreate a store without an index is refused). The store's
// Locker becomes cfg.Locker unless that is set. The index owns the store;
// when the index cannot be opened the store is closed.
func Index(ctx context.Context, s Store, cfg kvindex.Config) (*kvindex.Index, error) {
	st, locker, err := s.Open(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Locker == nil && locker != nil {
		cfg.Locker = locker
	}
	ix, err := kvindex.Open(ctx, st, cfg)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("opening index: %w", err), st.Close())
	}
	return ix, nil
}
