// Package compaction keeps a simdex index compact and inside its retention
// window (docs/ARCHITECTURE.md, "Bulk load and compaction"). A run:
//
//  1. expires documents older than the retention window (when one is set):
//     each is deleted through the index, exactly as a DELETE request would,
//     so the document and fingerprint counters stay right and the fp table
//     (the truth lookups answer from) never names a document whose index
//     entries are gone;
//  2. walks the index table and, for each row that has work, rewrites it
//     under kvindex's row lock (RowWriter.Update): deltas are folded into the
//     base set of their time bucket, tombstones whose fingerprint is no
//     longer carried by any document remove the residual from every bucket
//     and are dropped, buckets older than the window are deleted with their
//     deltas, and buckets whose chunks are oversize (or half empty) are
//     re-cut to the cell limit.
//
// Because every row is re-read and rewritten under the same lock that
// inserts and deletes take, a delta or tombstone written while compaction
// runs is either in the row it reads (and folded) or written after it (and
// left for the next run): none is lost. Runs are idempotent: a second run
// over an unchanged index writes nothing.
//
// The embedded store admits one process per directory, so compaction runs
// inside the process that owns the index: `simdexctl compact` with the
// server stopped, or the server's own timer (--compact-every).
package compaction

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// Index is what compaction needs of a *kvindex.Index.
type Index interface {
	// RowWriter rewrites index rows under their row lock.
	RowWriter() *kvindex.RowWriter
	DecodeIndexRow(row storage.Row) (kvindex.IndexRow, error)
	Delete(ctx context.Context, id string) error
	DecodeDocument(row storage.Row) (kvindex.Document, error)
	Store() storage.Store
	Buckets() storage.Buckets
	Config() kvindex.Config
}

var _ Index = (*kvindex.Index)(nil)

// Sentinel errors.
var (
	// ErrConfig is wrapped by Config.Validate errors.
	ErrConfig = errors.New("compaction: bad config")
)

// Config configures a Compactor. Zero fields take their defaults.
type Config struct {
	// Retention is the window of document times kept: time buckets that
	// end before now-Retention are dropped, with the documents in them.
	// 0 keeps everything.
	Retention time.Duration
	// BatchRows is the number of rows read per scan batch (default 1024);
	// ctx is checked between rows, and no iterator stays open across a
	// batch's rewrites.
	BatchRows int
	// Now returns the current time (default time.Now; tests fix it).
	Now func() time.Time
	// Logger receives the summary line (default: discard).
	Logger *slog.Logger
	// Metrics is where the counters go (nil: not recorded). Build it once
	// per registry with NewMetrics.
	Metrics *Metrics
	// KeepStoreHistory leaves the store's own compaction alone. By
	// default a run that rewrote index rows asks a store that keeps the
	// history of rewritten cells (HBase, whose data families keep every
	// version and delete marker until a major compaction, and whose reads
	// walk them) to drop it: on HBase a flush and then a major compaction
	// of the index table, queued on the region servers.
	KeepStoreHistory bool

	// beforeWrite, a test hook, runs for each rewritten row after the row
	// was read and its fold planned, before the rewrite is written, while
	// the row's lock is held.
	beforeWrite func(row []byte)
}

// Defaults.
const DefaultBatchRows = 1024

func (c Config) withDefaults() Config {
	if c.BatchRows == 0 {
		c.BatchRows = DefaultBatchRows
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}

// Validate reports whether c is usable.
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.Retention < 0 {
		return fmt.Errorf("%w: negative retention %s", ErrConfig, c.Retention)
	}
	if c.BatchRows < 1 || c.BatchRows > 1<<20 {
		return fmt.Errorf("%w: BatchRows %d, want 1..2^20", ErrConfig, c.BatchRows)
	}
	return nil
}

// Compactor compacts one index. Runs of one Compactor must not overlap
// (Run is not reentrant); they may overlap with inserts, deletes and
// lookups.
type Compactor struct {
	ix  Index
	cfg Config
}

// New returns a Compactor of ix.
func New(ix Index, cfg Config) (*Compactor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Compactor{ix: ix, cfg: cfg}, nil
}

// Summary is what one run did.
type Summary struct {
	RowsScanned       int64
	RowsRewritten     int64
	DeltasFolded      int64
	TombstonesApplied int64
	// TombstonesKept counts tombstones left in place because a document
	// carries their fingerprint again (should be 0; see foldRow).
	TombstonesKept   int64
	BucketsDropped   int64
	BucketsRechunked int64
	DocumentsExpired int64
	// BytesBefore and BytesAfter are the cell bytes (qualifiers and values)
	// of the rewritten rows before and after.
	BytesBefore, BytesAfter int64
	// CutoffBucket is the oldest bucket kept (0 when no retention).
	CutoffBucket uint32
	Duration     time.Duration
	// StoreCompaction is "requested" when the run asked the store to drop
	// the history of the rows it rewrote, "failed" when that request
	// failed (the run itself still counts), else "".
	StoreCompaction string
}

// historyDropper is a store that keeps the history of rewritten cells
// until asked to drop it (hbasestore.Store.DropHistory).
type historyDropper interface {
	DropHistory(ctx context.Context, table storage.Table) error
}

// Run compacts the whole index once. It stops early, returning ctx's error
// and what it did so far, when ctx is cancelled; what it wrote is complete
// per row, so a later run simply continues.
func (c *Compactor) Run(ctx context.Context) (Summary, error) {
	start := c.cfg.Now()
	wall := time.Now()
	var s Summary
	if c.cfg.Retention > 0 {
		s.CutoffBucket = c.ix.Buckets().Of(start.Add(-c.cfg.Retention))
	}
	err := c.expireDocs(ctx, &s)
	if err == nil {
		err = c.compactRows(ctx, &s)
	}
	var dropErr error
	if hd, ok := c.ix.Store().(historyDropper); ok && err == nil && s.RowsRewritten > 0 && !c.cfg.KeepStoreHistory {
		s.StoreCompaction = "requested"
		if dropErr = hd.DropHistory(ctx, storage.TableIndex); dropErr != nil {
			s.StoreCompaction = "failed"
		}
	}
	s.Duration = time.Since(wall)
	c.cfg.Metrics.observe(s, err)
	lvl := slog.LevelInfo
	attrs := []any{"rows_scanned", s.RowsScanned, "rows_rewritten", s.RowsRewritten, "deltas_folded", s.DeltasFolded,
		"tombstones_applied", s.TombstonesApplied, "tombstones_kept", s.TombstonesKept, "buckets_dropped", s.BucketsDropped,
		"buckets_rechunked", s.BucketsRechunked, "documents_expired", s.DocumentsExpired, "bytes_before", s.BytesBefore,
		"bytes_after", s.BytesAfter, "cutoff_bucket", s.CutoffBucket, "seconds", s.Duration.Seconds()}
	if s.StoreCompaction != "" {
		attrs = append(attrs, "store_compaction", s.StoreCompaction)
	}
	if err != nil {
		lvl = slog.LevelWarn
		attrs = append(attrs, "error", err.Error())
	}
	if dropErr != nil {
		lvl = slog.LevelWarn
		attrs = append(attrs, "store_compaction_error", dropErr.Error())
	}
	c.cfg.Logger.Log(ctx, lvl, "compaction", attrs...)
	return s, err
}

// errBatchFull stops a scan once a batch is collected.
var errBatchFull = errors.New("compaction: batch full")

// scanBatches scans table from the start in batches: fn sees up to
// BatchRows rows of a batch (and may keep them), then after runs with no
// iterator open. It returns when the table ends, ctx ends, or a callback
// fails.
func (c *Compactor) scanBatches(ctx context.Context, table storage.Table, pick func(storage.Row) bool, after func([]storage.Row) error) error {
	var from []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var batch []storage.Row
		var last []byte
		scanned := 0
		err := c.ix.Store().Scan(ctx, table, from, nil, func(r storage.Row) error {
			last = r.Key
			scanned++
			if pick(r) {
				batch = append(batch, r)
			}
			if scanned >= c.cfg.BatchRows {
				return errBatchFull
			}
			return nil
		})
		if err != nil && !errors.Is(err, errBatchFull) {
			return err
		}
		if err := after(batch); err != nil {
			return err
		}
		if !errors.Is(err, errBatchFull) {
			return nil
		}
		from = append(bytes.Clone(last), 0) // the next key after last
	}
}

// expireDocs deletes the documents whose time bucket is below the cutoff.
func (c *Compactor) expireDocs(ctx context.Context, s *Summary) error {
	if s.CutoffBucket == 0 {
		return nil
	}
	b := c.ix.Buckets()
	return c.scanBatches(ctx, storage.TableDocs, func(r storage.Row) bool {
		d, err := c.ix.DecodeDocument(r)
		return err == nil && b.Of(d.Time) < s.CutoffBucket
	}, func(rows []storage.Row) error {
		for _, r := range rows {
			if err := ctx.Err(); err != nil {
				return err
			}
			err := c.ix.Delete(ctx, string(r.Key))
			if errors.Is(err, kvindex.ErrNotFound) {
				continue // deleted meanwhile
			}
			if err != nil {
				return fmt.Errorf("compaction: expiring document %q: %w", r.Key, err)
			}
			s.DocumentsExpired++
		}
		return nil
	})
}

// compactRows rewrites every index row that has work.
func (c *Compactor) compactRows(ctx context.Context, s *Summary) error {
	maxCell := c.ix.Config().MaxCellBytes
	return c.scanBatches(ctx, storage.TableIndex, func(r storage.Row) bool {
		s.RowsScanned++
		row, err := c.ix.DecodeIndexRow(r)
		// A row that cannot be decoded is picked, for the rewrite to report.
		return err != nil || rowNeedsWork(row, s.CutoffBucket, maxCell)
	}, func(rows []storage.Row) error {
		for _, r := range rows {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := c.compactRow(ctx, r.Key, maxCell, s); err != nil {
				return err
			}
		}
		return nil
	})
}

func (c *Compactor) compactRow(ctx context.Context, key []byte, maxCell int, s *Summary) error {
	rw := c.ix.RowWriter()
	return rw.Update(ctx, key, func(row kvindex.IndexRow, u *kvindex.RowUpdate) error {
		live := func(r uint64) (bool, error) { return rw.Carried(ctx, row.Fingerprint(r)) }
		plan, err := foldRow(row, s.CutoffBucket, maxCell, live)
		if err != nil {
			return err
		}
		if err := plan.record(u); err != nil || u.Empty() {
			return err
		}
		if c.cfg.beforeWrite != nil {
			c.cfg.beforeWrite(key)
		}
		s.RowsRewritten++
		s.DeltasFolded += int64(plan.deltasFolded)
		s.TombstonesApplied += int64(plan.tombstonesApplied)
		s.TombstonesKept += int64(plan.tombstonesKept)
		s.BucketsDropped += int64(plan.bucketsDropped)
		s.BucketsRechunked += int64(plan.bucketsRechunked)
		s.BytesBefore += int64(plan.bytesBefore)
		s.BytesAfter += u.BytesAfter()
		return nil
	})
}
