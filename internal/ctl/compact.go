package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

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

func runCompact(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "compact")
	dir := fs.String("data-dir", "", "directory of the embedded store (the server must not be running on it)")
	retention := fs.Duration("retention", 0, "drop documents and index buckets older than this (0: keep everything)")
	batch := fs.Int("batch-rows", compaction.DefaultBatchRows, "rows per scan batch")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *dir == "" {
		return fmt.Errorf("%w: --data-dir is required and there are no positional arguments", ErrUsage)
	}
	cfg := compaction.Config{Retention: *retention, BatchRows: *batch, Logger: slog.New(slog.NewTextHandler(env.Stderr, nil))}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	ix, err := openExistingIndex(ctx, *dir, cfg.Logger)
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
