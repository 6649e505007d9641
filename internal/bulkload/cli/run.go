package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// Run loads cfg.Inputs (stdin for "-") into the index cfg names, which it
// opens or creates, and prints the load's summary to stderr, where its
// log and progress lines go too. An error wrapping bulkload.ErrConfig is
// the configuration's (found before anything is written).
func Run(ctx context.Context, cfg Config, stdin io.Reader, stderr io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	level, _ := cfg.logLevel()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	lcfg, err := cfg.loadConfig(stdin, stderr, log)
	if err != nil {
		return err
	}
	mode, _ := cfg.bandsMode()
	stopProfiles, err := cfg.startProfiles(stderr)
	if err != nil {
		return err
	}
	defer stopProfiles()
	debug.SetMemoryLimit(lcfg.Memory)
	kcfg := kvindex.Config{Layout: fingerprint.Layout{B: cfg.LayoutB, K: cfg.LayoutK}, BucketWidth: cfg.BucketWidth,
		RecipeVersion: fingerprint.RecipeVersion, Logger: log, Bands: mode}
	ix, err := cfg.openIndex(ctx, kcfg, blockCache(lcfg.Memory))
	if err != nil {
		return err
	}
	sum, runErr := bulkload.Run(ctx, ix, lcfg)
	fmt.Fprintln(stderr, "summary:", sum)
	return errors.Join(runErr, ix.Close())
}

// startProfiles starts the CPU profile and prepares the allocation
// profile, as asked; stop writes and closes them.
func (c Config) startProfiles(stderr io.Writer) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if c.CPUProfile != "" {
		f, err := os.Create(c.CPUProfile)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, errors.Join(err, f.Close())
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if c.MemProfile != "" {
		f, err := os.Create(c.MemProfile)
		if err != nil {
			stop()
			return nil, err
		}
		// Written after the load: allocs holds the cumulative allocation
		// counts since the start (where the GC work comes from).
		stops = append(stops, func() {
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fmt.Fprintln(stderr, "bulkload: memprofile:", err)
			}
			f.Close()
		})
	}
	return stop, nil
}

// openIndex opens the store and the index in it, creating the index with
// kcfg when the store has none; an existing index keeps its layout and
// bucket width. cache is the embedded store's block cache.
func (c Config) openIndex(ctx context.Context, kcfg kvindex.Config, cache int64) (*kvindex.Index, error) {
	st, err := c.openStore(ctx, &kcfg, cache)
	if err != nil {
		return nil, err
	}
	meta, exists, err := kvindex.ReadMeta(ctx, st)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	if exists {
		kcfg.Layout, kcfg.BucketWidth = meta.Layout, meta.BucketWidth
	}
	ix, err := kvindex.Open(ctx, st, kcfg)
	if err != nil {
		if errors.Is(err, kvindex.ErrMetaMismatch) {
			err = fmt.Errorf("%w: %w", bulkload.ErrConfig, err)
		}
		return nil, errors.Join(err, st.Close())
	}
	return ix, nil
}

// openStore opens the store: HBase (its cross-process row locks go into
// kcfg) or the embedded store in bulk mode, its directory made if missing.
func (c Config) openStore(ctx context.Context, kcfg *kvindex.Config, cache int64) (storage.Store, error) {
	if c.Store == "hbase" {
		hc := c.HBaseStoreConfig()
		hc.Logger = kcfg.Logger
		hs, err := hbasestore.Open(ctx, hc)
		if err != nil {
			return nil, fmt.Errorf("opening HBase store (namespace %s): %w", c.HBaseNamespace, err)
		}
		// Servers may insert meanwhile: a load into rows that exist merges
		// under the cross-process row locks they take too.
		kcfg.Locker = hs.Locker()
		return hs, nil
	}
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return nil, err
	}
	ps, err := pebblestore.Open(c.DataDir, pebblestore.Options{Logger: kcfg.Logger, Bulk: true, CacheBytes: cache})
	if err != nil {
		return nil, fmt.Errorf("%w (is the server running on this directory? one process at a time)", err)
	}
	return ps, nil
}
