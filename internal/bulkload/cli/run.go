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
	"github.com/simdex/simdex/internal/open"
	"github.com/simdex/simdex/kvindex"
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
		RecipeVersion: fingerprint.RecipeVersion, Logger: log, Bands: mode, SourceAttr: cfg.SourceAttr,
		// Beside the servers of an index whose writers take turns, a load
		// writes as a guest of the writer lease, not its holder.
		LeaseGuest: true}
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
// bucket width. The store is HBase (its cross-process row locks go into
// kcfg: servers may insert meanwhile, and a load into rows that exist
// merges under the locks they take too) or the embedded store in bulk
// mode, its directory made if missing, with cache as its block cache.
func (c Config) openIndex(ctx context.Context, kcfg kvindex.Config, cache int64) (*kvindex.Index, error) {
	hc := c.HBaseStoreConfig()
	hc.Logger = kcfg.Logger
	kcfg.AdoptStored = true
	ix, err := open.Index(ctx, open.Store{Kind: c.Store, DataDir: c.DataDir, MakeDir: true,
		Pebble: pebblestore.Options{Logger: kcfg.Logger, Bulk: true, CacheBytes: cache}, HBase: hc}, kcfg)
	if errors.Is(err, kvindex.ErrMetaMismatch) {
		err = fmt.Errorf("%w: %w", bulkload.ErrConfig, err)
	}
	return ix, err
}
