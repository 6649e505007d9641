package bulkload

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/hbase/hfile"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
)

// This file is the loader's HBase import path: instead of batched puts
// (write.go), the sorted cells of each table are written as HFiles, one per
// region (cut at the regions' boundaries, rolled at ImportConfig.FileBytes)
// and handed to the region servers with HBase's bulk-load calls when the
// table's writer commits. The cells skip the region servers' memstores and
// WAL, which bound the put path (BENCHMARKS.md, "Bulk load on HBase").
//
// Order and resumption are the put path's: the merge phase commits every
// index table's files before the fp cells' and those before the docs
// cells' (IndexFirst), and a resumed load writes and imports every table
// again. Importing the same cells twice is harmless: each cell carries an
// explicit timestamp (an index cell its time bucket's start, as the put
// path writes it; fp and docs cells the time their writer started) and the
// same value, and the families keep one version, so the visible content is
// that of one import; the extra store files go at the next compaction.
//
// The region servers must be able to read the files: standalone HBase on
// this machine reads ImportConfig.Dir directly; a cluster needs the
// directory on its filesystem (ImportConfig.RemoteDir names it as the
// servers see it). In ImportAuto mode a refusal that is not a split (the
// server cannot read the path) switches the rest of the load to puts.

// HBase import modes (ImportConfig.Mode).
const (
	// ImportPuts writes batched puts (Multi), the default.
	ImportPuts = "puts"
	// ImportHFile writes HFiles and bulk-loads them; a server that cannot
	// read them fails the load.
	ImportHFile = "hfile"
	// ImportAuto is ImportHFile that falls back to puts for the rest of
	// the load when a region server cannot read the files.
	ImportAuto = "auto"
)

// ImportConfig configures how sorted cells reach an HBase store. Other
// stores ignore it.
type ImportConfig struct {
	// Mode is ImportPuts (default), ImportHFile or ImportAuto.
	Mode string
	// Dir is where the HFiles are written until imported (default
	// CheckpointDir/hfiles).
	Dir string
	// RemoteDir is Dir as the region servers name it (default: Dir's
	// absolute path, right for a standalone HBase on this machine; e.g.
	// hdfs://namenode:8020/simdex-staging when Dir is that directory's
	// mount on this machine).
	RemoteDir string
	// FileBytes rolls an HFile at about this size (default 128 MiB): it
	// bounds the memory a re-split after a region split takes.
	FileBytes int64
	// FileMode is the permission of the HFiles (default
	// DefaultHFileMode); their directories get it with execute bits where
	// it has read bits. On a Kerberos cluster the region server checks
	// that the bulk-load caller (the client's principal, by its short
	// name) may read and write each file, and moves it into its staging
	// directory as the caller: files whose owner is not that user (on a
	// local disk, on a mount written as another user) need group or other
	// read-write, e.g. 0660 with a group the principal's user is in on
	// the region servers, or 0666.
	FileMode os.FileMode
}

func (c ImportConfig) withDefaults(cpDir string) ImportConfig {
	if c.Mode == "" {
		c.Mode = ImportPuts
	}
	if c.Dir == "" && cpDir != "" {
		c.Dir = filepath.Join(cpDir, "hfiles")
	}
	if c.FileBytes == 0 {
		c.FileBytes = 128 << 20
	}
	if c.FileMode == 0 {
		c.FileMode = DefaultHFileMode
	}
	return c
}

func (c ImportConfig) validate() error {
	switch c.Mode {
	case "", ImportPuts, ImportHFile, ImportAuto:
	default:
		return fmt.Errorf("hbase import %q: want puts, hfile or auto", c.Mode)
	}
	if c.FileBytes < 0 || (c.FileBytes > 0 && c.FileBytes < 1<<20) {
		return fmt.Errorf("hfile size %d: want at least 1MiB", c.FileBytes)
	}
	if c.FileMode != 0 {
		return checkHFileMode(c.FileMode)
	}
	return nil
}

// importState is the loader's import path state, shared by its writers.
type importState struct {
	// puts is set once a region server could not read the files (auto
	// mode): later writers put.
	puts atomic.Bool
	// files and fallbacks count imported HFiles and files put instead.
	files, fallbacks atomic.Int64
}

// hfileCellWriter returns an HFile writer for table t when the store is
// HBase and the import mode asks for HFiles (ok false: use puts).
func (l *loader) hfileCellWriter(ctx context.Context, t storage.Table, kind string) (w storage.CellWriter, ok bool, err error) {
	st, isHBase := l.ix.Store().(*hbasestore.Store)
	imp := l.cfg.Import.withDefaults(l.cfg.CheckpointDir)
	if !isHBase || imp.Mode == ImportPuts || l.imp.puts.Load() {
		return nil, false, nil
	}
	dir, err := filepath.Abs(filepath.Join(imp.Dir, kind))
	if err != nil {
		return nil, true, fmt.Errorf("bulkload: %w", err)
	}
	// Files of an interrupted run are garbage: every table is rewritten.
	if err := os.RemoveAll(dir); err != nil {
		return nil, true, fmt.Errorf("bulkload: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, true, fmt.Errorf("bulkload: %w", err)
	}
	// The files take the directory's mode (createHFile); chmod, as the
	// umask may have narrowed MkdirAll's.
	if err := os.Chmod(dir, hfileDirMode(imp.FileMode)); err != nil {
		return nil, true, fmt.Errorf("bulkload: %w", err)
	}
	remote := dir
	if imp.RemoteDir != "" {
		remote = strings.TrimSuffix(imp.RemoteDir, "/") + "/" + kind
	}
	scfg := st.Config().WithDefaults()
	hw := &hfileWriter{
		l: l, log: l.cfg.Logger, imp: &l.imp, beforeImport: l.cfg.beforeImport,
		c: st.Client(), t: t, table: hbasestore.TableName(scfg.Namespace, t), family: []byte(scfg.Family),
		dir: dir, remote: remote, kind: kind, mode: imp.Mode, fileBytes: imp.FileBytes, now: time.Now(),
	}
	if hw.regions, err = hw.c.Regions(ctx, hw.table); err != nil {
		return nil, true, fmt.Errorf("bulkload: regions of %s: %w", hw.table, err)
	}
	if hw.blockSize, err = familyBlockSize(ctx, hw.c, hw.table, scfg.Family); err != nil {
		return nil, true, err
	}
	return hw, true, nil
}

// familyBlockSize is the BLOCKSIZE the table's family declares (0: none,
// the HFile writer's default). Imported files are written with it so that
// they read as fast as files HBase writes itself: the index family's 4 KiB
// blocks keep a point Get's seek short (docs/OPERATIONS.md), and a file
// with 64 KiB blocks would keep its slow seeks until a major compaction.
func familyBlockSize(ctx context.Context, c *hbase.Client, table, family string) (int, error) {
	td, err := c.DescribeTable(ctx, table)
	if err != nil {
		return 0, fmt.Errorf("bulkload: describe %s: %w", table, err)
	}
	for _, f := range td.Families {
		if f.Name != family {
			continue
		}
		v, ok := f.Attributes[hbase.AttrBlockSize]
		if !ok {
			return 0, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("bulkload: %s: family %s has BLOCKSIZE %q", table, family, v)
		}
		return n, nil
	}
	return 0, nil
}

// hfileWriter is the CellWriter of the HFile import path.
type hfileWriter struct {
	// l is the load the writer belongs to: the auto mode's puts go
	// through it (nil outside a load: HFileWriter, ImportHFiles).
	l            *loader
	log          *slog.Logger
	imp          *importState
	beforeImport func(kind string, files []string)
	c            *hbase.Client
	t            storage.Table
	table        string
	family       []byte
	dir, remote  string
	kind, mode   string
	fileBytes    int64
	now          time.Time
	regions      []hbase.RegionBounds
	region       int // index in regions of the open file's region
	cur          *openHFile
	done         []hfileRange
	seq          int
	blockSize    int   // the family's BLOCKSIZE; 0: the writer's default
	err          error // sticky
	closed       bool
}

type openHFile struct {
	f           *os.File
	w           *hfile.Writer
	path        string
	first, last []byte
}

// hfileRange is a finished file and its row range.
type hfileRange struct {
	path        string
	first, last []byte
	size        int64
}

func (w *hfileWriter) ts(t time.Time) int64 {
	if !t.IsZero() && t.UnixMilli() > 0 {
		return t.UnixMilli()
	}
	return w.now.UnixMilli()
}

// Put adds one cell to the file of its region.
func (w *hfileWriter) Put(row, qual, val []byte) error {
	return w.PutAt(row, qual, val, time.Time{})
}

// PutAt is Put with the cell's timestamp (zero, or before 1970: the
// writer's start).
func (w *hfileWriter) PutAt(row, qual, val []byte, ts time.Time) error {
	if w.err != nil {
		return w.err
	}
	if w.cur != nil && (!w.regions[w.region].Contains(row) || w.cur.w.Size() >= w.fileBytes) {
		if err := w.finish(); err != nil {
			w.err = err
			return err
		}
	}
	if w.cur == nil {
		// Regions cover the key space in order: the last one starting at
		// or before row holds it.
		w.region = sort.Search(len(w.regions), func(i int) bool { return string(w.regions[i].Start) > string(row) }) - 1
		if w.region < 0 || !w.regions[w.region].Contains(row) {
			w.err = fmt.Errorf("bulkload: %s: no region holds row %x (regions %d)", w.table, row, len(w.regions))
			return w.err
		}
		if err := w.open(); err != nil {
			w.err = err
			return err
		}
	}
	err := w.cur.w.Append(hfile.Cell{Row: row, Family: w.family, Qualifier: qual, Timestamp: w.ts(ts), Value: val})
	if err != nil {
		w.err = fmt.Errorf("bulkload: %s: %w", w.table, err)
		return w.err
	}
	if w.cur.first == nil {
		w.cur.first = append([]byte(nil), row...)
	}
	w.cur.last = append(w.cur.last[:0], row...)
	return nil
}

func (w *hfileWriter) open() error {
	w.seq++
	path := filepath.Join(w.dir, fmt.Sprintf("%06d.hfile", w.seq))
	f, err := createHFile(path)
	if err != nil {
		return fmt.Errorf("bulkload: %w", err)
	}
	// The file info's creation time is the writer's start too, so that a
	// writer given the same cells and start writes the same bytes (the
	// Spark backfill's retried write tasks).
	hw, err := hfile.NewWriter(f, hfile.Config{BlockSize: w.blockSize, Now: w.now})
	if err != nil {
		return errors.Join(err, f.Close())
	}
	w.cur = &openHFile{f: f, w: hw, path: path}
	return nil
}

// finish closes the open file and queues it for import.
func (w *hfileWriter) finish() error {
	cur := w.cur
	w.cur = nil
	if cur == nil {
		return nil
	}
	if err := errors.Join(cur.w.Close(), cur.f.Sync(), cur.f.Close()); err != nil {
		return fmt.Errorf("bulkload: writing %s: %w", cur.path, err)
	}
	w.done = append(w.done, hfileRange{path: cur.path, first: cur.first, last: cur.last, size: cur.w.Size()})
	return nil
}

// Commit imports every file, in key order.
func (w *hfileWriter) Commit(ctx context.Context) (err error) {
	if w.err != nil {
		return errors.Join(w.err, w.Abort())
	}
	if w.closed {
		return fmt.Errorf("bulkload: %s: writer used after Commit or Abort", w.table)
	}
	if err := w.finish(); err != nil {
		return errors.Join(err, w.Abort())
	}
	w.closed = true
	defer func() { err = errors.Join(err, w.removeFiles()) }()
	if len(w.done) == 0 {
		return nil
	}
	if w.beforeImport != nil {
		files := make([]string, len(w.done))
		for i, f := range w.done {
			files[i] = f.path
		}
		w.beforeImport(w.kind, files)
	}
	importStart := time.Now()
	defer func() {
		if err == nil {
			var size int64
			for _, f := range w.done {
				size += f.size
			}
			w.log.Info("HFiles imported", "table", w.table, "cells", w.kind, "files", len(w.done), "bytes", size,
				"write_seconds", importStart.Sub(w.now).Seconds(), "import_seconds", time.Since(importStart).Seconds())
		}
	}()
	return w.importDone(ctx)
}

// importDone imports every finished file (done), in key order, with one
// bulk-load token for the table.
func (w *hfileWriter) importDone(ctx context.Context) error {
	token, err := w.c.PrepareBulkLoad(ctx, w.table)
	if err != nil {
		return fmt.Errorf("bulkload: prepare bulk load of %s: %w", w.table, err)
	}
	defer func() {
		// The staging directory goes even when the import failed.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if cerr := w.c.CleanupBulkLoad(cctx, w.table, token); cerr != nil {
			w.log.Warn("bulkload: cleanup of the bulk-load staging directory failed", "table", w.table, "err", cerr)
		}
	}()
	for i, f := range w.done {
		err := w.load(ctx, token, f, 0)
		if errors.Is(err, hbase.ErrBulkLoadUnreadable) && w.mode == ImportAuto {
			if w.imp.puts.CompareAndSwap(false, true) {
				w.log.Warn("bulkload: HBase cannot read the HFiles; the rest of the load writes puts (see docs/OPERATIONS.md: the region servers need the files on their filesystem)",
					"table", w.table, "path", w.remotePath(f.path), "err", err)
			}
			return w.putFiles(ctx, w.done[i:])
		}
		if err != nil {
			return fmt.Errorf("bulkload: importing %s into %s: %w%s", f.path, w.table, err, unreadableHint(err, f.path))
		}
	}
	return nil
}

func (w *hfileWriter) remotePath(path string) string {
	rel, err := filepath.Rel(w.dir, path)
	if err != nil {
		return path
	}
	return w.remote + "/" + filepath.ToSlash(rel)
}

// load imports one file; when its region split (or moved) since the file
// was cut, it re-cuts the file at the regions of now and loads the parts.
func (w *hfileWriter) load(ctx context.Context, token string, f hfileRange, depth int) error {
	err := w.c.BulkLoadHFiles(ctx, w.table, f.first, f.last, []hbase.FamilyPath{{Family: w.family, Path: w.remotePath(f.path)}}, token)
	if err == nil {
		w.imp.files.Add(1)
		return nil
	}
	if !errors.Is(err, hbase.ErrBulkLoadSplit) || depth >= 8 {
		return err
	}
	w.log.Info("bulkload: a region split or moved since the HFile was cut; cutting it again", "table", w.table, "file", f.path, "err", err)
	regions, err := w.c.Regions(ctx, w.table)
	if err != nil {
		return err
	}
	parts, err := w.resplit(f, regions)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := w.load(ctx, token, p, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// resplit rewrites f as one file per region of regions.
func (w *hfileWriter) resplit(f hfileRange, regions []hbase.RegionBounds) ([]hfileRange, error) {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return nil, fmt.Errorf("bulkload: %w", err)
	}
	file, err := hfile.Read(data)
	if err != nil {
		return nil, fmt.Errorf("bulkload: re-reading %s: %w", f.path, err)
	}
	sub := &hfileWriter{l: w.l, log: w.log, imp: w.imp, t: w.t, table: w.table, family: w.family, dir: w.dir, fileBytes: w.fileBytes, now: w.now, regions: regions, seq: w.seq, blockSize: w.blockSize}
	for _, c := range file.Cells {
		// The cells keep their timestamps.
		if sub.cur != nil && !sub.regions[sub.region].Contains(c.Row) {
			if err := sub.finish(); err != nil {
				return nil, err
			}
		}
		if sub.cur == nil {
			sub.region = sort.Search(len(regions), func(i int) bool { return string(regions[i].Start) > string(c.Row) }) - 1
			if sub.region < 0 || !regions[sub.region].Contains(c.Row) {
				return nil, fmt.Errorf("bulkload: %s: no region holds row %x", w.table, c.Row)
			}
			if err := sub.open(); err != nil {
				return nil, err
			}
		}
		if err := sub.cur.w.Append(c); err != nil {
			return nil, err
		}
		if sub.cur.first == nil {
			sub.cur.first = append([]byte(nil), c.Row...)
		}
		sub.cur.last = append(sub.cur.last[:0], c.Row...)
	}
	if err := sub.finish(); err != nil {
		return nil, err
	}
	w.seq = sub.seq
	if err := os.Remove(f.path); err != nil {
		return nil, fmt.Errorf("bulkload: %w", err)
	}
	return sub.done, nil
}

// putFiles writes the cells of files as batched puts (the fallback when
// the region servers cannot read them), with the timestamps the files
// carry.
func (w *hfileWriter) putFiles(ctx context.Context, files []hfileRange) error {
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			return fmt.Errorf("bulkload: %w", err)
		}
		file, err := hfile.Read(data)
		if err != nil {
			return fmt.Errorf("bulkload: re-reading %s: %w", f.path, err)
		}
		var muts []storage.Mutation
		size := 0
		flush := func() error {
			if len(muts) == 0 {
				return nil
			}
			err := w.l.apply(ctx, muts)
			muts, size = nil, 0
			return err
		}
		for _, c := range file.Cells {
			muts = append(muts, storage.Mutation{Kind: storage.Put, Table: w.t, Row: c.Row, Qualifier: c.Qualifier, Value: c.Value, Timestamp: time.UnixMilli(c.Timestamp)})
			size += len(c.Row) + len(c.Qualifier) + len(c.Value) + 16
			if size >= w.l.cfg.ApplyBytes {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		w.imp.fallbacks.Add(1)
	}
	return nil
}

func (w *hfileWriter) removeFiles() error {
	if err := os.RemoveAll(w.dir); err != nil {
		return fmt.Errorf("bulkload: %w", err)
	}
	return nil
}

// Abort drops the files.
func (w *hfileWriter) Abort() error {
	w.closed = true
	var err error
	if w.cur != nil {
		err = w.cur.f.Close()
		w.cur = nil
	}
	return errors.Join(err, w.removeFiles())
}
