// Package sparkjob is the Go half of the Spark backfill (spark/): the
// per-record and per-key-range work a Spark job hands to a worker process
// on its executors, and the steps around it on the driver, so that every
// fingerprint, band row, text key, sketch and cell comes from the same
// code as cmd/bulkload's and the server's.
//
// The job, with the step of this package each part runs:
//
//  1. Prepare (driver): opens or creates the index (the embedded store or
//     HBase) as cmd/bulkload would, notes whether its tables hold rows, and
//     writes the job's meta file: the index's meta row, the base-set chunk
//     limit and the sstable format, or on HBase the tables' regions (the
//     parts are cut at them) and family block sizes. Workers build their
//     index from it (they do not open the store).
//  2. Map (one worker per input partition): reads "order TAB where TAB line"
//     lines, encodes each with bulkload.Encoder (parse, fingerprint, cells)
//     and writes framed records: one per good record (id, order,
//     fingerprint), one per reject (where, reason), and at the end, per
//     output part, one sorted run of the partition's cells and index entries
//     in that part's key range (Parts).
//  3. The job shuffles the runs by part and decides which records repeated
//     ids supersede (the last one in input order wins, as in a load).
//  4. Write (one worker per part): merges the part's runs, leaves out the
//     superseded records' cells, encodes index rows as base sets and writes
//     the part's sorted cells as sstables (or HFiles, on HBase) into a
//     directory of its own, renamed into place when complete (a retried
//     task writes it again).
//  5. Ingest (driver): ingests every part's sstables into the embedded
//     store in one step, or has HBase's region servers bulk-load the
//     HFiles table by table (bulkload.ImportHFiles), then adds the
//     counters with a marker cell, once. Into an index that held rows,
//     the write tasks leave the index rows to it, which it merges into
//     the stored rows as cmd/bulkload does, and it plans the load against
//     the stored documents with the loader's planner (merge.go).
package sparkjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2/sstable"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/internal/open"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// ErrConfig is wrapped by errors of the job's configuration and inputs.
var ErrConfig = errors.New("sparkjob: bad config")

// MetaVersion is the version of the job's meta file.
const MetaVersion = 1

// Meta is the job's meta file: what workers need to encode cells exactly
// as the index would.
type Meta struct {
	Version int `json:"version"`
	// Cells are the cells of the index's meta row ("simdex").
	Cells map[string]string `json:"meta_row"`
	// TableFormat is the store's sstable format (pebblestore.Store.TableFormat).
	TableFormat sstable.TableFormat `json:"table_format"`
	// MaxCellBytes is the base-set chunk limit the load uses.
	MaxCellBytes int `json:"max_cell_bytes"`
	// HBase is set for a load into HBase: the write tasks write HFiles.
	HBase *HBaseMeta `json:"hbase,omitempty"`
	// MergeIndex: the index table held rows at prepare, so index rows are
	// merged into what they hold (by the driver, at ingest, as
	// cmd/bulkload merges them) rather than written as files.
	MergeIndex bool `json:"merge_index,omitempty"`
	// CheckStored: the docs or fp table held rows at prepare, so ingest
	// plans the load against the stored documents (bulkload.Planner), as
	// cmd/bulkload plans a load into such an index.
	CheckStored bool `json:"check_stored,omitempty"`
}

// HBaseMeta is what the write tasks of a load into HBase need to write
// the HFiles a load's HBase import writes (bulkload.HFileWriter), without
// a connection of their own.
type HBaseMeta struct {
	// Namespace and Family of the simdex tables.
	Namespace string `json:"namespace"`
	Family    string `json:"family"`
	// BlockSizes are the tables' family BLOCKSIZE, by table name (0:
	// none declared).
	BlockSizes map[string]int `json:"block_sizes"`
	// FileMode is the HFiles' permission (0: bulkload.DefaultHFileMode),
	// as cmd/bulkload's --hbase-hfile-mode.
	FileMode os.FileMode `json:"file_mode,omitempty"`
	// NowMillis stamps the fp and docs cells (a load stamps them with its
	// writer's start): the time of prepare, so that a retried write task
	// writes the same files.
	NowMillis int64 `json:"now_millis"`
	// Regions are the start keys of each table's regions after the first,
	// by table name, read at prepare: the parts are cut at them
	// (Parts.WithRegions).
	Regions map[string][][]byte `json:"regions"`
}

// RegionStarts are Regions by table.
func (h *HBaseMeta) RegionStarts() map[storage.Table][][]byte {
	out := map[storage.Table][][]byte{}
	for _, t := range partTables {
		out[t] = h.Regions[t.String()]
	}
	return out
}

// Store names the store the job loads into: the embedded store in
// DataDir, or HBase when HBase is set (the settings cmd/bulkload takes,
// internal/config.HBase), the HFiles with permission HFileMode (0:
// bulkload.DefaultHFileMode).
type Store struct {
	DataDir   string
	HBase     *hbasestore.Config
	HFileMode os.FileMode
}

func (s Store) String() string {
	if s.HBase != nil {
		return "HBase namespace " + s.HBase.WithDefaults().Namespace
	}
	return s.DataDir
}

// IndexConfig is how the driver opens or creates the index: the settings
// a new index gets (an existing one keeps its own).
type IndexConfig struct {
	Layout      fingerprint.Layout
	BucketWidth time.Duration
	Bands       kvindex.BandsMode
	// MaxCellBytes is the base-set chunk limit (default kvindex's).
	MaxCellBytes int
	// SourceAttr is the attribute naming a document's source, as
	// cmd/bulkload's --source-attr (kvindex.Config.SourceAttr): "" the
	// index's (a new one records kvindex.DefaultSourceAttr),
	// kvindex.NoSourceAttr a new index without source-scoped rows; an
	// existing index that records another is refused. The workers take
	// it from the meta row, as every other setting of the index.
	SourceAttr string
}

func (c IndexConfig) kv() kvindex.Config {
	return kvindex.Config{Layout: c.Layout, BucketWidth: c.BucketWidth, Bands: c.Bands, MaxCellBytes: c.MaxCellBytes, RecipeVersion: fingerprint.RecipeVersion,
		SourceAttr: c.SourceAttr, LeaseGuest: true} // beside the servers, as cmd/bulkload
}

// openIndex opens the store, and the index in it, creating the index with
// cfg when the store holds none (an existing index keeps its layout and
// bucket width), as cmd/bulkload does: the embedded store in bulk mode,
// its directory made if missing, or HBase with its cross-process row
// locks.
func openIndex(ctx context.Context, s Store, cfg IndexConfig) (*kvindex.Index, error) {
	kcfg := cfg.kv()
	kcfg.AdoptStored = true
	o := open.Store{Kind: "pebble", DataDir: s.DataDir, MakeDir: true, Pebble: pebblestore.Options{Bulk: true, CacheBytes: 32 << 20}}
	if s.HBase != nil {
		o = open.Store{Kind: "hbase", HBase: *s.HBase}
	}
	return open.Index(ctx, o, kcfg)
}

// markerRow is the meta row of load markers (bulkload's).
var markerRow = []byte("bulkload")

// loaded reports whether the meta row of load markers names loadID.
func loaded(ctx context.Context, st storage.Store, loadID string) (bool, error) {
	rows, err := st.Get(ctx, []storage.RowKey{{Table: storage.TableMeta, Key: markerRow}})
	if err != nil {
		return false, err
	}
	for _, c := range rows[0].Cells {
		if string(c.Qualifier) == loadID {
			return true, nil
		}
	}
	return false, nil
}

// errStop ends a scan at its first row.
var errStop = errors.New("stop")

// empty reports whether tables hold no row.
func empty(ctx context.Context, st storage.Store, tables ...storage.Table) (bool, error) {
	for _, t := range tables {
		err := st.Scan(ctx, t, nil, nil, func(storage.Row) error { return errStop })
		if errors.Is(err, errStop) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

// Prepare opens (creating it when missing) the index in the store and
// writes the job's meta file to metaPath. When the load loadID is already
// in the index, done is true and nothing is written. An index that holds
// rows is noted in the meta file, as cmd/bulkload notes it when a load
// starts: its index rows are merged (MergeIndex), and the load is planned
// against the stored documents (CheckStored).
func Prepare(ctx context.Context, s Store, cfg IndexConfig, loadID, metaPath string) (done bool, err error) {
	ix, err := openIndex(ctx, s, cfg)
	if err != nil {
		return false, err
	}
	defer func() { err = errors.Join(err, ix.Close()) }()
	st := ix.Store()
	if done, err := loaded(ctx, st, loadID); err != nil || done {
		return done, err
	}
	m := Meta{Version: MetaVersion, Cells: map[string]string{}, MaxCellBytes: ix.Config().MaxCellBytes}
	fresh, err := empty(ctx, st, storage.TableIndex)
	if err != nil {
		return false, err
	}
	m.MergeIndex = !fresh
	if fresh, err = empty(ctx, st, storage.TableDocs, storage.TableFP); err != nil {
		return false, err
	}
	m.CheckStored = !fresh
	rows, err := st.Get(ctx, []storage.RowKey{{Table: storage.TableMeta, Key: []byte("simdex")}})
	if err != nil {
		return false, err
	}
	for _, c := range rows[0].Cells {
		m.Cells[string(c.Qualifier)] = string(c.Value)
	}
	switch st := st.(type) {
	case *pebblestore.Store:
		if m.TableFormat, err = st.TableFormat(); err != nil {
			return false, err
		}
	case *hbasestore.Store:
		if m.HBase, err = hbaseMeta(ctx, st, ix.HasBands()); err != nil {
			return false, err
		}
		m.HBase.FileMode = s.HFileMode
	}
	return false, writeJSON(metaPath, m)
}

// hbaseMeta reads what the write tasks of a load into st need: the
// tables' regions and family block sizes.
func hbaseMeta(ctx context.Context, st *hbasestore.Store, bands bool) (*HBaseMeta, error) {
	cfg := st.Config().WithDefaults()
	h := &HBaseMeta{Namespace: cfg.Namespace, Family: cfg.Family, BlockSizes: map[string]int{}, Regions: map[string][][]byte{},
		NowMillis: time.Now().UnixMilli()}
	for _, t := range partTables {
		if t == storage.TableBands && !bands {
			continue // never written
		}
		name := hbasestore.TableName(cfg.Namespace, t)
		regions, err := st.Client().Regions(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("sparkjob: regions of %s: %w", name, err)
		}
		for _, r := range regions[1:] {
			h.Regions[t.String()] = append(h.Regions[t.String()], r.Start)
		}
		if h.BlockSizes[t.String()], err = bulkload.FamilyBlockSize(ctx, st.Client(), name, cfg.Family); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// writeJSON writes v to path through a temporary file and a rename.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readJSON reads path into v.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrConfig, path, err)
	}
	return nil
}

// ReadMeta reads a job's meta file.
func ReadMeta(path string) (Meta, error) {
	var m Meta
	if err := readJSON(path, &m); err != nil {
		return m, err
	}
	if m.Version != MetaVersion {
		return m, fmt.Errorf("%w: %s: meta version %d, want %d", ErrConfig, path, m.Version, MetaVersion)
	}
	return m, nil
}

// WorkerIndex is the index a worker encodes with: an Index over a store
// that holds only the meta row (it refuses writes), so the cells are
// encoded for exactly the index Prepare found.
func (m Meta) WorkerIndex(ctx context.Context) (*kvindex.Index, error) {
	ix, err := kvindex.Open(ctx, &metaStore{cells: m.Cells}, kvindex.Config{MaxCellBytes: m.MaxCellBytes,
		RecipeVersion: fingerprint.RecipeVersion, Bands: kvindex.BandsAuto, AdoptStored: true, NoCreate: true})
	if errors.Is(err, kvindex.ErrNoIndex) {
		return nil, fmt.Errorf("%w: the meta file has no meta row", ErrConfig)
	}
	return ix, err
}

// metaStore is a read-only storage.Store holding one meta row.
type metaStore struct{ cells map[string]string }

func (s *metaStore) Get(_ context.Context, keys []storage.RowKey) ([]storage.Row, error) {
	out := make([]storage.Row, len(keys))
	for i, k := range keys {
		out[i].Key = k.Key
		if k.Table != storage.TableMeta || string(k.Key) != "simdex" {
			continue
		}
		for q, v := range s.cells {
			out[i].Cells = append(out[i].Cells, storage.Cell{Qualifier: []byte(q), Value: []byte(v)})
		}
	}
	return out, nil
}

func (s *metaStore) Mutate(context.Context, []storage.Mutation) error {
	return fmt.Errorf("%w: a worker's index writes nothing", storage.ErrStore)
}

func (s *metaStore) Scan(context.Context, storage.Table, []byte, []byte, func(storage.Row) error) error {
	return nil
}

func (s *metaStore) Close() error { return nil }
