// Command simdex-spark is the worker and driver helper of the Spark
// backfill (spark/simdex_backfill.py; package internal/sparkjob says what
// each step does). The job ships this binary to its executors and runs:
//
//	simdex-spark prepare STORE --load-id ID --meta FILE [--layout-b B --layout-k K --bucket D --bands auto|on|off --source-attr A]
//	simdex-spark parts --meta FILE --parts FILE      (the parts asked for -> the job's parts, cut at HBase's regions)
//	simdex-spark map --meta FILE --parts FILE --format docs|fp        (stdin: order TAB where TAB line; stdout: frames)
//	simdex-spark write --meta FILE --parts FILE --part N --out DIR [--superseded FILE]   (stdin: run frames)
//	simdex-spark ingest STORE --meta FILE --out DIR --parts FILE --load-id ID --documents N --fingerprints N
//	simdex-spark compare [HBASE] A B      (A, B: an embedded store's directory or hbase:NAMESPACE)
//
// STORE is --data-dir DIR (the embedded store) or --store hbase with the
// HBase settings cmd/bulkload takes (--hbase-zk, --hbase-namespace,
// --hbase-create-tables, TLS and Kerberos), also as SIMDEX_* variables or
// keys of the --config file; HBASE is those settings without --store.
//
// and for the batch self-dedup (spark/simdex_dedup.py) the dedup-* steps
// of dedup.go.
//
// SIMDEX_SPARK_FAIL_ONCE=PATH makes the first map and the first write
// worker that find no PATH.map (PATH.write) create it and fail halfway:
// for tests of the job's task retries. ingest --split-before-import
// splits, before each table's import, the region holding the table's
// first file of two or more rows at its last row: for tests of a region
// that splits between prepare and ingest.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/internal/config"
	"github.com/simdex/simdex/internal/sparkjob"
	"github.com/simdex/simdex/kvindex"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "simdex-spark:", err)
		code := 1
		if errors.Is(err, sparkjob.ErrConfig) {
			code = 2
		}
		os.Exit(code)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: want a step: prepare, parts, map, write, ingest, compare or dedup-*", sparkjob.ErrConfig)
	}
	step, args := args[0], args[1:]
	if strings.HasPrefix(step, "dedup-") {
		return runDedup(ctx, step, args, stdin, stdout)
	}
	store := config.DefaultHBase()
	kind := "pebble"
	set := config.NewSet("simdex-spark "+step, sparkjob.ErrConfig, os.Stderr, config.Usage{
		Synopsis: []string{"simdex-spark " + step + " [flags]"}, Text: "A step of the Spark backfill (spark/simdex_backfill.py)."})
	fs := set.Flags()
	var (
		dataDir      = fs.String("data-dir", "", "the embedded store's directory")
		loadID       = fs.String("load-id", "", "the load's id (its marker cell)")
		metaPath     = fs.String("meta", "", "the job's meta file")
		partsPath    = fs.String("parts", "", "the job's parts file")
		format       = fs.String("format", "docs", "input lines: docs (JSON Lines) or fp (id,fingerprint,time)")
		part         = fs.Int("part", -1, "the part this write worker writes")
		out          = fs.String("out", "", "the directory of the parts' sstables or HFiles")
		supPath      = fs.String("superseded", "", "the superseded records file")
		layoutB      = fs.Int("layout-b", fingerprint.DefaultLayout.B, "blocks B of a new index")
		layoutK      = fs.Int("layout-k", fingerprint.DefaultLayout.K, "distance K of a new index")
		bucket       = fs.Duration("bucket", kvindex.DefaultBucketWidth, "time-bucket width of a new index")
		bands        = fs.String("bands", "auto", "LSH band rows: auto, on or off")
		sourceAttr   = fs.String("source-attr", "", "document attribute naming its source, as cmd/bulkload's --source-attr: empty is the index's (a NEW index: \"source\"), - a NEW index without; an index recording another is refused")
		documents    = fs.Int64("documents", 0, "documents loaded (counter)")
		fingerprints = fs.Int64("fingerprints", 0, "fingerprints loaded (counter)")
		remoteDir    = fs.String("hbase-hfile-remote-dir", "", "with --store hbase: --out as the region servers name it, e.g. hdfs://nn:8020/backfill/hfiles (default: its local absolute path)")
		splitFirst   = fs.Bool("split-before-import", false, "testing: split a region of each table before its HFiles are imported")
		hfileMode    = fs.String("hbase-hfile-mode", "", "with --store hbase: permission of the HFiles, octal (default 0644), as cmd/bulkload's")
	)
	fs.StringVar(&kind, "store", kind, "store backend: pebble (embedded, --data-dir) or hbase (--hbase-zk)")
	store.HBaseFlags(fs, "with --store hbase: ", "else refuse: see `simdexctl schema create`")
	set.Local("load-id", "meta", "parts", "format", "part", "out", "superseded", "layout-b", "layout-k", "bucket", "bands",
		"source-attr", "documents", "fingerprints", "split-before-import")
	if err := set.Parse(args, os.Getenv); err != nil {
		return err
	}
	st := sparkjob.Store{DataDir: *dataDir}
	switch kind {
	case "hbase":
		if err := store.ValidateHBase("--store hbase"); err != nil && step != "compare" {
			return fmt.Errorf("%w: %w", sparkjob.ErrConfig, err)
		}
		hc := store.HBaseStoreConfig()
		st.HBase = &hc
		mode, err := bulkload.ParseHFileMode(*hfileMode)
		if err != nil {
			return fmt.Errorf("%w: --hbase-hfile-mode: %w", sparkjob.ErrConfig, err)
		}
		st.HFileMode = mode
	case "pebble":
		if *dataDir == "" && (step == "prepare" || step == "ingest") {
			return fmt.Errorf("%w: --data-dir is required (or --store hbase)", sparkjob.ErrConfig)
		}
	default:
		return fmt.Errorf("%w: --store %q: want pebble or hbase", sparkjob.ErrConfig, kind)
	}
	failOnce := func(stage string) bool {
		p := os.Getenv("SIMDEX_SPARK_FAIL_ONCE")
		if p == "" {
			return false
		}
		f, err := os.OpenFile(p+"."+stage, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return false
		}
		f.Close()
		return true
	}
	switch step {
	case "prepare":
		mode, err := bandsMode(*bands)
		if err != nil {
			return err
		}
		cfg := sparkjob.IndexConfig{Layout: fingerprint.Layout{B: *layoutB, K: *layoutK}, BucketWidth: *bucket, Bands: mode, SourceAttr: *sourceAttr}
		done, err := sparkjob.Prepare(ctx, st, cfg, *loadID, *metaPath)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]bool{"already_loaded": done})
	case "map":
		meta, parts, err := readMetaParts(*metaPath, *partsPath)
		if err != nil {
			return err
		}
		cfg := sparkjob.MapConfig{Meta: meta, Parts: parts, Format: *format}
		if failOnce("map") {
			cfg.FailAfter = 2
		}
		_, err = sparkjob.Map(ctx, cfg, stdin, stdout)
		return err
	case "write":
		meta, parts, err := readMetaParts(*metaPath, *partsPath)
		if err != nil {
			return err
		}
		cfg := sparkjob.WriteConfig{Meta: meta, Parts: parts, Part: *part, OutDir: *out}
		if *supPath != "" {
			if err := readJSON(*supPath, &cfg.Superseded); err != nil {
				return err
			}
		}
		if failOnce("write") {
			cfg.FailAfter = 2
		}
		st, err := sparkjob.Write(ctx, cfg, stdin)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(st)
	case "parts":
		meta, parts, err := readMetaParts(*metaPath, *partsPath)
		if err != nil {
			return err
		}
		if meta.HBase != nil {
			ix, err := meta.WorkerIndex(ctx)
			if err != nil {
				return err
			}
			if parts, err = parts.WithRegions(ix.Layout().Permuters(), meta.HBase.RegionStarts()); err != nil {
				return err
			}
		} else if err := parts.Validate(); err != nil {
			return err
		}
		b, err := json.Marshal(parts)
		if err != nil {
			return err
		}
		if err := os.WriteFile(*partsPath, b, 0o644); err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]int{"total": parts.Total()})
	case "ingest":
		meta, parts, err := readMetaParts(*metaPath, *partsPath)
		if err != nil {
			return err
		}
		cfg := sparkjob.IngestConfig{Store: st, Meta: meta, OutDir: *out, Parts: parts, LoadID: *loadID,
			Counts: sparkjob.Counts{Documents: *documents, Fingerprints: *fingerprints}, HFileRemoteDir: *remoteDir,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
		if *splitFirst {
			cfg.BeforeImport = sparkjob.SplitFirstFile
		}
		t0 := time.Now()
		ist, err := sparkjob.Ingest(ctx, cfg)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"files": ist.Files, "parts": ist.Parts, "already_loaded": ist.Loaded,
			"hfiles_imported": ist.HFilesImported, "merged_bytes": ist.MergedBytes, "counted": ist.Counted, "seconds": time.Since(t0).Seconds()})
	case "compare":
		if len(set.Args()) != 2 {
			return fmt.Errorf("%w: compare wants two stores (directories or hbase:NAMESPACE)", sparkjob.ErrConfig)
		}
		diffs, err := sparkjob.CompareStores(ctx, store.HBaseStoreConfig(), set.Args()[0], set.Args()[1], 20)
		if err != nil {
			return err
		}
		for _, d := range diffs {
			fmt.Fprintln(stdout, d)
		}
		if len(diffs) > 0 {
			return fmt.Errorf("the stores differ (first %d differences above)", len(diffs))
		}
		fmt.Fprintln(stdout, "equal")
		return nil
	}
	return fmt.Errorf("%w: unknown step %q", sparkjob.ErrConfig, step)
}

func bandsMode(s string) (kvindex.BandsMode, error) {
	switch s {
	case "auto":
		return kvindex.BandsAuto, nil
	case "on":
		return kvindex.BandsOn, nil
	case "off":
		return kvindex.BandsOff, nil
	}
	return 0, fmt.Errorf("%w: --bands %q: want auto, on or off", sparkjob.ErrConfig, s)
}

func readMetaParts(metaPath, partsPath string) (sparkjob.Meta, sparkjob.Parts, error) {
	var parts sparkjob.Parts
	meta, err := sparkjob.ReadMeta(metaPath)
	if err != nil {
		return meta, parts, err
	}
	return meta, parts, readJSON(partsPath, &parts)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: %v", sparkjob.ErrConfig, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: %v", sparkjob.ErrConfig, path, err)
	}
	return nil
}
