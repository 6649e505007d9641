package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/simdex/simdex/compaction"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/open"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/pebblestore"
)

var compactVerb = Verb{
	Name:  "compact",
	Usage: "--data-dir DIR [--retention 168h] [--batch-rows N]",
	Summary: "fold deltas and tombstones into base sets, drop data older than --retention, re-chunk big rows " +
		"(the embedded store allows one process per directory: stop the server first, or use its --compact-every timer)",
	Run: runCompact,
}

// compactConfig is the compact verb's configuration.
type compactConfig struct {
	// DataDir is the embedded store's directory (required).
	DataDir string
	// Retention drops documents and index buckets older than this (0:
	// keep everything).
	Retention time.Duration
	// BatchRows is the rows per scan batch.
	BatchRows int
}

func defaultCompactConfig() compactConfig {
	return compactConfig{BatchRows: compaction.DefaultBatchRows}
}

// compaction is the compaction's configuration of c, logging to log.
func (c compactConfig) compaction(log *slog.Logger) compaction.Config {
	return compaction.Config{Retention: c.Retention, BatchRows: c.BatchRows, Logger: log}
}

// Validate reports what is wrong with c (wrapping ErrUsage).
func (c compactConfig) Validate() error {
	if c.DataDir == "" {
		return fmt.Errorf("%w: --data-dir is required and there are no positional arguments", ErrUsage)
	}
	if err := c.compaction(nil).Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return nil
}

// parseCompact parses the verb's arguments.
func parseCompact(env *Env, args []string) (compactConfig, error) {
	c := defaultCompactConfig()
	s := newSet(env, dataDirExample)
	fs := s.Flags()
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory of the embedded store (the server must not be running on it)")
	fs.DurationVar(&c.Retention, "retention", c.Retention, "drop documents and index buckets older than this (0: keep everything)")
	fs.IntVar(&c.BatchRows, "batch-rows", c.BatchRows, "rows per scan batch")
	pos, err := parse(env, s, args)
	if err != nil {
		return c, err
	}
	if len(pos) != 0 {
		return c, fmt.Errorf("%w: --data-dir is required and there are no positional arguments", ErrUsage)
	}
	return c, c.Validate()
}

func runCompact(ctx context.Context, env *Env, args []string) error {
	cc, err := parseCompact(env, args)
	if err != nil {
		return err
	}
	cfg := cc.compaction(slog.New(slog.NewTextHandler(env.Stderr, nil)))
	ix, err := openExistingIndex(ctx, cc.DataDir, cfg.Logger)
	if err != nil {
		return err
	}
	c, err := compaction.New(ix, cfg)
	if err != nil {
		return errors.Join(err, ix.Close())
	}
	s, runErr := c.Run(ctx)
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	encErr := enc.Encode(map[string]any{
		"rows_scanned": s.RowsScanned, "rows_rewritten": s.RowsRewritten, "deltas_folded": s.DeltasFolded,
		"tombstones_applied": s.TombstonesApplied, "tombstones_kept": s.TombstonesKept, "buckets_dropped": s.BucketsDropped,
		"buckets_rechunked": s.BucketsRechunked, "documents_expired": s.DocumentsExpired,
		"bytes_before": s.BytesBefore, "bytes_after": s.BytesAfter, "seconds": s.Duration.Seconds(),
	})
	return errors.Join(runErr, encErr, ix.Close())
}

// openExistingIndex opens the index in an existing embedded-store
// directory with the settings it was created with. A directory without an
// index is an error (compaction never creates one).
func openExistingIndex(ctx context.Context, dir string, log *slog.Logger) (*kvindex.Index, error) {
	ix, err := open.Index(ctx, open.Store{DataDir: dir, Pebble: pebblestore.Options{Logger: log}},
		kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, Logger: log, AdoptStored: true, NoCreate: true})
	if errors.Is(err, kvindex.ErrNoIndex) {
		return nil, fmt.Errorf("%s holds no simdex index", dir)
	}
	return ix, err
}
