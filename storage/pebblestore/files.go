package pebblestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"

	"github.com/simdex/simdex/storage"
)

// Sorted string tables written by other processes: a distributed bulk
// load writes each key range's cells as sstables on its workers, which
// cannot open the store (one process at a time), and the store's own
// process ingests them all at once. The files are exactly those a
// BulkWriter stages: the store's key encoding, table format, comparer,
// merger and row-prefix filters.

// TableFormat is the sstable format the store's flushes and compactions
// write, which FileWriter must be given for files this store ingests.
func (s *Store) TableFormat() (sstable.TableFormat, error) {
	if err := s.acquire(context.Background()); err != nil {
		return 0, err
	}
	defer s.mu.RUnlock()
	return s.db.TableFormat(), nil
}

// FileWriter writes the cells of one table, in strictly increasing (row,
// qualifier) order, as sstables in a directory, without a store: Finish
// closes them and returns their paths, for Store.IngestFiles.
type FileWriter struct {
	bw *BulkWriter
}

// NewFileWriter returns a FileWriter of table t's cells into sstables
// named dir/<table>-NNNNNN.sst (dir is created if needed), each started
// at about sstableBytes (<= 0: DefaultSSTableBytes), in the given table
// format (Store.TableFormat of the store that will ingest them).
func NewFileWriter(t storage.Table, dir string, format sstable.TableFormat, sstableBytes int64) (*FileWriter, error) {
	if !t.Valid() || t == storage.TableMeta {
		return nil, fmt.Errorf("pebblestore: no file writer for table %s", t)
	}
	if sstableBytes <= 0 {
		sstableBytes = DefaultSSTableBytes
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: file writer: %w", storage.ErrStore, err)
	}
	po := &pebble.Options{Merger: &pebble.Merger{Name: mergerName, Merge: newAdder}}
	setTableOptions(po)
	po.EnsureDefaults()
	wo := po.MakeWriterOptions(0, format)
	if t == storage.TableIndex {
		wo.Compression = sstable.NoCompression // as NewBulkWriter says
	}
	return &FileWriter{bw: &BulkWriter{t: t, dir: dir, target: sstableBytes, wo: wo}}, nil
}

// Put adds one cell; keys must strictly increase.
func (w *FileWriter) Put(row, qualifier, value []byte) error { return w.bw.Put(row, qualifier, value) }

// Finish closes (and syncs) the files and returns their paths, in key
// order; none when no cell was put.
func (w *FileWriter) Finish() ([]string, error) {
	if w.bw.err != nil {
		return nil, errors.Join(w.bw.err, w.bw.Abort())
	}
	if w.bw.done {
		return nil, fmt.Errorf("%w: file writer used after Finish or Abort", storage.ErrStore)
	}
	if err := w.bw.finishFile(); err != nil {
		return nil, errors.Join(err, w.bw.Abort())
	}
	w.bw.done = true
	return slices.Clone(w.bw.paths), nil
}

// Abort closes and removes the files.
func (w *FileWriter) Abort() error { return w.bw.Abort() }

// IngestFiles ingests sstables written by FileWriters (or BulkWriters) for
// this store in one atomic step; their key ranges must not overlap. A cell
// that already exists is shadowed by the ingested one, as by a Put. Pebble
// moves the files into the store: once IngestFiles returns nil they are
// gone from where they were (a crash during the call leaves either all of
// them there, or all of them ingested with some originals left, which a
// second ingest of the same cells makes no difference to).
func (s *Store) IngestFiles(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	err := s.db.Ingest(ctx, paths)
	// Ingested cells name no rows to the row cache (ingest.go's Commit).
	if s.rows != nil {
		s.rows.invalidateAll()
	}
	if err != nil {
		return fmt.Errorf("%w: ingest: %w", storage.ErrStore, err)
	}
	return nil
}
