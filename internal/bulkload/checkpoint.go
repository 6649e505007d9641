package bulkload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/storage"
)

// checkpoint is checkpoint.json. Version 3: its runs are SDXRUN02 or
// SDXRUN03 files (runfile.go reads both), and every spill writes the band
// cells' run too (bandcells). Version 4 adds fp_runs. A directory
// of an older version (2: no band-cell runs; 1: SDXRUN01/SDXCEL01 runs) is
// refused with a request to start over.
type checkpoint struct {
	Version      int         `json:"version"`
	LoadID       string      `json:"load_id"`
	Inputs       []inputInfo `json:"inputs"`
	Shard        int         `json:"shard"`
	Shards       int         `json:"shards"`
	File         int         `json:"file"` // next input to read
	Line         int64       `json:"line"` // lines of it already consumed
	Records      int64       `json:"records"`
	Rejected     int64       `json:"rejected"`
	RejectsBytes int64       `json:"rejects_bytes"`
	InputBytes   int64       `json:"input_bytes"`
	BytesWritten int64       `json:"bytes_written"`
	Runs         int         `json:"runs"` // spills 0..Runs-1 exist
	// FPRuns: the spills write fps runs (every owned record's
	// fingerprint), which only the dedup report needs (its repeated
	// fingerprints). Without them the distinct fingerprints are counted
	// while the fp cells are written. Checkpoints of version 3 always had
	// them.
	FPRuns     bool `json:"fp_runs"`
	Phase1Done bool `json:"phase1_done"`
	// FreshIndex: when the load started, the index had no row in this
	// shard's range, so rows are written without reading them first.
	FreshIndex bool `json:"fresh_index"`
	// FreshDocs: when the load started, the fp and docs tables were
	// empty, so no loaded id or fingerprint can already be stored.
	FreshDocs bool `json:"fresh_docs"`
	// PlanDone: the plan for repeated ids was made (plan.json exists when
	// HasPlan).
	PlanDone bool `json:"plan_done"`
	HasPlan  bool `json:"has_plan"`
	// Finished: the load completed with this summary, and its spill runs
	// are deleted (or being deleted). A rerun answers with the summary
	// and writes nothing: the index already holds the load. Older
	// checkpoints lack it (a rerun of theirs re-merges the runs).
	Finished *Summary `json:"finished,omitempty"`
}

type inputInfo struct {
	Name string `json:"name"`
	Size int64  `json:"size"` // -1 for stdin
}

const checkpointVersion = 4

// loadID names this load (inputs and shard), for the counters marker.
func loadID(inputs []inputInfo, shard, shards int) string {
	h := xxhash.New()
	for _, in := range inputs {
		fmt.Fprintf(h, "%s\x00%d\x00", in.Name, in.Size)
	}
	fmt.Fprintf(h, "%d/%d", shard, shards)
	return fmt.Sprintf("%016x", h.Sum64())
}

// cpPath is the checkpoint file.
func (l *loader) cpPath() string { return filepath.Join(l.cfg.CheckpointDir, "checkpoint.json") }

// loadCheckpoint reads the checkpoint of a load of files, or starts a fresh
// one when there is none. A checkpoint of other inputs, another shard or an
// unreadable version is refused rather than resumed.
func (l *loader) loadCheckpoint(ctx context.Context, files []string) error {
	infos, err := inputInfos(files)
	if err != nil {
		return err
	}
	fresh := checkpoint{Version: checkpointVersion, Inputs: infos, Shard: l.cfg.Shard, Shards: l.cfg.Shards,
		LoadID: loadID(infos, l.cfg.Shard, l.cfg.Shards), FPRuns: l.cfg.DedupPath != ""}
	b, err := os.ReadFile(l.cpPath())
	if errors.Is(err, os.ErrNotExist) {
		return l.startCheckpoint(ctx, fresh)
	}
	if err != nil {
		return fmt.Errorf("bulkload: checkpoint: %w", err)
	}
	var cp checkpoint
	err = json.Unmarshal(b, &cp)
	if err == nil && cp.Version == 3 {
		cp.Version, cp.FPRuns = checkpointVersion, true // the same layout, with fps runs
	}
	if err != nil || cp.Version != checkpointVersion {
		return fmt.Errorf("bulkload: checkpoint %s unreadable (version %d, %v): remove the directory to start over", l.cpPath(), cp.Version, err)
	}
	if cp.LoadID != fresh.LoadID || !slices.Equal(cp.Inputs, fresh.Inputs) {
		return fmt.Errorf("%w: %s was written for other inputs or another shard; use a new checkpoint directory", ErrInputChanged, l.cpPath())
	}
	if l.cfg.DedupPath != "" && !cp.FPRuns {
		return fmt.Errorf("bulkload: %s: the load was started without a dedup report, and its spills lack what one needs: rerun it without --dedup-report, or remove the directory to start over with one", l.cpPath())
	}
	l.cp = cp
	l.cfg.Logger.Info("resuming bulk load", "file", cp.File, "line", cp.Line, "records", cp.Records, "runs", cp.Runs, "phase1_done", cp.Phase1Done)
	return nil
}

// inputInfos names the input files by absolute path and size, which a
// resumed load must find unchanged.
func inputInfos(files []string) ([]inputInfo, error) {
	var infos []inputInfo
	for _, f := range files {
		if f == "-" {
			infos = append(infos, inputInfo{Name: "-", Size: -1})
			continue
		}
		st, err := os.Stat(f)
		if err != nil {
			return nil, fmt.Errorf("bulkload: input: %w", err)
		}
		abs, _ := filepath.Abs(f)
		infos = append(infos, inputInfo{Name: abs, Size: st.Size()})
	}
	return infos, nil
}

// startCheckpoint starts a load with the fresh checkpoint cp, noting
// whether the tables it writes are empty: rows are then written without
// reading them first, and no loaded id can already be stored.
func (l *loader) startCheckpoint(ctx context.Context, cp checkpoint) error {
	l.cp = cp
	var err error
	if l.cp.FreshIndex, err = l.noRowsInRange(ctx); err != nil {
		return err
	}
	l.cp.FreshDocs, err = l.tablesEmpty(ctx, storage.TableDocs, storage.TableFP)
	return err
}

var (
	errFound = errors.New("found")
	errPast  = errors.New("past")
)

// noRowsInRange reports whether the index table has no row in this shard's
// range (rows of the shards before it are skipped over). The scan starts at
// the first table that holds rows of this shard, shard*T/n (rowShard of any
// row of an earlier table is below shard), so a later shard of a large
// index does not read the earlier shards' rows.
func (l *loader) noRowsInRange(ctx context.Context) (bool, error) {
	first := []byte{byte(l.cfg.Shard * l.T / l.cfg.Shards)}
	err := l.ix.Store().Scan(ctx, storage.TableIndex, first, nil, func(r storage.Row) error {
		t := int(r.Key[0])
		if t >= l.T || len(r.Key) < 2 {
			return errFound // not ours to judge: take the careful path
		}
		var prefix uint64
		for _, b := range r.Key[1:] {
			prefix = prefix<<8 | uint64(b)
		}
		p := l.perms[t]
		switch s := l.rowShard(t, p.Join(prefix, 0)); {
		case s == l.cfg.Shard:
			return errFound
		case s > l.cfg.Shard:
			return errPast
		}
		return nil
	})
	switch {
	case errors.Is(err, errFound):
		return false, nil
	case err == nil || errors.Is(err, errPast):
		return true, nil
	}
	return false, err
}

// tablesEmpty reports whether the tables have no row.
func (l *loader) tablesEmpty(ctx context.Context, tables ...storage.Table) (bool, error) {
	for _, t := range tables {
		err := l.ix.Store().Scan(ctx, t, nil, nil, func(storage.Row) error { return errFound })
		if errors.Is(err, errFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

func (l *loader) saveCheckpoint() error { return l.saveCheckpointOf(&l.cp) }

// saveCheckpointOf writes cp (l.cp, or a copy of it taken at a spill) as
// the checkpoint, durably: synced, renamed into place, directory synced.
func (l *loader) saveCheckpointOf(cp *checkpoint) error {
	if f, ok := l.ix.Store().(flusher); ok {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return err
	}
	tmp := l.cpPath() + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp, l.cpPath()); err != nil {
		return err
	}
	return syncDir(l.cfg.CheckpointDir)
}
