package sparkjob

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// A load into an index that holds rows (Meta.MergeIndex, CheckStored)
// ends as cmd/bulkload's load into it ends: each loaded index row is
// merged under its row lock with what the row holds (kvindex's
// RowWriter.MergeBaseSets, the loader's merge: per bucket the union of the
// loaded and the stored base set, and the row's tombstones of residuals
// loaded again deleted), and the counters count the fingerprints new to
// the index. The other tables' cells are written as into an empty index.
//
// Ids already stored are refused (ErrNotEmpty) before anything is written:
// replacing a stored document deletes its old fp and band cells and may
// leave a fingerprint without a document, which cmd/bulkload plans from
// the stored documents; the job leaves that to it.

// getBatch is the number of rows read per Get.
const getBatch = 1024

// checkFile is where ingest keeps what checkStored found, so that an
// ingest run again after a failure counts the same (its first run may
// have written the documents it would find).
const checkFile = "check-stored.json"

// checked is what checkStored found.
type checked struct {
	Documents    int64 `json:"documents"`
	Fingerprints int64 `json:"fingerprints"`
}

// readKeys calls fn with each row of a side file (MergeRowsFile or
// RowKeysFile); a part without one (an empty part) has none.
func readKeys(path string, fn func(c *cell) error) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	rr := runReader{r: bufio.NewReaderSize(f, 1<<20)}
	var c cell
	for {
		more, err := rr.next(&c)
		if err != nil || !more {
			return err
		}
		if err := fn(&c); err != nil {
			return err
		}
	}
}

// checkStored reads the docs rows of the load's ids and the fp rows of its
// fingerprints (the docs and fp parts' RowKeysFile): it refuses a load of
// an id that is stored, and returns the number of ids and of fingerprints
// the index has no row of. Nothing is written but checkFile.
func checkStored(ctx context.Context, st storage.Store, cfg IngestConfig) (checked, error) {
	var ck checked
	path := filepath.Join(cfg.OutDir, checkFile)
	if err := readJSON(path, &ck); err == nil {
		return ck, nil
	}
	for _, t := range []storage.Table{storage.TableDocs, storage.TableFP} {
		var keys []storage.RowKey
		get := func() error {
			if len(keys) == 0 {
				return nil
			}
			rows, err := st.Get(ctx, keys)
			if err != nil {
				return err
			}
			for i, r := range rows {
				switch {
				case len(r.Cells) == 0 && t == storage.TableDocs:
					ck.Documents++
				case len(r.Cells) == 0:
					ck.Fingerprints++
				case t == storage.TableDocs:
					return fmt.Errorf("%w: id %q is stored (load it with cmd/bulkload, which replaces stored documents)", ErrNotEmpty, keys[i].Key)
				}
			}
			keys = keys[:0]
			return nil
		}
		for p := range cfg.Parts.Total() {
			if cfg.Parts.Table(p) != t {
				continue
			}
			err := readKeys(filepath.Join(PartDir(cfg.OutDir, p), RowKeysFile), func(c *cell) error {
				keys = append(keys, storage.RowKey{Table: t, Key: slices.Clone(c.row)})
				if len(keys) < getBatch {
					return nil
				}
				return get()
			})
			if err != nil {
				return ck, err
			}
		}
		if err := get(); err != nil {
			return ck, err
		}
	}
	return ck, writeJSON(path, ck)
}

// mergeIndexRows merges the index parts' rows (MergeRowsFile) into the
// stored rows, a few parts at a time, and returns the bytes written.
func mergeIndexRows(ctx context.Context, ix *kvindex.Index, cfg IngestConfig) (int64, error) {
	var parts []int
	for p := range cfg.Parts.Total() {
		if cfg.Parts.Table(p) == storage.TableIndex {
			parts = append(parts, p)
		}
	}
	var (
		mu      sync.Mutex
		errs    []error
		written int64
		wg      sync.WaitGroup
		next    = make(chan int)
	)
	for range min(4, len(parts)) {
		wg.Go(func() {
			for p := range next {
				n, err := mergePart(ctx, ix, filepath.Join(PartDir(cfg.OutDir, p), MergeRowsFile))
				mu.Lock()
				written += n
				if err != nil {
					errs = append(errs, fmt.Errorf("sparkjob: merging the index rows of part %d: %w", p, err))
				}
				mu.Unlock()
			}
		})
	}
	for _, p := range parts {
		next <- p
	}
	close(next)
	wg.Wait()
	return written, errors.Join(errs...)
}

// mergePart merges the rows of one MergeRowsFile.
func mergePart(ctx context.Context, ix *kvindex.Index, path string) (int64, error) {
	var (
		written int64
		row     []byte
		sets    []kvindex.BucketSet
	)
	flush := func() error {
		if len(sets) == 0 {
			return nil
		}
		var carried []uint64
		for _, s := range sets {
			carried = append(carried, s.Residuals...)
		}
		slices.Sort(carried)
		n, err := ix.RowWriter().MergeBaseSets(ctx, row, sets, slices.Compact(carried))
		written += n
		sets = sets[:0]
		return err
	}
	err := readKeys(path, func(c *cell) error {
		if len(c.qual) != 4 || len(c.val)%8 != 0 {
			return fmt.Errorf("sparkjob: corrupt index row record %x/%x", c.row, c.qual)
		}
		if string(c.row) != string(row) {
			if err := flush(); err != nil {
				return err
			}
			row = slices.Clone(c.row)
		}
		set := kvindex.BucketSet{Bucket: binary.BigEndian.Uint32(c.qual)}
		for i := 0; i < len(c.val); i += 8 {
			set.Residuals = append(set.Residuals, binary.BigEndian.Uint64(c.val[i:]))
		}
		sets = append(sets, set)
		return ctx.Err()
	})
	if err != nil {
		return written, err
	}
	return written, flush()
}
