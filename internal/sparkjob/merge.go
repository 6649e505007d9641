package sparkjob

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// A load into an index that holds rows (Meta.MergeIndex, CheckStored)
// ends as cmd/bulkload's load into it ends: each loaded index row is
// merged under its row lock with what the row holds (kvindex's
// RowWriter.MergeBaseSets, the loader's merge: per bucket the union of the
// loaded and the stored base set, and the row's tombstones of residuals
// loaded again deleted), and the load is planned against the stored
// documents with the loader's planner (bulkload.Planner): ids already
// stored are replaced (their old fp and band cells deleted, a fingerprint
// left without a document gets tombstones) and the counters count what is
// new to the index. The other tables' cells are written as into an empty
// index.

// getBatch is the number of rows read per Get.
const getBatch = 1024

// planFile is where ingest keeps the plan, so that an ingest run again
// after a failure applies the same plan (its first run may have written
// the documents the planner would read).
const planFile = "plan.json"

// readKeys calls fn with each cell of a side file (MergeRowsFile or
// PlanCellsFile); a part without one (an empty part) has none.
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

// planStored plans the load against the stored documents, before
// anything is written, from the docs and fp parts' PlanCellsFile: each
// id's records in id order, then the fp cells written in key order, as a
// load feeds its planner from its runs.
func planStored(ctx context.Context, ix *kvindex.Index, cfg IngestConfig) (*bulkload.Plan, error) {
	path := filepath.Join(cfg.OutDir, planFile)
	if b, err := os.ReadFile(path); err == nil {
		var p bulkload.Plan
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrConfig, path, err)
		}
		return &p, nil
	}
	pl := bulkload.NewPlanner(ix, false)
	var (
		id      []byte
		winner  *kvindex.Document
		dropped []kvindex.Document
	)
	flush := func() error {
		if id == nil {
			return nil
		}
		if winner == nil {
			return fmt.Errorf("sparkjob: id %q has no record that is not superseded", id)
		}
		err := pl.Winner(ctx, string(id), *winner, dropped)
		id, winner, dropped = nil, nil, dropped[:0]
		return err
	}
	for _, t := range []storage.Table{storage.TableDocs, storage.TableFP} {
		for p := range cfg.Parts.Total() {
			if cfg.Parts.Table(p) != t {
				continue
			}
			err := readKeys(filepath.Join(PartDir(cfg.OutDir, p), PlanCellsFile), func(c *cell) error {
				if t == storage.TableFP {
					if len(c.row) != 8 {
						return fmt.Errorf("sparkjob: fp cell row %x", c.row)
					}
					return pl.FPCell(ctx, binary.BigEndian.Uint64(c.row), string(c.qual))
				}
				if len(c.qual) < 1 {
					return fmt.Errorf("sparkjob: corrupt docs cell record of %q", c.row)
				}
				if !bytes.Equal(c.row, id) {
					if err := flush(); err != nil {
						return err
					}
					id = slices.Clone(c.row)
				}
				d, err := ix.DecodeDocument(storage.Row{Key: slices.Clone(c.row), Cells: []storage.Cell{{Qualifier: slices.Clone(c.qual[1:]), Value: slices.Clone(c.val)}}})
				if err != nil {
					return fmt.Errorf("sparkjob: docs cell of %q: %w", c.row, err)
				}
				if c.qual[0] == 1 {
					winner = &d
				} else {
					dropped = append(dropped, d)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		if err := flush(); err != nil {
			return nil, err
		}
	}
	plan, err := pl.Finish(ctx)
	if err != nil {
		return nil, err
	}
	return plan, writeJSON(path, plan)
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
