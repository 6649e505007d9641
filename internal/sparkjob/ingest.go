package sparkjob

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/simdex/simdex/storage"
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
}

// Ingest ingests the sstables of every part under outDir into the embedded
// index in dataDir in one step, then adds the counters with the load's
// marker cell (meta row "bulkload", qualifier loadID), as cmd/bulkload
// does. It is safe to run again after a failure: a load whose marker is
// there is not added again, and files already moved into the store are no
// longer under outDir. Every part of parts must be there, complete.
func Ingest(ctx context.Context, dataDir, outDir string, parts int, loadID string, counts Counts) (st IngestStats, err error) {
	store, err := openStore(dataDir)
	if err != nil {
		return st, err
	}
	ix, err := openIndex(ctx, store, IndexConfig{})
	if err != nil {
		return st, errors.Join(err, store.Close())
	}
	defer func() { err = errors.Join(err, ix.Close()) }()
	if st.Loaded, err = loaded(ctx, store, loadID); err != nil || st.Loaded {
		return st, err
	}
	var paths []string
	for p := range parts {
		dir := PartDir(outDir, p)
		if _, err := os.Stat(filepath.Join(dir, "_SUCCESS")); err != nil {
			return st, fmt.Errorf("%w: part %d is not complete (%s): %v", ErrConfig, p, dir, err)
		}
		m, err := filepath.Glob(filepath.Join(dir, "*.sst"))
		if err != nil {
			return st, err
		}
		slices.Sort(m)
		paths = append(paths, m...)
		st.Parts++
	}
	st.Files = len(paths)
	if err := store.IngestFiles(ctx, paths); err != nil {
		return st, err
	}
	muts := ix.BulkWriter().Counters(counts.Documents, counts.Fingerprints)
	muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableMeta, Row: markerRow, Qualifier: []byte(loadID),
		Value: fmt.Appendf(nil, "documents=%d fingerprints=%d shard=0/1", counts.Documents, counts.Fingerprints)})
	if err := ix.BulkWriter().Apply(ctx, muts); err != nil {
		return st, err
	}
	return st, store.Flush()
}
