package bulkload

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/simdex/simdex/hbase"
)

// The HBase import path for writers outside a load: the Spark backfill's
// write tasks write a part's cells with HFileWriter (the cells, files and
// timestamps a load's import writes) and its driver imports them with
// ImportHFiles (a load's import: one bulk-load token per table, a file cut
// again at the regions of the moment when its region split or moved).

// HFileConfig says how one table's HFiles are written and imported.
type HFileConfig struct {
	// Table is the HBase table (namespace:name), Family its column family.
	Table  string
	Family []byte
	// Dir holds the files written (HFileWriter) or, on import, the files
	// cut again after a split.
	Dir string
	// RemoteDir is Dir as the region servers name it (default Dir).
	RemoteDir string
	// BlockSize is the family's BLOCKSIZE (FamilyBlockSize; 0: the HFile
	// writer's default).
	BlockSize int
	// FileBytes rolls a file at about this size (default 128 MiB).
	FileBytes int64
	// FileMode is the files' permission (default DefaultHFileMode), as
	// ImportConfig.FileMode: Dir gets it with execute bits where it has
	// read bits, and the files take it from there.
	FileMode os.FileMode
	// Now stamps the cells put without a time (fp and docs cells), as a
	// load's writer stamps them with its start.
	Now time.Time
	// Regions are the table's regions: a file never straddles one.
	Regions []hbase.RegionBounds
	// Logger receives the import's log lines (default discard).
	Logger *slog.Logger
}

// HFile is a finished HFile and its rows' range.
type HFile struct {
	Path  string `json:"path"`
	First []byte `json:"first"`
	Last  []byte `json:"last"`
	Size  int64  `json:"size"`
}

func (c HFileConfig) writer() (*hfileWriter, error) {
	if c.FileBytes == 0 {
		c.FileBytes = 128 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("bulkload: %w", err)
	}
	remote := c.RemoteDir
	if remote == "" {
		remote = dir
	}
	if len(c.Regions) == 0 {
		c.Regions = []hbase.RegionBounds{{}}
	}
	if c.FileMode == 0 {
		c.FileMode = DefaultHFileMode
	}
	if err := checkHFileMode(c.FileMode); err != nil {
		return nil, err
	}
	return &hfileWriter{log: c.Logger, imp: &importState{}, table: c.Table, family: c.Family, dir: dir, remote: remote,
		mode: ImportHFile, fileBytes: c.FileBytes, now: c.Now, regions: c.Regions, blockSize: c.BlockSize}, nil
}

// HFileWriter writes the sorted cells of one table as HFiles into
// HFileConfig.Dir, as a load's HBase import writes them: one file per
// region (rolled at FileBytes), the cells stamped as a load stamps them.
type HFileWriter struct{ w *hfileWriter }

// NewHFileWriter makes cfg.Dir and returns a writer of files into it.
func NewHFileWriter(cfg HFileConfig) (*HFileWriter, error) {
	w, err := cfg.writer()
	if err != nil {
		return nil, err
	}
	if err := hfileDir(w.dir, cfg.FileMode); err != nil {
		return nil, err
	}
	return &HFileWriter{w}, nil
}

// hfileDir makes dir with the permission of a directory of HFiles of
// mode (DefaultHFileMode when 0), as a load makes its own.
func hfileDir(dir string, mode os.FileMode) error {
	if mode == 0 {
		mode = DefaultHFileMode
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bulkload: %w", err)
	}
	if err := os.Chmod(dir, hfileDirMode(mode)); err != nil {
		return fmt.Errorf("bulkload: %w", err)
	}
	return nil
}

// Put adds a cell stamped with HFileConfig.Now; cells come in strictly
// increasing (row, qualifier) order.
func (w *HFileWriter) Put(row, qual, val []byte) error { return w.w.PutAt(row, qual, val, time.Time{}) }

// PutAt is Put with the cell's timestamp (zero: HFileConfig.Now).
func (w *HFileWriter) PutAt(row, qual, val []byte, ts time.Time) error {
	return w.w.PutAt(row, qual, val, ts)
}

// Finish closes the last file and returns every file written, in key
// order.
func (w *HFileWriter) Finish() ([]HFile, error) {
	if w.w.err != nil {
		return nil, w.w.err
	}
	if err := w.w.finish(); err != nil {
		return nil, err
	}
	out := make([]HFile, len(w.w.done))
	for i, f := range w.w.done {
		out[i] = HFile{Path: f.path, First: f.first, Last: f.last, Size: f.size}
	}
	return out, nil
}

// Abort closes the open file and removes HFileConfig.Dir.
func (w *HFileWriter) Abort() error { return w.w.Abort() }

// ImportHFiles has the region servers bulk-load files into cfg.Table, in
// the order given, as a load's import does (BulkLoadHFile with one token
// for the table; a file whose region split or moved since it was cut is
// cut again, into cfg.Dir, at the regions of the moment and its parts
// loaded). Files are named to the servers by their path relative to
// cfg.Dir under cfg.RemoteDir. It returns the number of files loaded
// (parts of a file cut again counted each).
func ImportHFiles(ctx context.Context, c *hbase.Client, cfg HFileConfig, files []HFile) (int64, error) {
	w, err := cfg.writer()
	if err != nil {
		return 0, err
	}
	w.c = c
	// Files cut again go into Dir: it gets the files' permission.
	if err := hfileDir(w.dir, cfg.FileMode); err != nil {
		return 0, err
	}
	for _, f := range files {
		w.done = append(w.done, hfileRange{path: f.Path, first: f.First, last: f.Last, size: f.Size})
		w.seq++ // files cut again get names of their own
	}
	if len(w.done) == 0 {
		return 0, nil
	}
	err = w.importDone(ctx)
	return w.imp.files.Load(), err
}

// FamilyBlockSize is the BLOCKSIZE that family of table declares (0:
// none), which a load's HFiles are written with.
func FamilyBlockSize(ctx context.Context, c *hbase.Client, table, family string) (int, error) {
	return familyBlockSize(ctx, c, table, family)
}
