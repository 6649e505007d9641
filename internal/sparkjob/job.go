// Package sparkjob is the Go half of the Spark backfill (spark/): the
// per-record and per-key-range work a Spark job hands to a worker process
// on its executors, and the steps around it on the driver, so that every
// fingerprint, band row, text key, sketch and cell comes from the same
// code as cmd/bulkload's and the server's.
//
// The job, with the step of this package each part runs:
//
//  1. Prepare (driver): opens or creates the embedded index as cmd/bulkload
//     would, checks that its tables are empty, and writes the job's meta
//     file: the index's meta row, the sstable format and the base-set
//     chunk limit. Workers build their index from it (they cannot open the
//     store).
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
//     the part's sorted cells as sstables into a directory of its own,
//     renamed into place when complete (a retried task writes it again).
//  5. Ingest (driver): ingests every part's sstables into the store in one
//     step and adds the counters with a marker cell, once.
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
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// ErrConfig is wrapped by errors of the job's configuration and inputs.
var ErrConfig = errors.New("sparkjob: bad config")

// ErrNotEmpty: the index already holds documents; the job only loads into
// an empty index (cmd/bulkload merges into a non-empty one).
var ErrNotEmpty = errors.New("sparkjob: the index is not empty")

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
}

// IndexConfig is how the driver opens or creates the index: the settings
// a new index gets (an existing one keeps its own).
type IndexConfig struct {
	Layout      fingerprint.Layout
	BucketWidth time.Duration
	Bands       kvindex.BandsMode
	// MaxCellBytes is the base-set chunk limit (default kvindex's).
	MaxCellBytes int
}

func (c IndexConfig) kv() kvindex.Config {
	return kvindex.Config{Layout: c.Layout, BucketWidth: c.BucketWidth, Bands: c.Bands, MaxCellBytes: c.MaxCellBytes, RecipeVersion: fingerprint.RecipeVersion}
}

// openStore opens the embedded store in bulk mode, as cmd/bulkload does.
func openStore(dir string) (*pebblestore.Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	st, err := pebblestore.Open(dir, pebblestore.Options{Bulk: true, CacheBytes: 32 << 20})
	if err != nil {
		return nil, fmt.Errorf("%w (is a server or another load running on this directory? one process at a time)", err)
	}
	return st, nil
}

// openIndex opens the index in st, creating it with cfg when st holds
// none; an existing index keeps its layout and bucket width.
func openIndex(ctx context.Context, st storage.Store, cfg IndexConfig) (*kvindex.Index, error) {
	kcfg := cfg.kv()
	kcfg.AdoptStored = true
	return kvindex.Open(ctx, st, kcfg)
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

// empty reports whether the index, fp, docs and bands tables hold no row.
func empty(ctx context.Context, st storage.Store) (bool, error) {
	for _, t := range []storage.Table{storage.TableIndex, storage.TableFP, storage.TableDocs, storage.TableBands} {
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

// Prepare opens (creating it when missing) the embedded index in dataDir
// and writes the job's meta file to metaPath. It fails with ErrNotEmpty
// when the index holds documents, unless the load loadID is already in it:
// then done is true and nothing is written.
func Prepare(ctx context.Context, dataDir string, cfg IndexConfig, loadID, metaPath string) (done bool, err error) {
	st, err := openStore(dataDir)
	if err != nil {
		return false, err
	}
	ix, err := openIndex(ctx, st, cfg)
	if err != nil {
		return false, errors.Join(err, st.Close())
	}
	defer func() { err = errors.Join(err, ix.Close()) }()
	if done, err := loaded(ctx, st, loadID); err != nil || done {
		return done, err
	}
	if ok, err := empty(ctx, st); err != nil {
		return false, err
	} else if !ok {
		return false, fmt.Errorf("%w: %s (load into a new directory, or use cmd/bulkload, which merges)", ErrNotEmpty, dataDir)
	}
	rows, err := st.Get(ctx, []storage.RowKey{{Table: storage.TableMeta, Key: []byte("simdex")}})
	if err != nil {
		return false, err
	}
	m := Meta{Version: MetaVersion, Cells: map[string]string{}, MaxCellBytes: ix.Config().MaxCellBytes}
	for _, c := range rows[0].Cells {
		m.Cells[string(c.Qualifier)] = string(c.Value)
	}
	if m.TableFormat, err = st.TableFormat(); err != nil {
		return false, err
	}
	return false, writeJSON(metaPath, m)
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
