package sparkjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// Counts are what the job loaded, for the counters.
type Counts struct {
	// Documents: distinct ids; Fingerprints: distinct fingerprints of the
	// records that won their id.
	Documents    int64 `json:"documents"`
	Fingerprints int64 `json:"fingerprints"`
}

// IngestStats are what Ingest did.
type IngestStats struct {
	Files  int  `json:"files"`
	Parts  int  `json:"parts"`
	Loaded bool `json:"already_loaded"`
	// HFilesImported counts the HFiles HBase loaded (a file cut again
	// after a region split counts once per piece).
	HFilesImported int64 `json:"hfiles_imported,omitempty"`
	// MergedBytes are the bytes of the index cells merged into stored
	// rows (Meta.MergeIndex).
	MergedBytes int64 `json:"merged_bytes,omitempty"`
	// Counted is what the counters got: the documents and fingerprints
	// new to the index.
	Counted Counts `json:"counted"`
}

// IngestConfig configures Ingest.
type IngestConfig struct {
	Store Store
	// Meta is the job's meta file (Prepare's).
	Meta Meta
	// OutDir holds the parts' directories (PartDir); Parts are the job's.
	OutDir string
	Parts  Parts
	LoadID string
	// Counts are the load's distinct ids and fingerprints: the counters'
	// additions into an empty index (with Meta.CheckStored the plan's).
	Counts Counts
	// HFileRemoteDir is OutDir as HBase's region servers name it (default
	// OutDir's absolute path, right for a standalone HBase on this
	// machine; on a cluster, e.g. hdfs://namenode:8020/PATH).
	HFileRemoteDir string
	// Logger receives the HBase import's log lines (default discard).
	Logger *slog.Logger
	// BeforeImport, when set, runs before the HFiles of table (its HBase
	// name) are imported (tests: SplitFirstFile, a region that splits
	// between prepare and ingest).
	BeforeImport func(ctx context.Context, c *hbase.Client, table string, files []bulkload.HFile) error
}

// SplitFirstFile is a BeforeImport for tests: it splits the region that
// holds the first of files with two rows or more at that file's last row
// (HBase's split is done when it returns), so that the file straddles two
// regions when it is imported and the import must cut it again.
func SplitFirstFile(ctx context.Context, c *hbase.Client, table string, files []bulkload.HFile) error {
	for _, f := range files {
		if bytes.Equal(f.First, f.Last) {
			continue
		}
		if err := c.SplitRegion(ctx, table, f.Last); err != nil {
			return fmt.Errorf("sparkjob: splitting %s at %x: %w", table, f.Last, err)
		}
		return nil
	}
	return nil
}

// Ingest makes every part under OutDir part of the store, then adds the
// counters with the load's marker cell (meta row "bulkload", qualifier
// LoadID), as cmd/bulkload does. Every part must be there, complete. Into
// an index that held rows at prepare (merge.go), it first plans the load
// against the stored documents, merges the index rows into the stored
// ones, and after the files applies the plan (replaced documents' old
// cells deleted, tombstones).
//
// On the embedded store every part's sstables are ingested in one step.
// It is safe to run again after a failure: a load whose marker is there is
// not added again, and files already moved into the store are no longer
// under OutDir.
//
// On HBase the region servers bulk-load each table's HFiles, the index
// table's first, then the fp, bands and docs tables' (the index's write
// order, as cmd/bulkload imports them), each table through the loader's
// import (bulkload.ImportHFiles): a file whose region split or moved
// since prepare is cut again at the regions of the moment.
func Ingest(ctx context.Context, cfg IngestConfig) (st IngestStats, err error) {
	ix, err := openIndex(ctx, cfg.Store, IndexConfig{})
	if err != nil {
		return st, err
	}
	defer func() { err = errors.Join(err, ix.Close()) }()
	store := ix.Store()
	if st.Loaded, err = loaded(ctx, store, cfg.LoadID); err != nil || st.Loaded {
		return st, err
	}
	done := make([]WriteStats, cfg.Parts.Total())
	for p := range done {
		if err := readJSON(filepath.Join(PartDir(cfg.OutDir, p), "_SUCCESS"), &done[p]); err != nil {
			return st, fmt.Errorf("%w: part %d is not complete (%s): %v", ErrConfig, p, PartDir(cfg.OutDir, p), err)
		}
		st.Parts++
	}
	counts := cfg.Counts
	var plan *bulkload.Plan
	if cfg.Meta.CheckStored {
		if plan, err = planStored(ctx, ix, cfg); err != nil {
			return st, err
		}
		counts.Documents, counts.Fingerprints = plan.Counts()
	}
	if cfg.Meta.MergeIndex {
		// First, as cmd/bulkload writes every index row before the other
		// tables' cells.
		if st.MergedBytes, err = mergeIndexRows(ctx, ix, cfg); err != nil {
			return st, err
		}
	}
	switch s := store.(type) {
	case *hbasestore.Store:
		if err := ingestHBase(ctx, cfg, s, done, &st); err != nil {
			return st, err
		}
	case *pebblestore.Store:
		var paths []string
		for p := range done {
			m, err := filepath.Glob(filepath.Join(PartDir(cfg.OutDir, p), "*.sst"))
			if err != nil {
				return st, err
			}
			slices.Sort(m)
			paths = append(paths, m...)
		}
		st.Files = len(paths)
		if err := s.IngestFiles(ctx, paths); err != nil {
			return st, err
		}
	default:
		return st, fmt.Errorf("%w: a store of type %T", ErrConfig, store)
	}
	if plan != nil {
		// After the loaded cells, as a load applies its plan.
		if err := plan.Apply(ctx, ix); err != nil {
			return st, err
		}
	}
	st.Counted = counts
	muts := ix.BulkWriter().Counters(counts.Documents, counts.Fingerprints)
	muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableMeta, Row: markerRow, Qualifier: []byte(cfg.LoadID),
		Value: fmt.Appendf(nil, "documents=%d fingerprints=%d shard=0/1", counts.Documents, counts.Fingerprints)})
	if err := ix.BulkWriter().Apply(ctx, muts); err != nil {
		return st, err
	}
	if f, ok := store.(interface{ Flush() error }); ok {
		return st, f.Flush()
	}
	return st, nil
}

// ingestHBase imports the parts' HFiles (done: each part's stats), table
// by table in the parts' order.
func ingestHBase(ctx context.Context, cfg IngestConfig, s *hbasestore.Store, done []WriteStats, st *IngestStats) error {
	h := cfg.Meta.HBase
	if h == nil {
		return fmt.Errorf("%w: the meta file is not of a load into HBase", ErrConfig)
	}
	if ns := s.Config().WithDefaults().Namespace; ns != h.Namespace {
		return fmt.Errorf("%w: the job was prepared for HBase namespace %s, not %s", ErrConfig, h.Namespace, ns)
	}
	for _, t := range partTables {
		var files []bulkload.HFile
		for p := range done {
			if cfg.Parts.Table(p) != t {
				continue
			}
			for _, f := range done[p].HFiles {
				f.Path = filepath.Join(PartDir(cfg.OutDir, p), f.Path)
				files = append(files, f)
			}
		}
		if len(files) == 0 {
			continue
		}
		st.Files += len(files)
		table := hbasestore.TableName(h.Namespace, t)
		if cfg.BeforeImport != nil {
			if err := cfg.BeforeImport(ctx, s.Client(), table, files); err != nil {
				return err
			}
		}
		hc := bulkload.HFileConfig{Table: table, Family: []byte(h.Family), Dir: cfg.OutDir,
			RemoteDir: cfg.HFileRemoteDir, BlockSize: h.BlockSizes[t.String()], Now: time.UnixMilli(h.NowMillis), FileMode: h.FileMode,
			Logger: cfg.Logger}
		n, err := bulkload.ImportHFiles(ctx, s.Client(), hc, files)
		st.HFilesImported += n
		if err != nil {
			return fmt.Errorf("sparkjob: importing the %s table's HFiles: %w", t, err)
		}
	}
	return nil
}
