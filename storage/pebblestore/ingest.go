package pebblestore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/simdex/simdex/internal/pagecache"
	"github.com/simdex/simdex/storage"
)

// The bulk write path: cells arrive sorted, are written straight into
// Pebble sorted string tables (sstables) in a staging directory with the
// store's own key encoding (rowPrefix + qualifier), and the finished files
// are handed to Pebble's Ingest, which links them into the LSM in one
// atomic manifest update. No memtable insert, no write-ahead log, no
// flush: the bytes are written once by us and then only by later
// compactions.

// DefaultSSTableBytes is the size at which a BulkWriter starts a new
// sstable: big enough that a 10^8 load makes hundreds of files, not
// thousands, small enough that later compactions work in pieces and that
// an sstable's bloom filter (10 bits per row, ~1 MB for 32 MB of fp cells)
// stays within the CPU's caches while it is built: at 128 MB, building the
// ~5 MB filters missed the cache on nearly every key (1.1 s of a 10^7
// load's CPU profile, 0.3 s at 32 MB), and a smaller filter block is also
// cheaper for the block cache to hold.
const DefaultSSTableBytes = 32 << 20

// mergerName must equal the merger the store opens Pebble with: Ingest
// refuses sstables written for another merger.
const mergerName = "simdex.add.v1"

// BulkWriter is a storage.CellWriter that builds sstables of one table and
// ingests them at Commit.
type BulkWriter struct {
	s      *Store
	t      storage.Table
	dir    string
	target int64
	wo     sstable.WriterOptions

	w    *sstable.Writer // current file, nil before the first Put
	size int64           // bytes put into w
	// closing receives the result of closing the previous file on a
	// goroutine (nil: none pending): its last blocks, index, filter,
	// footer and fsync overlap the next file's Puts. At most one is
	// pending; next, Commit and Abort join it.
	closing chan error
	paths   []string // finished and current files
	key     []byte   // scratch: the encoded key of the current Put
	last    []byte   // the previous encoded key
	err     error    // sticky: a failed Put poisons the writer
	done    bool
}

var _ storage.CellWriter = (*BulkWriter)(nil)

// NewCellWriter returns a BulkWriter for table t that stages its sstables
// in dir (created if needed; it should be on the store's file system so
// that Ingest links instead of copying). Files it leaves behind after a
// crash are garbage: remove dir's *.sst before reusing it.
func (s *Store) NewCellWriter(t storage.Table, dir string) (storage.CellWriter, error) {
	return s.NewBulkWriter(t, dir, DefaultSSTableBytes)
}

// NewBulkWriter is NewCellWriter with the size at which a new sstable is
// started (bytes of keys and values; <= 0 means DefaultSSTableBytes).
func (s *Store) NewBulkWriter(t storage.Table, dir string, sstableBytes int64) (*BulkWriter, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("pebblestore: unknown table %d", t)
	}
	if t == storage.TableMeta {
		// The meta table holds counters (merge operands); it is written
		// through Mutate only.
		return nil, fmt.Errorf("pebblestore: no bulk writer for the meta table")
	}
	if sstableBytes <= 0 {
		sstableBytes = DefaultSSTableBytes
	}
	if err := s.acquire(context.Background()); err != nil {
		return nil, err
	}
	// The table format the store's own flushes and compactions write, not
	// the newest its format major version allows: that one (Pebblev3 here)
	// puts every cell of a row after the first into value blocks, as if
	// they were older versions of one key (the row is the comparer's
	// prefix). A lookup then fetches a row's bucket cells from a second
	// block, and writing them cost ~1.3 s of a 10^7 load's CPU.
	format := s.db.TableFormat()
	s.mu.RUnlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: bulk writer: %w", storage.ErrStore, err)
	}
	po := &pebble.Options{Merger: &pebble.Merger{Name: mergerName, Merge: newAdder}}
	setTableOptions(po) // the same prefix filters as the store's own tables
	po.EnsureDefaults()
	wo := po.MakeWriterOptions(0, format)
	if t == storage.TableIndex {
		// Index values are base sets and deltas, already compressed:
		// Snappy made a 10^7 load's index sstables 0.1% smaller for 0.4 s
		// of its CPU. (Flushes and compactions still compress; readers
		// take either.)
		wo.Compression = sstable.NoCompression
	}
	return &BulkWriter{s: s, t: t, dir: dir, target: sstableBytes, wo: wo}, nil
}

// Put implements storage.CellWriter.
func (w *BulkWriter) Put(row, qualifier, value []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("%w: bulk writer used after Commit or Abort", storage.ErrStore)
	}
	w.key = append(rowPrefix(w.key[:0], w.t, row), qualifier...)
	if w.last != nil && bytes.Compare(w.key, w.last) <= 0 {
		w.err = fmt.Errorf("pebblestore: bulk writer: cell %x/%x not after the previous one", row, qualifier)
		return w.err
	}
	if w.w == nil || w.size >= w.target {
		if err := w.next(); err != nil {
			w.err = err
			return err
		}
	}
	if err := w.w.Set(w.key, value); err != nil {
		w.err = fmt.Errorf("%w: bulk writer: %w", storage.ErrStore, err)
		return w.err
	}
	w.size += int64(len(w.key) + len(value))
	// The key just put becomes last; last's buffer takes the next key.
	w.key, w.last = w.last, w.key
	return nil
}

// next finishes the current sstable (on a goroutine) and starts another.
func (w *BulkWriter) next() error {
	if err := w.waitClosing(); err != nil {
		return fmt.Errorf("%w: bulk writer: %w", storage.ErrStore, err)
	}
	if w.w != nil {
		prev, done := w.w, make(chan error, 1)
		w.w, w.closing = nil, done
		go func() { done <- prev.Close() }() // joined by waitClosing
	}
	p := filepath.Join(w.dir, fmt.Sprintf("%s-%06d.sst", w.t, len(w.paths)))
	f, err := vfs.Default.Create(p, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("%w: bulk writer: %w", storage.ErrStore, err)
	}
	w.paths = append(w.paths, p)
	w.w = sstable.NewWriter(newBulkWritable(f), w.wo)
	w.size = 0
	return nil
}

// finishFile closes the current file and joins the pending close.
func (w *BulkWriter) finishFile() error {
	err := w.waitClosing()
	if w.w != nil {
		err = errors.Join(err, w.w.Close()) // syncs and closes the file
		w.w = nil
	}
	if err != nil {
		return fmt.Errorf("%w: bulk writer: %w", storage.ErrStore, err)
	}
	return nil
}

// waitClosing joins the pending close of the previous file, if any.
func (w *BulkWriter) waitClosing() error {
	if w.closing == nil {
		return nil
	}
	err := <-w.closing
	w.closing = nil
	return err
}

// Commit implements storage.CellWriter: the staged sstables are ingested in
// one call (Pebble applies an ingest atomically, in one manifest edit, and
// syncs it). A cell that already exists is shadowed by the ingested one,
// as by a Put.
func (w *BulkWriter) Commit(ctx context.Context) error {
	if w.err != nil {
		return errors.Join(w.err, w.Abort())
	}
	if w.done {
		return fmt.Errorf("%w: bulk writer used after Commit or Abort", storage.ErrStore)
	}
	if err := w.finishFile(); err != nil {
		return errors.Join(err, w.Abort())
	}
	w.done = true
	if len(w.paths) == 0 {
		return nil
	}
	if err := w.s.acquire(ctx); err != nil {
		return errors.Join(err, w.removeFiles())
	}
	err := w.s.db.Ingest(ctx, w.paths)
	// Ingested cells do not go through Mutate, so they name no rows to the
	// row cache: drop it whole, before Commit returns, or a reader could
	// be answered from a row the ingest changed (rowcache.go's argument).
	if w.s.rows != nil {
		w.s.rows.invalidateAll()
	}
	w.s.mu.RUnlock()
	if err != nil {
		return errors.Join(fmt.Errorf("%w: ingest: %w", storage.ErrStore, err), w.removeFiles())
	}
	// Ingest links (or copies) the files into the store; the staged names
	// are ours to remove.
	return w.removeFiles()
}

// Abort implements storage.CellWriter.
func (w *BulkWriter) Abort() error {
	w.done = true
	err := w.waitClosing()
	if w.w != nil {
		err = errors.Join(err, w.w.Close())
		w.w = nil
	}
	return errors.Join(err, w.removeFiles())
}

func (w *BulkWriter) removeFiles() error {
	var errs []error
	for _, p := range w.paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	w.paths = nil
	return errors.Join(errs...)
}

// bulkWritable is where a staged sstable's writer writes: Pebble's own file
// writable (objstorageprovider.NewFileWritable) with a 256 KB buffer
// instead of 4 KB, which made one write system call per ~4 KB block (1.8 M
// of them for the fp and docs tables of a 10^8 load), and with the file's
// cached pages dropped once it is synced (package pagecache says why): a
// bulk load writes many times more sstable bytes than memory, and most of
// them are not read again until lookups come, if then.
type bulkWritable struct {
	f  vfs.File
	bw *bufio.Writer
}

var _ objstorage.Writable = (*bulkWritable)(nil)

func newBulkWritable(f vfs.File) *bulkWritable {
	return &bulkWritable{f: f, bw: bufio.NewWriterSize(f, 256<<10)}
}

// Write implements objstorage.Writable.
func (w *bulkWritable) Write(p []byte) error {
	_, err := w.bw.Write(p) // bufio reports a short write as an error
	return err
}

// Finish implements objstorage.Writable: flush, sync, drop, close.
func (w *bulkWritable) Finish() error {
	err := w.bw.Flush()
	if err == nil {
		err = w.f.Sync()
	}
	if err == nil {
		pagecache.Drop(w.f.Fd(), 0, 0)
	}
	return errors.Join(err, w.f.Close())
}

// Abort implements objstorage.Writable; the BulkWriter removes the file.
func (w *bulkWritable) Abort() { _ = w.f.Close() }
