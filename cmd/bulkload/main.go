// Command bulkload backfills a simdex index (in an embedded store directory,
// or in HBase with --store hbase) from JSON Lines documents or delimited
// fingerprint lines, with bounded memory, resumable from a checkpoint
// directory and shardable by row-key range. See internal/bulkload for the
// pipeline; run with -h for flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/kvindex/hbasestore"
	"github.com/simdex/simdex/kvindex/pebblestore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, bulkload.ErrConfig):
		fmt.Fprintln(os.Stderr, "bulkload:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "bulkload:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bulkload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: bulkload --data-dir DIR [flags] INPUT...
       bulkload --store hbase --hbase-zk HOST:PORT --checkpoint-dir CP [flags] INPUT...

Loads documents or precomputed fingerprints into the simdex index in DIR
(created if missing), or into the index tables in HBase (--store hbase). INPUT is a file, a glob or - (stdin); gzip and zstd
inputs are read transparently. Formats: JSON Lines documents
{"id","title","text","time","attrs"} (fingerprinted here), or delimited
lines "id,fingerprint,time" (comma or tab; fingerprint hex or decimal; time
RFC 3339 or Unix seconds).

LSH band rows (near-copies beyond distance k): --bands means what the
server's flag means. auto (default): a NEW index gets band rows, as the
server would create it; an existing index keeps its choice. on: the same,
but an existing index without band rows is refused. off: a NEW index
without band rows; an existing index with them is refused. In an index with
band rows every text document gets its band cells (one per band, what an
online insert writes; a replaced document's old ones are removed).
Precomputed fingerprints carry no text, hence no band signature: they load
into either kind of index without band cells and are found through the
simhash rows only, while text inserted later gets band cells. Text takes
spill memory for its band cells (32 per document), so a load that may hold
text into an index with band rows spills more often: give --format fp when
stdin (-) carries fingerprints.

The dedup report (--dedup-report) covers pairs within --dedup-k of each
other's simhash; pairs that only share an LSH band (found online by the
band stage and judged by the sketch rule) are not in it.

The embedded store allows one process per directory: stop the server while
loading. After a crash or kill, rerun the same command: it resumes from the
checkpoint directory. --shard i/n builds the i-th of n disjoint row-key
ranges, so n processes (n machines on one HBase cluster) share a backfill;
on the embedded store run the shards one after the other.

On HBase the sorted cells go in the index's write order: the index rows
first, then the fp cells, then the docs cells (so servers reading the tables
never see a document they cannot find). Servers may keep running.
--hbase-import chooses how: hfile writes HFiles cut at the regions'
boundaries into --hbase-hfile-dir and has the region servers bulk-load them
(HBase's own bulk-load path: no memstore, no WAL; the region servers must
read that directory, as --hbase-hfile-remote-dir names it: a standalone
HBase on this machine reads it as it is, a cluster needs it on its HDFS);
puts writes batched puts (--batch-bytes each, --in-flight calls at a time);
auto (the default) tries HFiles and writes puts for the rest of the load
when the region servers cannot read them. See docs/OPERATIONS.md.

Every flag can also be set with an environment variable SIMDEX_<FLAG>
(upper case, '-' as '_', e.g. SIMDEX_HBASE_ZK), as for the server; a flag
wins over the environment.

Repeated ids: the last record of an id wins, as online inserts in input
order would have it, whether the id repeats within the load or is already
in the index. The record it replaces no longer carries its fingerprint (a
fingerprint left without a document is dropped from the index, or
tombstoned when it was stored), and the document and fingerprint counters
count each once. Across the shards of a sharded load an id must not repeat.

Flags:
`)
		fs.PrintDefaults()
	}
	store := fs.String("store", "pebble", "store backend: pebble (embedded, --data-dir) or hbase (--hbase-zk)")
	dataDir := fs.String("data-dir", "", "index directory (embedded store)")
	hbaseZK := fs.String("hbase-zk", "", "with --store hbase: ZooKeeper quorum of HBase, host:port[,host:port...]")
	hbaseNS := fs.String("hbase-namespace", "simdex", "with --store hbase: namespace of the simdex tables")
	hbaseCreate := fs.Bool("hbase-create-tables", false, "with --store hbase: create missing tables with the default schema (else refuse: see `simdexctl schema create`)")
	inFlight := fs.Int("in-flight", 0, "with --store hbase: write batches in flight at once (default 4; the embedded store ingests sorted tables instead)")
	batchBytes := fs.String("batch-bytes", "", "with --store hbase: size of one write batch of sorted cells (default 1MiB)")
	hbaseImport := fs.String("hbase-import", bulkload.ImportAuto, "with --store hbase: hfile (bulk-load HFiles), puts (batched puts) or auto (HFiles, puts if HBase cannot read them)")
	hfileDir := fs.String("hbase-hfile-dir", "", "with --store hbase: where HFiles are written until imported (default CHECKPOINT-DIR/hfiles)")
	hfileRemote := fs.String("hbase-hfile-remote-dir", "", "with --store hbase: --hbase-hfile-dir as the region servers name it, e.g. hdfs://nn:8020/staging/simdex (default: its local absolute path)")
	cpDir := fs.String("checkpoint-dir", "", "checkpoint, sorted runs and rejects (default DIR.bulkload; required with --store hbase)")
	format := fs.String("format", bulkload.FormatAuto, "input format: auto (by name: .jsonl/.json/.ndjson are documents), docs or fp")
	memory := fs.String("memory", "", "memory bound, e.g. 2GiB (default a quarter of RAM)")
	shard := fs.String("shard", "0/1", "build shard i of n (i/n)")
	workers := fs.Int("workers", 0, "fingerprinting workers (default GOMAXPROCS)")
	rejects := fs.String("rejects", "", "rejects file, JSON Lines {file,line,reason} (default in the checkpoint dir)")
	strict := fs.Bool("strict", false, "stop at the first bad line instead of rejecting it")
	dedup := fs.String("dedup-report", "", "write the near-duplicates within the loaded set to this JSON Lines file")
	dedupK := fs.Int("dedup-k", 0, "distance of the dedup report (default the layout's K)")
	clusters := fs.Bool("dedup-clusters", false, "report connected components instead of pairs")
	layoutB := fs.Int("layout-b", fingerprint.DefaultLayout.B, "blocks B of a NEW index")
	layoutK := fs.Int("layout-k", fingerprint.DefaultLayout.K, "distance K of a NEW index")
	bucket := fs.Duration("bucket", kvindex.DefaultBucketWidth, "time-bucket width of a NEW index")
	progress := fs.String("progress", "auto", "progress display: auto (bar on a terminal, log lines otherwise), bar, lines, none")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	memProfile := fs.String("memprofile", "", "write an allocation profile (every allocation of the load, sampled) to this file at the end")
	bands := fs.String("bands", "auto", "LSH band rows: auto (a NEW index gets them, as the server creates it; an existing one keeps its choice), on (refuse an existing index without them) or off (a NEW index without them; refuse one with them)")
	logEvery := fs.Duration("progress-every", 10*time.Second, "interval of progress lines when not on a terminal")
	logLevel := fs.String("log-level", "info", "log level: debug (adds each spill and each table's merge time), info, warn, error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", bulkload.ErrConfig, err)
	}
	if err := applyEnv(fs, getenv); err != nil {
		return err
	}
	switch *store {
	case "pebble":
		if *dataDir == "" {
			return fmt.Errorf("%w: --data-dir is required", bulkload.ErrConfig)
		}
	case "hbase":
		if len(splitList(*hbaseZK)) == 0 {
			return fmt.Errorf("%w: --store hbase needs --hbase-zk (SIMDEX_HBASE_ZK): the ZooKeeper quorum, host:port[,host:port...]", bulkload.ErrConfig)
		}
		if *cpDir == "" {
			return fmt.Errorf("%w: --store hbase needs --checkpoint-dir (a local directory for the checkpoint and sorted runs)", bulkload.ErrConfig)
		}
	default:
		return fmt.Errorf("%w: --store %q: want pebble or hbase", bulkload.ErrConfig, *store)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", bulkload.ErrConfig, *logLevel)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg := bulkload.Config{
		Inputs: fs.Args(), Stdin: stdin, Format: *format, CheckpointDir: *cpDir, Workers: *workers,
		RejectsPath: *rejects, Strict: *strict, DedupPath: *dedup, DedupK: *dedupK, DedupClusters: *clusters,
		ProgressEvery: *logEvery, Logger: log, InFlight: *inFlight,
	}
	if *store == "hbase" {
		// Several Multi calls of ~1 MiB keep the region server busy
		// without making any one call slow (HBase warns above 5,000 rows
		// per call and takes longer pauses on larger ones).
		cfg.IndexFirst = true
		if cfg.InFlight == 0 {
			cfg.InFlight = 4
		}
		cfg.ApplyBytes = 1 << 20
		cfg.Import = bulkload.ImportConfig{Mode: *hbaseImport, Dir: *hfileDir, RemoteDir: *hfileRemote}
	}
	if *batchBytes != "" {
		b, err := bulkload.ParseBytes(*batchBytes)
		if err != nil {
			return err
		}
		cfg.ApplyBytes = int(b)
	}
	if cfg.CheckpointDir == "" {
		cfg.CheckpointDir = *dataDir + ".bulkload"
	}
	var err error
	if cfg.Shard, cfg.Shards, err = bulkload.ParseShard(*shard); err != nil {
		return err
	}
	if *memory != "" {
		if cfg.Memory, err = bulkload.ParseBytes(*memory); err != nil {
			return err
		}
	}
	switch *progress {
	case "auto":
		cfg.Progress, cfg.ProgressTTY = stderr, isTerminal(stderr)
	case "bar":
		cfg.Progress, cfg.ProgressTTY = stderr, true
	case "lines":
		cfg.Progress = stderr
	case "none":
	default:
		return fmt.Errorf("%w: --progress %q", bulkload.ErrConfig, *progress)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return errors.Join(err, f.Close())
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			return err
		}
		// Written after the load: allocs holds the cumulative allocation
		// counts since the start (where the GC work comes from).
		defer func() {
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fmt.Fprintln(stderr, "bulkload: memprofile:", err)
			}
			f.Close()
		}()
	}
	mem := cfg.Memory
	if mem == 0 {
		mem = max(bulkload.MinMemory, totalRAMQuarter())
	}
	debug.SetMemoryLimit(mem)
	// The store's share of the bound: block cache plus the memtables Bulk
	// mode may hold (up to 4 x 64 MiB), capped so the loader keeps some.
	// On HBase: the batches in flight (each built, then encoded once).
	cache := min(mem/8, 128<<20)
	cfg.Memory = mem
	cfg.StoreMemory = min(cache+4*(64<<20), mem/2)
	if *store == "hbase" {
		// Each batch in flight (and one queued per lane) costs about ten
		// times its cell bytes: Mutation structs, the store's per-row
		// coalescing, protobuf and cell blocks.
		cfg.StoreMemory = min(int64(20*cfg.InFlight*max(cfg.ApplyBytes, 1<<20)), mem/2)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}

	kcfg := kvindex.Config{Layout: fingerprint.Layout{B: *layoutB, K: *layoutK}, BucketWidth: *bucket, RecipeVersion: fingerprint.RecipeVersion, Logger: log}
	switch *bands {
	case "auto", "":
		kcfg.Bands = kvindex.BandsAuto
	case "on":
		kcfg.Bands = kvindex.BandsOn
	case "off":
		kcfg.Bands = kvindex.BandsOff
	default:
		return fmt.Errorf("%w: --bands %q: want auto, on or off", bulkload.ErrConfig, *bands)
	}
	var st kvindex.Store
	if *store == "hbase" {
		hs, err := hbasestore.Open(ctx, hbasestore.Config{ZooKeeper: splitList(*hbaseZK), Namespace: *hbaseNS, CreateTables: *hbaseCreate, Logger: log})
		if err != nil {
			return fmt.Errorf("opening HBase store (namespace %s): %w", *hbaseNS, err)
		}
		// Servers may insert meanwhile: a load into rows that exist merges
		// under the cross-process row locks they take too.
		st, kcfg.Locker = hs, hs.Locker()
	} else {
		if err := os.MkdirAll(*dataDir, 0o755); err != nil {
			return err
		}
		ps, err := pebblestore.Open(*dataDir, pebblestore.Options{Logger: log, Bulk: true, CacheBytes: cache})
		if err != nil {
			return fmt.Errorf("%w (is the server running on this directory? one process at a time)", err)
		}
		st = ps
	}
	meta, exists, err := kvindex.ReadMeta(ctx, st)
	if err != nil {
		return errors.Join(err, st.Close())
	}
	if exists {
		kcfg.Layout, kcfg.BucketWidth = meta.Layout, meta.BucketWidth
	}
	ix, err := kvindex.Open(ctx, st, kcfg)
	if err != nil {
		if errors.Is(err, kvindex.ErrMetaMismatch) {
			err = fmt.Errorf("%w: %w", bulkload.ErrConfig, err)
		}
		return errors.Join(err, st.Close())
	}
	sum, runErr := bulkload.Run(ctx, ix, cfg)
	fmt.Fprintln(stderr, "summary:", sum)
	return errors.Join(runErr, ix.Close())
}

// applyEnv sets every flag not given on the command line from its
// SIMDEX_<FLAG> environment variable (as the server does), through the
// flag's own parser.
func applyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] {
			return
		}
		env := "SIMDEX_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); v != "" {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%w: %s=%q: %v", bulkload.ErrConfig, env, v, err))
			}
		}
	})
	return errors.Join(errs...)
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// totalRAMQuarter mirrors bulkload's default memory bound, for the Go
// memory limit.
func totalRAMQuarter() int64 {
	return bulkload.DefaultMemory()
}
