// Package bulkload backfills a simdex index from large inputs with bounded
// memory (DESIGN.md section 3). cmd/bulkload is its command line.
//
// The pipeline:
//
//  1. Read: inputs are files, globs or stdin, plain, gzip or zstd (by magic
//     bytes); each line is a JSON document {id, title, text, time, attrs}
//     (fingerprinted by parallel workers) or a delimited "id,fingerprint,time"
//     line. Bad lines go to a rejects file (JSON Lines: file, line, reason)
//     and never stop the load, unless Strict.
//  2. Each record's fp and docs cells, and a text document's band cells
//     when the index keeps band rows, are encoded (kvindex.BulkWriter) and
//     buffered with the index entries below; nothing is looked up.
//  3. Every fingerprint's T index entries (the fingerprint permuted for each
//     table: prefix = row, residual = the rest, plus its time bucket) go to
//     fixed-size in-memory buffers; a full buffer is sorted (radix sort) and
//     spilled as a sorted run file in the checkpoint directory, and the
//     checkpoint records the input position it covers.
//  4. After the input: per table, a k-way merge of its runs yields each
//     index row's residuals in order; each row's base-set cells are written
//     once (merged under the row lock with what the row already holds, so a
//     load into a non-empty index, a second shard or a resumed load all
//     simply union). No delta cell is written. Batches of rows are
//     applied InFlight at a time.
//  5. Counters (documents = distinct ids, fingerprints = distinct
//     fingerprints) come from merged runs of id hashes and fingerprints and
//     are added once, together with a marker cell (meta row "bulkload",
//     qualifier = the load id) that makes the addition idempotent.
//
// Writing: the fp, band and docs cells are spilled as sorted cell runs too, so
// every table is written in key order after the input is read: on the
// embedded store as sorted string tables ingested by Pebble (one atomic
// ingest per table), elsewhere (HBase) as batched puts of about ApplyBytes,
// InFlight Apply calls at a time, and then in the index's write order:
// every index row first, then the fp cells, then the band cells, then the
// docs cells (IndexFirst). Nothing is written to the store while the input is read.
//
// Repeated ids (plan.go): the last record of an id wins, as online inserts
// in input order would have it, within the load and against stored
// documents; replaced records stop carrying their fingerprints and their
// band cells, and the counters count documents and fingerprints once.
//
// Resumability: the checkpoint directory holds checkpoint.json (input
// position, run files, counts), the run files, and the rejects offset.
// After a crash (even SIGKILL), rerunning the same command resumes from the
// last checkpoint: the input after it is re-read and its cells rewritten
// (puts are idempotent), the merge phase re-runs (unions are idempotent),
// and the counters are added exactly once. The final index content equals
// that of an uninterrupted run.
//
// Sharding (--shard i/n): shard i writes the index rows whose position in the
// row-key space, (table + prefix/2^P)/T, falls in [i/n, (i+1)/n), and the fp
// and docs cells of the fingerprints in [i/n, (i+1)/n) of the 64-bit space.
// n processes reading the same input build disjoint parts of one index (on
// HBase, from n machines); the counters they add sum to the right totals.
//
// Where the code is: load.go runs the phases (Run) and config.go holds
// their configuration; checkpoint.go keeps the checkpoint. Phase 1:
// read.go reads the input, process.go parses and fingerprints its lines,
// buffer.go buffers a batch's index entries and cells, rejects.go lists
// its bad lines, and spill.go writes full buffers as sorted runs (runs.go
// and cells.go are the run files of entries and of cells, runfile.go their
// blocks). Phase 2: merge.go merges the runs into index rows, which rows.go
// writes, and cellwrite.go writes the fp, band and docs cells, through
// the store's ingest, batched puts (write.go) or HFiles (hbaseimport.go);
// plan.go handles repeated ids. Phase 3: distinct.go counts the distinct
// ids and fingerprints and adds the counters; dedup.go writes the
// self-dedup report. shard.go says which shard writes what.
package bulkload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
)

// ErrConfig is wrapped by configuration errors.
var ErrConfig = errors.New("bulkload: bad config")

// ErrStrict is wrapped by the error that stops a Strict load at its first
// bad line.
var ErrStrict = errors.New("bulkload: bad input line")

// ErrInputChanged: a resumed load's inputs differ from the checkpoint's.
var ErrInputChanged = errors.New("bulkload: inputs differ from the checkpoint")

// Config configures a load. Zero fields take their defaults.
type Config struct {
	// Inputs are file names or globs ("-" alone: Stdin).
	Inputs []string
	// Stdin is read for "-" (default os.Stdin).
	Stdin io.Reader
	// Format is FormatAuto (default), FormatDocs or FormatFingerprints.
	Format string
	// CheckpointDir holds the checkpoint, the sorted runs and (by default)
	// the rejects file. Required; rerun with the same directory to resume.
	CheckpointDir string
	// Memory bounds the loader's buffers (default: a quarter of RAM, at
	// least 64 MiB). Three quarters of what the store leaves go to the two
	// sets of spill buffers (one filling while the other is written), the
	// rest is head room for batches, the merge and the garbage collector;
	// the command also sets it as the Go memory limit.
	Memory int64
	// StoreMemory is what the store takes of Memory (memtables, block
	// cache): the spill buffers get three quarters of what remains.
	StoreMemory int64
	// Shard and Shards: this process builds part Shard of Shards (default
	// 0 of 1).
	Shard, Shards int
	// Workers is the number of fingerprinting/parsing workers (default
	// GOMAXPROCS).
	Workers int
	// BatchDocs is the number of input lines per batch (default 4096).
	BatchDocs int
	// NewFingerprinter builds the fingerprinter for document input (default
	// fingerprint.New(fingerprint.DefaultConfig())); called once, only when
	// a document input is met.
	NewFingerprinter func() (*fingerprint.Fingerprinter, error)
	// RejectsPath is where bad lines are listed (default
	// CheckpointDir/rejects.jsonl).
	RejectsPath string
	// Strict stops the load at the first bad line.
	Strict bool
	// DedupPath, when set, receives the batch self-dedup report (JSON Lines)
	// of the near-duplicates within the loaded set.
	DedupPath string
	// DedupK is the distance of the report (0..layout K; default K).
	DedupK int
	// DedupClusters reports connected components instead of pairs.
	DedupClusters bool
	// Progress receives a progress bar (ProgressTTY) or periodic lines (nil:
	// none).
	Progress    io.Writer
	ProgressTTY bool
	// ProgressEvery is the interval of progress lines when not on a TTY
	// (default 10s; the bar refreshes every 500ms).
	ProgressEvery time.Duration
	// Logger receives start, checkpoint and summary lines (default discard).
	Logger *slog.Logger
	// IndexFirst writes the fp and docs cells after every index row (fp
	// before docs), so that no document is visible before its fingerprint
	// is findable (the index's write order). For stores that servers read
	// during the load (HBase); it is implied for every store without a
	// sorted-cell ingest. The embedded store, which one process owns,
	// otherwise writes all tables at once.
	IndexFirst bool
	// InFlight is the number of Apply calls the merge phase keeps running
	// at once on stores without a sorted-cell ingest (default 1: each
	// batch is applied before the next is built).
	// HBase takes large batches best several at a time.
	InFlight int
	// ApplyBytes is the size of one Apply batch of sorted cells on stores
	// without a sorted-cell ingest (default 4 MiB).
	ApplyBytes int
	// Import chooses how sorted cells reach an HBase store: batched puts
	// (default) or HFiles bulk-loaded by the region servers
	// (hbaseimport.go).
	Import ImportConfig

	// Test hooks: spillEvery > 0 caps the spill buffers at that many
	// entries; afterBatch runs after each committed batch; beforeCommit
	// runs before the sorted cells of a table (named by its run kind) are
	// committed; beforeImport gets the finished HFiles of a table before
	// the region servers import them; onPhase runs as each write phase
	// ("merge", "docs": the fp and docs cells written after the index rows)
	// starts; aroundApply, when set, is called in place of each Apply of
	// the load's mutations (and calls apply itself).
	spillEvery   int
	afterBatch   func()
	beforeCommit func(kind string)
	beforeImport func(kind string, files []string)
	onPhase      func(string)
	aroundApply  func(ctx context.Context, muts []storage.Mutation, apply func(context.Context, []storage.Mutation) error) error
}

// Defaults.
const (
	DefaultBatchDocs  = 4096
	DefaultApplyBytes = 4 << 20
	MinMemory         = 64 << 20
)

func (c Config) withDefaults() Config {
	if c.Stdin == nil {
		c.Stdin = os.Stdin
	}
	if c.Format == "" {
		c.Format = FormatAuto
	}
	if c.Memory == 0 {
		c.Memory = max(MinMemory, totalRAM()/4)
	}
	if c.Shards == 0 {
		c.Shards = 1
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.BatchDocs == 0 {
		c.BatchDocs = DefaultBatchDocs
	}
	if c.NewFingerprinter == nil {
		c.NewFingerprinter = func() (*fingerprint.Fingerprinter, error) { return fingerprint.New(fingerprint.DefaultConfig()) }
	}
	if c.RejectsPath == "" && c.CheckpointDir != "" {
		c.RejectsPath = c.CheckpointDir + string(os.PathSeparator) + "rejects.jsonl"
	}
	if c.DedupK == 0 {
		c.DedupK = -1 // the layout's K, filled by Run
	}
	if c.ProgressEvery == 0 {
		c.ProgressEvery = 10 * time.Second
	}
	if c.InFlight == 0 {
		c.InFlight = 1
	}
	if c.ApplyBytes == 0 {
		c.ApplyBytes = DefaultApplyBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}

// Validate reports whether c is usable.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if len(c.Inputs) == 0 {
		errs = append(errs, errors.New("no inputs"))
	}
	if c.CheckpointDir == "" {
		errs = append(errs, errors.New("a checkpoint directory is required"))
	}
	switch c.Format {
	case FormatAuto, FormatDocs, FormatFingerprints:
	default:
		errs = append(errs, fmt.Errorf("format %q: want auto, docs or fp", c.Format))
	}
	if c.Memory < MinMemory {
		errs = append(errs, fmt.Errorf("memory %d: at least %d", c.Memory, MinMemory))
	}
	if c.StoreMemory < 0 || c.Memory-c.StoreMemory < MinMemory/2 {
		errs = append(errs, fmt.Errorf("store memory %d leaves less than %d of memory %d for the loader", c.StoreMemory, MinMemory/2, c.Memory))
	}
	if c.Shards < 1 || c.Shards > 1<<16 || c.Shard < 0 || c.Shard >= c.Shards {
		errs = append(errs, fmt.Errorf("shard %d/%d: want 0 <= i < n <= 65536", c.Shard, c.Shards))
	}
	if c.Workers < 1 || c.Workers > 1024 {
		errs = append(errs, fmt.Errorf("workers %d: want 1..1024", c.Workers))
	}
	if c.BatchDocs < 1 || c.BatchDocs > 1<<20 {
		errs = append(errs, fmt.Errorf("batch %d: want 1..2^20", c.BatchDocs))
	}
	if c.InFlight < 1 || c.InFlight > 256 {
		errs = append(errs, fmt.Errorf("in-flight %d: want 1..256", c.InFlight))
	}
	if c.ApplyBytes < 1<<10 || c.ApplyBytes > 256<<20 {
		errs = append(errs, fmt.Errorf("apply bytes %d: want 1KiB..256MiB", c.ApplyBytes))
	}
	if err := c.Import.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.DedupK < -1 {
		errs = append(errs, fmt.Errorf("dedup k %d: want >= 0", c.DedupK))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrConfig, errors.Join(errs...))
	}
	return nil
}

// ParseShard parses "i/n".
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(a)
		if err == nil {
			n, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("%w: shard %q: want i/n with 0 <= i < n", ErrConfig, s)
	}
	return i, n, nil
}

// ParseBytes parses sizes like 512MiB, 2GiB, 1G, 300M or a plain number of
// bytes.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suf)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<50 {
		return 0, fmt.Errorf("%w: size %q", ErrConfig, s)
	}
	return int64(v * float64(mult)), nil
}

// totalRAM reads MemTotal from /proc/meminfo (0 when unknown).
func totalRAM() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// DefaultMemory is the default memory bound: a quarter of RAM, at least
// MinMemory.
func DefaultMemory() int64 { return max(MinMemory, totalRAM()/4) }
