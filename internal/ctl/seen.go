package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/simdex/simdex/seen"
)

var seenVerb = Verb{
	Name:    "seen",
	Usage:   "stats|fold (--data-dir DIR | --hbase-zk HOST:PORT [--hbase-namespace NS]) [--retention 720h] [--top 10]",
	Summary: "per-user seen sets: stats (users, items, bytes per item, fullest users) or fold (deltas into compact cells, drop expired buckets)",
	Run:     runSeen,
}

// seenConfig is the seen verb's configuration.
type seenConfig struct {
	storeChoice
	// Command is stats or fold.
	Command string
	// Retention is the seen retention: older buckets are not counted
	// (stats) or are dropped (fold).
	Retention time.Duration
	// Top is how many of the fullest users stats lists.
	Top int
}

func defaultSeenConfig() seenConfig {
	return seenConfig{storeChoice: defaultStoreChoice(), Retention: seen.DefaultRetention, Top: 10}
}

// Validate reports what is wrong with c (wrapping ErrUsage).
func (c seenConfig) Validate() error {
	if c.Command != "stats" && c.Command != "fold" {
		return fmt.Errorf("%w: want stats or fold", ErrUsage)
	}
	if c.Top < 0 {
		return fmt.Errorf("%w: --top %d", ErrUsage, c.Top)
	}
	return c.validate("seen " + c.Command)
}

// parseSeen parses the verb's arguments (storeChoice.settle says which
// store when both are set).
func parseSeen(env *Env, args []string) (seenConfig, error) {
	c := defaultSeenConfig()
	s := newSet(env, hbaseExample)
	c.flags(s)
	fs := s.Flags()
	fs.DurationVar(&c.Retention, "retention", c.Retention, "seen retention: older buckets are not counted (stats) or are dropped (fold)")
	fs.IntVar(&c.Top, "top", c.Top, "stats: how many of the fullest users to list")
	pos, err := parse(env, s, args)
	if err != nil {
		return c, err
	}
	if len(pos) == 1 {
		c.Command = pos[0] // else "", refused by Validate
	}
	c.settle(s)
	return c, c.Validate()
}

func runSeen(ctx context.Context, env *Env, args []string) error {
	c, err := parseSeen(env, args)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	st, locker, err := c.store(log).Open(ctx)
	if err != nil {
		return err
	}
	cfg := seen.Config{Retention: c.Retention, AdoptStored: true, Locker: locker, Logger: log}
	if err := cfg.Validate(); err != nil {
		return errors.Join(fmt.Errorf("%w: %v", ErrUsage, err), st.Close())
	}
	svc, err := seen.Open(ctx, st, cfg)
	if err != nil {
		return errors.Join(err, st.Close())
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	var runErr, encErr error
	if c.Command == "fold" {
		var s seen.FoldSummary
		s, runErr = svc.FoldAll(ctx)
		out := map[string]any{"rows_scanned": s.RowsScanned, "rows_folded": s.RowsFolded, "deltas_folded": s.DeltasFolded,
			"tombstones_applied": s.TombstonesApplied, "buckets_dropped": s.BucketsDropped, "seconds": s.Duration.Seconds()}
		if s.StoreCompaction != "" {
			out["store_compaction"] = s.StoreCompaction // on HBase: the seen table's flush and major compaction
		}
		encErr = enc.Encode(out)
	} else {
		var s seen.Stats
		s, runErr = svc.Stats(ctx, c.Top)
		if runErr == nil {
			fullest := make([]map[string]any, len(s.Fullest))
			for i, u := range s.Fullest {
				fullest[i] = map[string]any{"user": u.User, "items": u.Items, "bytes": u.Bytes}
			}
			encErr = enc.Encode(map[string]any{"users": s.Users, "items": s.Items, "bytes": s.Bytes, "bytes_per_item": s.BytesPerItem,
				"cells": s.Cells, "delta_cells": s.DeltaCells, "tombstones": s.Tombstones, "fullest": fullest})
		}
	}
	return errors.Join(runErr, encErr, st.Close())
}
