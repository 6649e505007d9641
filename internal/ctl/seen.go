package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/simdex/simdex/internal/open"
	"github.com/simdex/simdex/seen"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

var seenVerb = Verb{
	Name:    "seen",
	Usage:   "stats|fold (--data-dir DIR | --hbase-zk HOST:PORT [--hbase-namespace NS]) [--retention 720h] [--top 10]",
	Summary: "per-user seen sets: stats (users, items, bytes per item, fullest users) or fold (deltas into compact cells, drop expired buckets)",
	Run:     runSeen,
}

func runSeen(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "seen")
	dir := fs.String("data-dir", "", "directory of the embedded store (the server must not be running on it)")
	zk := fs.String("hbase-zk", "", "HBase ZooKeeper quorum host:port[,host:port...] (instead of --data-dir)")
	ns := fs.String("hbase-namespace", envOr("SIMDEX_HBASE_NAMESPACE", "simdex"), "namespace of the tables on HBase")
	retention := fs.Duration("retention", seen.DefaultRetention, "seen retention: older buckets are not counted (stats) or are dropped (fold)")
	top := fs.Int("top", 10, "stats: how many of the fullest users to list")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (pos[0] != "stats" && pos[0] != "fold") {
		return fmt.Errorf("%w: want stats or fold", ErrUsage)
	}
	if (*dir == "") == (*zk == "") {
		return fmt.Errorf("%w: give exactly one of --data-dir and --hbase-zk", ErrUsage)
	}
	if *top < 0 {
		return fmt.Errorf("%w: --top %d", ErrUsage, *top)
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	where := open.Store{DataDir: *dir, Pebble: pebblestore.Options{Logger: log}}
	if *zk != "" {
		where = open.Store{Kind: "hbase", HBase: hbasestore.Config{ZooKeeper: strings.Split(*zk, ","), Namespace: *ns, Logger: log}}
	}
	st, locker, err := where.Open(ctx)
	if err != nil {
		return err
	}
	cfg := seen.Config{Retention: *retention, AdoptStored: true, Locker: locker, Logger: log}
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
	if pos[0] == "fold" {
		var s seen.FoldSummary
		s, runErr = svc.FoldAll(ctx)
		encErr = enc.Encode(map[string]any{"rows_scanned": s.RowsScanned, "rows_folded": s.RowsFolded, "deltas_folded": s.DeltasFolded,
			"tombstones_applied": s.TombstonesApplied, "buckets_dropped": s.BucketsDropped, "seconds": s.Duration.Seconds()})
	} else {
		var s seen.Stats
		s, runErr = svc.Stats(ctx, *top)
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
