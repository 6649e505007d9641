// Package cli is the bulkload command (cmd/bulkload): its flags, SIMDEX_*
// environment variables and config file (ParseArgs, through
// internal/config), their checks (Config.Validate) and a load with them
// (Run): the store opened, the index opened or created, internal/bulkload
// run, the summary printed.
package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/internal/config"
	"github.com/simdex/simdex/kvindex"
)

// Config is the command's configuration, one field per flag. Sizes and
// the shard stay as written (Validate parses them), so that a bad value
// gets the same error from a flag, its environment variable or the config
// file.
type Config struct {
	// Store is the backend: "pebble" (embedded, DataDir) or "hbase".
	Store   string
	DataDir string
	// HBase is the connection to HBase, shared with the other commands:
	// HBaseZK is the ZooKeeper quorum, host:port[,host:port...].
	config.HBase
	// InFlight and BatchBytes: write batches in flight and the size of
	// one, on HBase (0 and "": 4 and 1MiB).
	InFlight   int
	BatchBytes string
	// HBaseImport is bulkload.ImportHFile, ImportPuts or ImportAuto;
	// HFileDir and HFileRemoteDir are where the HFiles are written, as
	// this process and as the region servers name it.
	HBaseImport    string
	HFileDir       string
	HFileRemoteDir string
	// HFileMode is the HFiles' permission, octal ("": 0644).
	HFileMode string
	// CheckpointDir defaults to DataDir + ".bulkload".
	CheckpointDir string
	Format        string
	// Memory is the memory bound, e.g. "2GiB" ("": a quarter of RAM).
	Memory string
	// Shard is "i/n".
	Shard         string
	Workers       int
	RejectsPath   string
	Strict        bool
	DedupPath     string
	DedupK        int
	DedupClusters bool
	// LayoutB, LayoutK and BucketWidth are those of a new index; an
	// existing one keeps its own.
	LayoutB, LayoutK int
	BucketWidth      time.Duration
	// Progress is "auto", "bar", "lines" or "none".
	Progress      string
	ProgressEvery time.Duration
	CPUProfile    string
	MemProfile    string
	// Bands is "auto", "on" or "off" ("" is auto).
	Bands string
	// SourceAttr is the attribute naming a document's source, whose text
	// keys are also counted per source (kvindex.Config.SourceAttr; "" is
	// the index's, for a new one "source"; "-" a new index without).
	SourceAttr string
	// LogLevel is "debug", "info", "warn" or "error".
	LogLevel string
	// Inputs are the files, globs or "-" to load.
	Inputs []string
}

// DefaultConfig is the configuration of a command line without flags.
func DefaultConfig() Config {
	return Config{
		Store:         "pebble",
		HBase:         config.DefaultHBase(),
		HBaseImport:   bulkload.ImportAuto,
		Format:        bulkload.FormatAuto,
		Shard:         "0/1",
		LayoutB:       fingerprint.DefaultLayout.B,
		LayoutK:       fingerprint.DefaultLayout.K,
		BucketWidth:   kvindex.DefaultBucketWidth,
		Progress:      "auto",
		ProgressEvery: 10 * time.Second,
		Bands:         "auto",
		LogLevel:      "info",
	}
}

// usage is the --help text between the synopsis and the options.
const usage = `Loads documents or precomputed fingerprints into the simdex index in DIR
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

Repeated ids: the last record of an id wins, as online inserts in input
order would have it, whether the id repeats within the load or is already
in the index. The record it replaces no longer carries its fingerprint (a
fingerprint left without a document is dropped from the index, or
tombstoned when it was stored), and the document and fingerprint counters
count each once. Across the shards of a sharded load an id must not repeat.
`

// newSet declares every flag on cfg's fields, their defaults cfg's values;
// usage goes to out.
func newSet(cfg *Config, out io.Writer) *config.Set {
	s := config.NewSet("bulkload", bulkload.ErrConfig, out, config.Usage{
		Synopsis: []string{
			"bulkload --data-dir DIR [flags] INPUT...",
			"bulkload --store hbase --hbase-zk HOST:PORT --checkpoint-dir CP [flags] INPUT...",
		},
		Text:        usage,
		FileExample: `{"store": "hbase", "hbase_zk": "zk1:2181,zk2:2181", "checkpoint_dir": "/var/lib/simdex-load"}`,
	})
	fs := s.Flags()
	fs.StringVar(&cfg.Store, "store", cfg.Store, "store backend: pebble (embedded, --data-dir) or hbase (--hbase-zk)")
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "index directory (embedded store)")
	cfg.HBaseFlags(fs, "with --store hbase: ", "else refuse: see `simdexctl schema create`")
	fs.IntVar(&cfg.InFlight, "in-flight", cfg.InFlight, "with --store hbase: write batches in flight at once (default 4; the embedded store ingests sorted tables instead)")
	fs.StringVar(&cfg.BatchBytes, "batch-bytes", cfg.BatchBytes, "with --store hbase: size of one write batch of sorted cells (default 1MiB)")
	fs.StringVar(&cfg.HBaseImport, "hbase-import", cfg.HBaseImport, "with --store hbase: hfile (bulk-load HFiles), puts (batched puts) or auto (HFiles, puts if HBase cannot read them)")
	fs.StringVar(&cfg.HFileDir, "hbase-hfile-dir", cfg.HFileDir, "with --store hbase: where HFiles are written until imported (default CHECKPOINT-DIR/hfiles)")
	fs.StringVar(&cfg.HFileRemoteDir, "hbase-hfile-remote-dir", cfg.HFileRemoteDir, "with --store hbase: --hbase-hfile-dir as the region servers name it, e.g. hdfs://nn:8020/staging/simdex (default: its local absolute path)")
	fs.StringVar(&cfg.HFileMode, "hbase-hfile-mode", cfg.HFileMode, "with --store hbase: permission of the HFiles, octal (default 0644); on a Kerberos cluster the principal's user must be able to read and write them, e.g. 0660 or 0666 where it does not own them")
	fs.StringVar(&cfg.CheckpointDir, "checkpoint-dir", cfg.CheckpointDir, "checkpoint, sorted runs and rejects (default DIR.bulkload; required with --store hbase)")
	fs.StringVar(&cfg.Format, "format", cfg.Format, "input format: auto (by name: .jsonl/.json/.ndjson are documents), docs or fp")
	fs.StringVar(&cfg.Memory, "memory", cfg.Memory, "memory bound, e.g. 2GiB (default a quarter of RAM)")
	fs.StringVar(&cfg.Shard, "shard", cfg.Shard, "build shard i of n (i/n)")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "fingerprinting workers (default GOMAXPROCS)")
	fs.StringVar(&cfg.RejectsPath, "rejects", cfg.RejectsPath, "rejects file, JSON Lines {file,line,reason} (default in the checkpoint dir)")
	fs.BoolVar(&cfg.Strict, "strict", cfg.Strict, "stop at the first bad line instead of rejecting it")
	fs.StringVar(&cfg.DedupPath, "dedup-report", cfg.DedupPath, "write the near-duplicates within the loaded set to this JSON Lines file")
	fs.IntVar(&cfg.DedupK, "dedup-k", cfg.DedupK, "distance of the dedup report (default the layout's K)")
	fs.BoolVar(&cfg.DedupClusters, "dedup-clusters", cfg.DedupClusters, "report connected components instead of pairs")
	fs.IntVar(&cfg.LayoutB, "layout-b", cfg.LayoutB, "blocks B of a NEW index")
	fs.IntVar(&cfg.LayoutK, "layout-k", cfg.LayoutK, "distance K of a NEW index")
	fs.DurationVar(&cfg.BucketWidth, "bucket", cfg.BucketWidth, "time-bucket width of a NEW index")
	fs.StringVar(&cfg.Progress, "progress", cfg.Progress, "progress display: auto (bar on a terminal, log lines otherwise), bar, lines, none")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", cfg.CPUProfile, "write a CPU profile to this file")
	fs.StringVar(&cfg.MemProfile, "memprofile", cfg.MemProfile, "write an allocation profile (every allocation of the load, sampled) to this file at the end")
	fs.StringVar(&cfg.Bands, "bands", cfg.Bands, "LSH band rows: auto (a NEW index gets them, as the server creates it; an existing one keeps its choice), on (refuse an existing index without them) or off (a NEW index without them; refuse one with them)")
	fs.StringVar(&cfg.SourceAttr, "source-attr", cfg.SourceAttr, "document attribute naming its source (site, list), whose sentences are counted per source to learn its template, as the server's flag: empty is the index's (a NEW index: \"source\"), - a NEW index without; an index recording another is refused")
	fs.DurationVar(&cfg.ProgressEvery, "progress-every", cfg.ProgressEvery, "interval of progress lines when not on a terminal")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug (adds each spill and each table's merge time), info, warn, error")
	return s
}

// flagSet is the flag set of newSet.
func flagSet(cfg *Config, out io.Writer) *flag.FlagSet { return newSet(cfg, out).Flags() }

// ParseArgs builds a Config from the defaults, then an optional JSON file
// (--config or SIMDEX_CONFIG), then the SIMDEX_* environment variables
// (getenv), then the flags in args, the inputs anywhere among them: each
// later source overrides the earlier ones (package internal/config). Usage
// goes to out; with -h it returns flag.ErrHelp. The Config returned with a
// nil error is valid.
func ParseArgs(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	cfg := DefaultConfig()
	s := newSet(&cfg, out)
	if err := s.Parse(args, getenv); err != nil {
		return cfg, err
	}
	cfg.Inputs = s.Args()
	return cfg, cfg.Validate()
}

// Validate reports what is wrong with c (wrapping bulkload.ErrConfig),
// before anything is opened: the store flags, then each value in turn,
// then the load's configuration (bulkload.Config.Validate), then --bands.
func (c Config) Validate() error {
	if _, err := c.loadConfig(nil, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		return err
	}
	_, err := c.bandsMode()
	return err
}

// checkStore checks the flags of the store.
func (c Config) checkStore() error {
	switch c.Store {
	case "pebble":
		if c.DataDir == "" {
			return fmt.Errorf("%w: --data-dir is required", bulkload.ErrConfig)
		}
	case "hbase":
		if err := c.ValidateHBase("--store hbase"); err != nil {
			return fmt.Errorf("%w: %w", bulkload.ErrConfig, err)
		}
		if c.CheckpointDir == "" {
			return fmt.Errorf("%w: --store hbase needs --checkpoint-dir (a local directory for the checkpoint and sorted runs)", bulkload.ErrConfig)
		}
	default:
		return fmt.Errorf("%w: --store %q: want pebble or hbase", bulkload.ErrConfig, c.Store)
	}
	return nil
}

// logLevel parses LogLevel.
func (c Config) logLevel() (slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return level, fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", bulkload.ErrConfig, c.LogLevel)
	}
	return level, nil
}

// loadConfig is the configuration of the load: inputs from stdin, progress
// and log lines to stderr (through log), and the memory bound with the
// store's share of it.
func (c Config) loadConfig(stdin io.Reader, stderr io.Writer, log *slog.Logger) (bulkload.Config, error) {
	if err := c.checkStore(); err != nil {
		return bulkload.Config{}, err
	}
	if _, err := c.logLevel(); err != nil {
		return bulkload.Config{}, err
	}
	cfg := bulkload.Config{
		Inputs: c.Inputs, Stdin: stdin, Format: c.Format, CheckpointDir: c.CheckpointDir, Workers: c.Workers,
		RejectsPath: c.RejectsPath, Strict: c.Strict, DedupPath: c.DedupPath, DedupK: c.DedupK, DedupClusters: c.DedupClusters,
		ProgressEvery: c.ProgressEvery, Logger: log, InFlight: c.InFlight,
	}
	if c.Store == "hbase" {
		// Several Multi calls of ~1 MiB keep the region server busy
		// without making any one call slow (HBase warns above 5,000 rows
		// per call and takes longer pauses on larger ones).
		cfg.IndexFirst = true
		if cfg.InFlight == 0 {
			cfg.InFlight = 4
		}
		cfg.ApplyBytes = 1 << 20
		cfg.Import = bulkload.ImportConfig{Mode: c.HBaseImport, Dir: c.HFileDir, RemoteDir: c.HFileRemoteDir}
		mode, err := bulkload.ParseHFileMode(c.HFileMode)
		if err != nil {
			return cfg, fmt.Errorf("%w: --hbase-hfile-mode: %w", bulkload.ErrConfig, err)
		}
		cfg.Import.FileMode = mode
	}
	if c.BatchBytes != "" {
		b, err := bulkload.ParseBytes(c.BatchBytes)
		if err != nil {
			return cfg, err
		}
		cfg.ApplyBytes = int(b)
	}
	if cfg.CheckpointDir == "" {
		cfg.CheckpointDir = c.DataDir + ".bulkload"
	}
	var err error
	if cfg.Shard, cfg.Shards, err = bulkload.ParseShard(c.Shard); err != nil {
		return cfg, err
	}
	if c.Memory != "" {
		if cfg.Memory, err = bulkload.ParseBytes(c.Memory); err != nil {
			return cfg, err
		}
	}
	switch c.Progress {
	case "auto":
		cfg.Progress, cfg.ProgressTTY = stderr, isTerminal(stderr)
	case "bar":
		cfg.Progress, cfg.ProgressTTY = stderr, true
	case "lines":
		cfg.Progress = stderr
	case "none":
	default:
		return cfg, fmt.Errorf("%w: --progress %q", bulkload.ErrConfig, c.Progress)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	cfg.Memory = memoryBound(cfg.Memory)
	cfg.StoreMemory = c.storeMemory(cfg)
	return cfg, cfg.Validate()
}

// memoryBound is the load's memory bound: mem, or by default a quarter
// of RAM (bulkload's default). It is also the Go memory limit.
func memoryBound(mem int64) int64 {
	if mem == 0 {
		return bulkload.DefaultMemory()
	}
	return mem
}

// storeMemory is the store's share of the memory bound of cfg.
func (c Config) storeMemory(cfg bulkload.Config) int64 {
	mem := cfg.Memory
	if c.Store == "hbase" {
		// Each batch in flight (and one queued per lane) costs about ten
		// times its cell bytes: Mutation structs, the store's per-row
		// coalescing, protobuf and cell blocks.
		return min(int64(20*cfg.InFlight*max(cfg.ApplyBytes, 1<<20)), mem/2)
	}
	// Block cache plus the memtables Bulk mode may hold (up to 4 x 64
	// MiB), capped so the loader keeps some.
	return min(blockCache(mem)+4*(64<<20), mem/2)
}

// blockCache is the embedded store's block cache under the memory bound
// mem.
func blockCache(mem int64) int64 { return min(mem/8, 128<<20) }

// bandsMode maps Bands to the index setting.
func (c Config) bandsMode() (kvindex.BandsMode, error) {
	switch c.Bands {
	case "auto", "":
		return kvindex.BandsAuto, nil
	case "on":
		return kvindex.BandsOn, nil
	case "off":
		return kvindex.BandsOff, nil
	}
	return kvindex.BandsAuto, fmt.Errorf("%w: --bands %q: want auto, on or off", bulkload.ErrConfig, c.Bands)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
