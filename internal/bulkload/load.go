package bulkload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// Index is what the loader needs of a *kvindex.Index.
type Index interface {
	Layout() fingerprint.Layout
	Buckets() kvindex.Buckets
	DocMutations(d kvindex.Document) ([]kvindex.Mutation, error)
	// AppendDocCells is DocMutations' fp and docs cells for a document
	// without band cells, encoded into a reused buffer (no allocation).
	AppendDocCells(dst []byte, d *kvindex.Document) (out []byte, fpLen int, err error)
	CounterMutations(docs, fps int64) []kvindex.Mutation
	Apply(ctx context.Context, muts []kvindex.Mutation) error
	UpdateRow(ctx context.Context, row []byte, fn func(kvindex.Row) ([]kvindex.Mutation, error)) error
	DecodeDocument(row kvindex.Row) (kvindex.Document, error)
	// Documents reads stored documents by id (the dedup report judges
	// its pairs by their docs cells).
	Documents(ctx context.Context, ids []string) (map[string]kvindex.Document, error)
	// HasBands reports whether the index keeps LSH band rows: text
	// documents then get band cells.
	HasBands() bool
	BaseSetMutations(row []byte, bucket uint32, residuals []uint64, oldChunks int) ([]kvindex.Mutation, error)
	Store() kvindex.Store
	Config() kvindex.Config
}

var _ Index = (*kvindex.Index)(nil)

// cellIngester is the optional store capability the loader writes sorted
// cells through: the embedded store builds sorted string tables from them
// and ingests them (no memtable inserts). Stores without it (HBase) take
// the same sorted cells as batches of puts.
type cellIngester interface {
	NewCellWriter(t kvindex.Table, dir string) (kvindex.CellWriter, error)
}

// flusher is implemented by stores that buffer writes (the embedded store
// opened with NoSync): checkpoints flush them so that what a checkpoint
// covers survives a machine crash too.
type flusher interface{ Flush() error }

// Summary is what a load did.
type Summary struct {
	// Records are the good input lines; Rejected the bad ones.
	Records  int64
	Rejected int64
	// Documents: distinct ids this shard wrote; DuplicateIDs: input records
	// whose id repeated an earlier one (the last one's docs cell wins).
	Documents    int64
	DuplicateIDs int64
	// Fingerprints: distinct fingerprints this shard wrote.
	Fingerprints int64
	// IndexRows written and IndexEntries (residuals) placed in them.
	IndexRows    int64
	IndexEntries int64
	// DuplicatePairs and DuplicateDocuments (documents in a near-duplicate
	// cluster other than its earliest) of the self-dedup report, when asked.
	DuplicatePairs     int64
	DuplicateDocuments int64
	// BytesWritten is the size of the cells written (keys, qualifiers,
	// values).
	BytesWritten int64
	// InputBytes read (compressed size).
	InputBytes int64
	Runs       int
	Resumed    bool
	Duration   time.Duration
	// HFilesImported: HFiles bulk-loaded into HBase (Config.Import);
	// HFilesPut: HFiles written as puts instead (auto mode, when the
	// region servers could not read them).
	HFilesImported, HFilesPut int64
}

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

// loader is one Run's state. Its fields are used by the Run goroutine only,
// except the atomics read by the progress reporter.
type loader struct {
	ix  Index
	cfg Config
	// maxCellBytes is the index's base-set chunk limit.
	maxCellBytes int
	// bandCells: the index keeps band rows and the input may hold text
	// (so spills are sized for band cells).
	bandCells bool
	perms     []fingerprint.Permuter
	T         int
	cp        checkpoint
	// buffers: one per table, then ids, then fps (fixed capacity).
	bufs [][]entry
	// scratches and cellScratches are the spill workers' sort buffers,
	// one each per worker (worker w uses index w only).
	scratches     [][]entry
	cellScratches [][]cellRef
	// cells buffers the fp, band and docs cells (cellFP, cellBand,
	// cellDoc) between spills, each up to its own limits.
	cells [numCellKinds]cellBuf
	// spare is the second set of spill buffers: while one spill's
	// buffers are sorted and written in the background (spillAsync), the
	// input goes on into the other set. The background spill owns spare
	// until it is joined; nil before the first spill.
	spare *spillBufs
	// spillSaved receives the result of the goroutine that writes the last
	// spill's runs (from spare) and hands them to syncSpill (nil: none
	// pending). The Run goroutine owns it and joins it (waitSpillSaved)
	// before the next spill, at the end of the read phase and on every
	// return from phase1.
	spillSaved chan error
	// syncTail is closed when the last spill handed to syncSpill has been
	// synced and its checkpoint saved (nil: none yet); only the goroutine
	// holding the spill buffers (a spill goroutine, or the Run goroutine
	// after joining it) reads and replaces it. syncWG joins the sync
	// goroutines (waitSynced); syncErr holds the first error of one.
	syncTail chan struct{}
	syncWG   sync.WaitGroup
	syncErr  atomic.Pointer[error]
	// applySem bounds the merge phase's Apply calls in flight (InFlight).
	applySem chan struct{}
	// imp is the HBase import path's state (hbaseimport.go).
	imp importState
	// plan is the merge phase's plan for repeated ids (nil: none needed).
	plan *plan
	// ids caches the distinct-id count: the Run goroutine's, or during a
	// speculative merge phase written by its goroutine and read after
	// idsCounted is closed.
	ids struct {
		runCount
		done bool
	}
	// idsCounted is closed when the speculative merge phase's id count is
	// done (nil otherwise).
	idsCounted chan struct{}
	// fpCount is written by startFPCount's goroutine and read after
	// fpCountDone is closed; without fps runs, by writeCells of the fp
	// cells (read after phase2 has joined it).
	fpCount     runCount
	fpCountDone chan struct{}
	fpr         *fingerprint.Fingerprinter
	rejects     *os.File
	rejW        *bufio.Writer
	sum         Summary

	// Progress counters (atomic: read by the progress goroutine).
	pRecords, pRejected, pBytes, pRows atomic.Int64
	phase                              atomic.Value // string
	totalBytes                         int64
	totalRows                          int64
}

// Run loads cfg.Inputs into ix. It returns what it did; on error, rerunning
// with the same configuration resumes.
func Run(ctx context.Context, ix Index, cfg Config) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	cfg = cfg.withDefaults()
	start := time.Now()
	l := &loader{ix: ix, cfg: cfg, perms: ix.Layout().Permuters(), maxCellBytes: ix.Config().MaxCellBytes}
	l.T = len(l.perms)
	if l.cfg.DedupK == -1 {
		l.cfg.DedupK = ix.Layout().K
	}
	if l.cfg.DedupK > ix.Layout().K {
		return Summary{}, fmt.Errorf("%w: dedup k %d above the layout's K %d", ErrConfig, l.cfg.DedupK, ix.Layout().K)
	}
	l.phase.Store("read")
	if err := os.MkdirAll(cfg.CheckpointDir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("bulkload: %w", err)
	}
	files, err := expandInputs(cfg.Inputs)
	if err != nil {
		return Summary{}, err
	}
	if err := l.loadCheckpoint(ctx, files); err != nil {
		return Summary{}, err
	}
	if fin := l.cp.Finished; fin != nil {
		s := *fin
		s.Resumed = true
		cfg.Logger.Info("bulk load already finished (remove the checkpoint directory to load again)", "checkpoint", l.cpPath(),
			"records", s.Records, "documents", s.Documents, "fingerprints", s.Fingerprints)
		// A kill after the mark may have left runs behind.
		return s, l.removeRuns()
	}
	l.bandCells = ix.HasBands() && mayHoldText(cfg.Format, files)
	for _, in := range l.cp.Inputs {
		l.totalBytes += max(in.Size, 0)
	}
	l.sum.Resumed = l.cp.Records > 0 || l.cp.Runs > 0 || l.cp.Rejected > 0
	stopProgress := l.startProgress()
	err = l.run(ctx, files)
	stopProgress()
	l.sum.Duration = time.Since(start)
	l.sum.HFilesImported, l.sum.HFilesPut = l.imp.files.Load(), l.imp.fallbacks.Load()
	if err != nil {
		return l.sum, err
	}
	s := l.sum
	// The runs are only needed to finish or redo this load: mark it
	// finished first, so that a kill in between leaves a checkpoint that
	// still answers, then free their disk (they hold every cell once).
	fin := s
	l.cp.Finished = &fin
	if err := l.saveCheckpoint(); err != nil {
		return s, fmt.Errorf("bulkload: checkpoint: %w", err)
	}
	if err := l.removeRuns(); err != nil {
		return s, err
	}
	cfg.Logger.Info("bulk load done", "records", s.Records, "rejected", s.Rejected, "documents", s.Documents,
		"fingerprints", s.Fingerprints, "duplicate_ids", s.DuplicateIDs, "index_rows", s.IndexRows,
		"duplicate_pairs", s.DuplicatePairs, "duplicate_documents", s.DuplicateDocuments,
		"bytes_written", s.BytesWritten, "seconds", s.Duration.Seconds(), "resumed", s.Resumed)
	return s, nil
}

func (l *loader) run(ctx context.Context, files []string) error {
	t0 := time.Now()
	if !l.cp.Phase1Done {
		if err := l.openRejects(); err != nil {
			return err
		}
		err := l.phase1(ctx, files)
		err = errors.Join(err, l.closeRejects())
		if err != nil {
			return err
		}
		l.cfg.Logger.Info("input read", "records", l.cp.Records, "runs", l.cp.Runs, "seconds", time.Since(t0).Seconds())
	}
	t0 = time.Now()
	l.sum.Records, l.sum.Rejected = l.cp.Records, l.cp.Rejected
	l.sum.InputBytes, l.sum.Runs = l.cp.InputBytes, l.cp.Runs
	l.sum.BytesWritten = l.cp.BytesWritten
	l.phase.Store("merge")
	if l.cfg.onPhase != nil {
		l.cfg.onPhase("merge")
	}
	for _, p := range l.perms {
		l.totalRows += min(int64(1)<<min(p.PrefixBits, 62), l.cp.Records) / int64(l.cfg.Shards)
	}
	if l.cp.FPRuns {
		// The fingerprint count reads only the fps runs: it overlaps the
		// merge. Its goroutine stops with ctx and is joined before run
		// returns.
		fctx, stopCount := context.WithCancel(ctx)
		l.startFPCount(fctx)
		defer func() {
			stopCount()
			<-l.fpCountDone
		}()
	}
	pairs, err := l.phase2(ctx)
	if err != nil {
		return err
	}
	l.cfg.Logger.Info("index rows written", "rows", l.sum.IndexRows, "seconds", time.Since(t0).Seconds())
	l.phase.Store("count")
	groups, err := l.phase3(ctx)
	if err != nil {
		return err
	}
	if l.cfg.DedupPath != "" {
		if err := l.writeDedup(ctx, pairs, groups); err != nil {
			return err
		}
	}
	return nil
}

// loadID names this load (inputs and shard), for the counters marker.
func loadID(inputs []inputInfo, shard, shards int) string {
	h := xxhash.New()
	for _, in := range inputs {
		fmt.Fprintf(h, "%s\x00%d\x00", in.Name, in.Size)
	}
	fmt.Fprintf(h, "%d/%d", shard, shards)
	return fmt.Sprintf("%016x", h.Sum64())
}

func (l *loader) cpPath() string { return filepath.Join(l.cfg.CheckpointDir, "checkpoint.json") }

func (l *loader) loadCheckpoint(ctx context.Context, files []string) error {
	var infos []inputInfo
	for _, f := range files {
		if f == "-" {
			infos = append(infos, inputInfo{Name: "-", Size: -1})
			continue
		}
		st, err := os.Stat(f)
		if err != nil {
			return fmt.Errorf("bulkload: input: %w", err)
		}
		abs, _ := filepath.Abs(f)
		infos = append(infos, inputInfo{Name: abs, Size: st.Size()})
	}
	fresh := checkpoint{Version: checkpointVersion, Inputs: infos, Shard: l.cfg.Shard, Shards: l.cfg.Shards,
		LoadID: loadID(infos, l.cfg.Shard, l.cfg.Shards), FPRuns: l.cfg.DedupPath != ""}
	b, err := os.ReadFile(l.cpPath())
	if errors.Is(err, os.ErrNotExist) {
		l.cp = fresh
		if l.cp.FreshIndex, err = l.noRowsInRange(ctx); err != nil {
			return err
		}
		l.cp.FreshDocs, err = l.tablesEmpty(ctx, kvindex.TableDocs, kvindex.TableFP)
		return err
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
	err := l.ix.Store().Scan(ctx, kvindex.TableIndex, first, nil, func(r kvindex.Row) error {
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
func (l *loader) tablesEmpty(ctx context.Context, tables ...kvindex.Table) (bool, error) {
	for _, t := range tables {
		err := l.ix.Store().Scan(ctx, t, nil, nil, func(kvindex.Row) error { return errFound })
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

func (l *loader) openRejects() error {
	f, err := os.OpenFile(l.cfg.RejectsPath, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("bulkload: rejects file: %w", err)
	}
	// Drop rejects written after the checkpoint: the lines are re-read.
	if err := f.Truncate(l.cp.RejectsBytes); err != nil {
		return errors.Join(err, f.Close())
	}
	if _, err := f.Seek(l.cp.RejectsBytes, io.SeekStart); err != nil {
		return errors.Join(err, f.Close())
	}
	l.rejects, l.rejW = f, bufio.NewWriter(f)
	return nil
}

func (l *loader) closeRejects() error {
	if l.rejects == nil {
		return nil
	}
	err := errors.Join(l.rejW.Flush(), l.rejects.Close())
	l.rejects = nil
	return err
}

// reject is one line of the rejects file.
type reject struct {
	File   string `json:"file"`
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
}

// cellBytesPerRecord is the arena space each of the two cell buffers gets
// per record of the spill buffers' capacity (an fp cell of a short id is
// ~30 bytes, a docs cell without attributes ~45).
const cellBytesPerRecord = 48

// bandCellBytes is the arena space the band-cell buffer gets per band cell
// of its capacity: the 9-byte row, the id (up to 19 bytes within this
// budget) and the 4-byte bucket.
const bandCellBytes = 32

// bufferCap is the number of records a spill holds: three quarters of the
// memory bound (less the store's share) over what one record takes in the
// two sets of spill buffers (spillAsync) and the sort scratch. Per set:
// entryKinds entries of 16 bytes and two cells (a reference and arena
// bytes, with an eighth of slack); with band cells, NumBands more cells of
// bandCellBytes (a text document's band cells outweigh all the rest, so a
// text load into an index with bands spills about eight times as often).
// The scratch, once: a radix-sort entry and a cell-sort reference (and
// NumBands band-cell references) per spill worker. The rest (three batches
// of input in flight, the MSD sort's 512 KiB of bucket counts, the
// runtime) does not grow with the bound and fits in the remaining quarter.
func (l *loader) bufferCap() int {
	if l.cfg.spillEvery > 0 {
		return l.cfg.spillEvery + l.cfg.BatchDocs
	}
	w := int64(l.spillWorkers())
	ref := int64(unsafe.Sizeof(cellRef{}))
	set := int64(16*l.entryKinds()) + 2*ref + 2*cellBytesPerRecord*9/8
	scratch := w * (16 + ref)
	if l.bandCells {
		set += fingerprint.NumBands * (ref + bandCellBytes*9/8)
		scratch += w * fingerprint.NumBands * ref
	}
	return int((l.cfg.Memory - l.cfg.StoreMemory) * 3 / 4 / (2*set + scratch))
}

// mayHoldText reports whether inputs read in format may hold text
// documents (stdin in auto mode is decided by its first byte, later).
func mayHoldText(format string, files []string) bool {
	switch format {
	case FormatDocs:
		return true
	case FormatFingerprints:
		return false
	}
	for _, f := range files {
		if f == "-" || formatOf(f, 0) == FormatDocs {
			return true
		}
	}
	return false
}

// spillWorkers is the number of goroutines that sort and write a spill's
// buffers: one per worker, at most 2 (each adds a sort scratch of the
// buffers' size to the memory charged; two keep two cores busy).
func (l *loader) spillWorkers() int { return max(1, min(l.cfg.Workers, 2)) }

// The cell kinds, in the order the merge phase writes them when order
// matters (IndexFirst): fp cells, then band cells, then the docs cells, so
// that no document is visible before it can be found.
const (
	cellFP = iota
	cellBand
	cellDoc
	numCellKinds
)

// cellKinds name the cell runs of the fp, bands and docs tables. A band
// cell's run value is its time bucket (4 bytes, big-endian), which becomes
// the cell's timestamp; the stored value is empty, as an insert writes it.
var cellKinds = [numCellKinds]string{"fpcells", "bandcells", "doccells"}

var cellTables = [numCellKinds]kvindex.Table{kvindex.TableFP, kvindex.TableBands, kvindex.TableDocs}

// docShard is the shard that writes fp's fp and docs cells.
func (l *loader) docShard(fp uint64) int {
	hi, _ := bits.Mul64(fp, uint64(l.cfg.Shards))
	return int(hi)
}

// rowShard is the shard that writes index row (t, prefix): the row's
// position (t + prefix/2^P)/T in the row-key space, times n.
func (l *loader) rowShard(t int, v uint64) int {
	p := l.perms[t]
	a := v >> (64 - p.PrefixBits) << (64 - p.PrefixBits) // prefix, top-aligned
	hi, _ := bits.Mul64(a, uint64(l.cfg.Shards))
	return int((uint64(t)*uint64(l.cfg.Shards) + hi) / uint64(l.T))
}

// phase1 reads the input from the checkpoint's position, writes fp and docs
// cells and spills index entries.
func (l *loader) phase1(ctx context.Context, files []string) (err error) {
	capN := l.bufferCap()
	b := l.newSpillBufs(capN)
	l.bufs, l.cells = b.bufs, b.cells
	l.pRecords.Store(l.cp.Records)
	l.pRejected.Store(l.cp.Rejected)
	l.pBytes.Store(l.cp.InputBytes)
	defer func() { err = errors.Join(err, l.waitSpillSaved(), l.waitSynced()) }()
	for fi := l.cp.File; fi < len(files); fi++ {
		if err := l.readFile(ctx, fi, files[fi], capN); err != nil {
			return err
		}
		l.cp.File, l.cp.Line = fi+1, 0
	}
	// The background spill first: it uses the sort scratches too. Then
	// every spill's sync and checkpoint: the next save is the last.
	if err := l.waitSpillSaved(); err != nil {
		return err
	}
	runs := l.cp.Runs
	if err := l.spill(); err != nil {
		return err
	}
	if l.cp.Runs > runs {
		if err := syncRuns(l.cfg.CheckpointDir, l.spillRunPaths(runs)); err != nil {
			return fmt.Errorf("bulkload: spill: %w", err)
		}
	}
	if err := l.waitSynced(); err != nil {
		return err
	}
	l.cp.Phase1Done = true
	l.bufs, l.scratches, l.cells, l.cellScratches, l.spare = nil, nil, [numCellKinds]cellBuf{}, nil, nil
	// Collect the spill buffers now (most of the heap): left to the
	// pacer, they stayed counted while the merge phase's garbage piled on
	// top, and peak RSS at 10^7 under --memory 1GiB was 880 MB.
	runtime.GC()
	return l.saveCheckpoint()
}

// spillBufs is one set of spill buffers: the entry buffers (entryKinds)
// and the cell buffers.
type spillBufs struct {
	bufs  [][]entry
	cells [numCellKinds]cellBuf
}

// newSpillBufs makes a set of spill buffers of capN records.
func (l *loader) newSpillBufs(capN int) *spillBufs {
	b := &spillBufs{bufs: make([][]entry, l.entryKinds())}
	for i := range b.bufs {
		b.bufs[i] = make([]entry, 0, capN)
	}
	for i := range b.cells {
		refs, arena := capN, capN*cellBytesPerRecord
		if i == cellBand {
			refs, arena = 0, 0
			if l.bandCells {
				refs, arena = capN*fingerprint.NumBands, capN*fingerprint.NumBands*bandCellBytes
			}
		}
		b.cells[i] = cellBuf{arena: make([]byte, 0, arena+arena/8), refs: make([]cellRef, 0, refs), maxRefs: refs, maxArena: arena}
	}
	return b
}

// item is one line of a batch.
type item struct {
	line int64
	text []byte
	// textOff and textLen place text in its batch's arena.
	textOff, textLen int
	long             bool
	rec              record
	err              error
	muts             []kvindex.Mutation
	owned            bool
	// A precomputed fingerprint's line takes the allocation-free path:
	// id is the record's id (a slice of the batch's arena; rec.id is
	// empty), vals its fp cell value (fpLen bytes) then its docs cell
	// value, in a buffer the item keeps across batches.
	fast  bool
	id    []byte
	vals  []byte
	fpLen int
}

// readBatch is one batch of input lines, read and processed (parsed,
// fingerprinted, cells encoded) ahead of the Run goroutine's commit.
type readBatch struct {
	items   []item
	arena   []byte // the lines' text, which items[i].text points into
	line    int64  // lines of the file consumed through this batch
	counted int64  // input bytes of the file read so far (for the checkpoint)
	eof     bool
	err     error
}

// readFile reads file fi from the checkpoint's position. A producer
// goroutine reads and processes the next batch (parse and fingerprint on
// the workers) while this goroutine commits the previous one and spills:
// both cores stay busy. The producer is owned by readFile: it stops when
// readFile returns (done) and is joined before.
func (l *loader) readFile(ctx context.Context, fi int, name string, capN int) error {
	var counted atomic.Int64 // input bytes of this file read; written by the producer's reads
	r, closeIn, err := openInput(name, l.cfg.Stdin, func(n int64) { counted.Add(n); l.pBytes.Add(n) })
	if err != nil {
		return fmt.Errorf("bulkload: %w", err)
	}
	defer closeIn()
	br, _ := r.(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	format := l.cfg.Format
	if format == FormatAuto {
		first, _ := br.Peek(1)
		var b byte
		if len(first) > 0 {
			b = first[0]
		}
		format = formatOf(name, b)
	}
	if format == FormatDocs && l.fpr == nil {
		if l.fpr, err = l.cfg.NewFingerprinter(); err != nil {
			return fmt.Errorf("bulkload: %w", err)
		}
	}
	skipTo := int64(0)
	if fi == l.cp.File {
		skipTo = l.cp.Line
	}
	display := name
	if name == "-" {
		display = "stdin"
	}
	inBase := l.cp.InputBytes
	// Three batches circulate: one being committed here, one being
	// processed (parsed, fingerprinted) and one being read by the
	// producer.
	free := make(chan *readBatch, 3)
	for range 3 {
		free <- &readBatch{items: make([]item, 0, l.cfg.BatchDocs)}
	}
	ready := make(chan *readBatch, 1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(done)
		wg.Wait()
	}()
	wg.Go(func() { l.produce(br, format, skipTo, &counted, free, ready, done) })
	for {
		var rb *readBatch
		select {
		case rb = <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
		if rb.err != nil {
			return fmt.Errorf("bulkload: reading %s: %w", display, rb.err)
		}
		if len(rb.items) > 0 {
			if err := l.commitBatch(ctx, rb.items, display); err != nil {
				return err
			}
			l.cp.File, l.cp.Line = fi, rb.line
			if l.cfg.afterBatch != nil {
				l.cfg.afterBatch()
			}
			// Spill when any buffer could overflow with the next batch.
			if l.nearlyFull(capN) {
				l.cp.InputBytes = inBase + rb.counted
				if err := l.spillAsync(capN); err != nil {
					return err
				}
			}
		}
		if rb.eof {
			l.cp.InputBytes = inBase + counted.Load()
			return nil
		}
		free <- rb
	}
}

// produce reads batches of lines from br (skipping the first skipTo),
// processes them and sends them on ready, taking empty batches from free,
// until the input ends, a read fails or done is closed. The processing
// of a batch overlaps the reading of the next (a goroutine of its own,
// which produce joins): read one after the other, the processing workers
// waited for every batch's lines (~0.3 s of a 10^7 load's read phase).
func (l *loader) produce(br *bufio.Reader, format string, skipTo int64, counted *atomic.Int64, free, ready chan *readBatch, done chan struct{}) {
	read := make(chan *readBatch) // unbuffered: at most one batch read ahead of the processing
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for rb := range read {
			if rb.err == nil && len(rb.items) > 0 {
				l.processBatch(rb.items, format)
			}
			select {
			case ready <- rb:
			case <-done:
				return
			}
		}
	})
	defer close(read)
	lr := &lineReader{br: br}
	lineNo := int64(0)
	for {
		var rb *readBatch
		select {
		case rb = <-free:
		case <-done:
			return
		}
		rb.items, rb.arena = rb.items[:0], rb.arena[:0]
		for len(rb.items) < l.cfg.BatchDocs {
			line, long, err := lr.next()
			if err == io.EOF {
				rb.eof = true
				break
			}
			if err != nil {
				rb.err = err
				break
			}
			lineNo++
			if lineNo <= skipTo {
				continue
			}
			// The text is copied into the batch's arena; items point into
			// it once the arena has stopped growing.
			off := len(rb.arena)
			rb.arena = append(rb.arena, line...)
			// The item's encode buffer is kept: the batch is reused.
			rb.items = rb.items[:len(rb.items)+1]
			it := &rb.items[len(rb.items)-1]
			*it = item{line: lineNo, long: long, textOff: off, textLen: len(line), vals: it.vals[:0]}
		}
		for i := range rb.items {
			it := &rb.items[i]
			it.text = rb.arena[it.textOff : it.textOff+it.textLen : it.textOff+it.textLen]
		}
		rb.line, rb.counted = lineNo, counted.Load()
		select {
		case read <- rb:
		case <-done:
			return
		}
		if rb.eof || rb.err != nil {
			return
		}
	}
}

func (l *loader) nearlyFull(capN int) bool {
	for _, b := range l.bufs {
		if len(b)+l.cfg.BatchDocs > capN {
			return true
		}
	}
	for i, c := range l.cells {
		perDoc := 1
		if i == cellBand {
			// A text adds up to MaxTextKeys text-key cells: spill
			// before the buffer would grow past its sized capacity.
			perDoc = fingerprint.NumBands + fingerprint.MaxTextKeys
		}
		if len(c.refs) > 0 && (len(c.refs)+perDoc*l.cfg.BatchDocs > c.maxRefs || len(c.arena) >= c.maxArena) {
			return true
		}
	}
	return false
}

// processBatch parses and fingerprints the batch's lines in parallel.
func (l *loader) processBatch(batch []item, format string) {
	w := min(l.cfg.Workers, len(batch))
	var wg sync.WaitGroup
	for k := range w {
		wg.Go(func() {
			// The worker's document for processFPItem: a local would
			// escape through the Index interface (an allocation per line).
			var doc kvindex.Document
			for i := k; i < len(batch); i += w {
				l.processItem(&batch[i], format, &doc)
			}
		})
	}
	wg.Wait()
}

func (l *loader) processItem(it *item, format string, doc *kvindex.Document) {
	if it.long {
		it.err = fmt.Errorf("line longer than %d bytes", MaxLineBytes)
		return
	}
	if format != FormatDocs {
		l.processFPItem(it, doc)
		return
	}
	var rec record
	var err error
	var text string // a short document's normalized text, for its docs cell (decide.Rule.KeepText)
	if format == FormatDocs {
		rec, err = parseDocLine(it.text)
		if err == nil {
			var res fingerprint.Result
			res, err = l.fpr.Fingerprint(fingerprint.Document{Title: rec.title, Body: rec.text})
			rec.fp, rec.titleFP, rec.exact = res.Simhash, res.TitleSimhash, res.ExactHash
			rec.sketch, rec.chars, rec.bands = res.Sketch, res.Chars, res.Bands
			text = decide.DefaultRule().KeepText(res.Chars, res.Text, kvindex.MaxTextBytes)
			rec.title, rec.text = "", ""
		}
	} else {
		rec, err = parseFPLine(it.text)
	}
	it.text = nil
	if err != nil {
		it.err = err
		return
	}
	it.rec = rec
	it.owned = l.docShard(uint64(rec.fp)) == l.cfg.Shard
	d := kvindex.Document{ID: rec.id, Fingerprint: rec.fp, TitleFingerprint: rec.titleFP, ExactHash: rec.exact, Time: rec.at, Attrs: rec.attrs, Sketch: rec.sketch, Chars: rec.chars, Bands: rec.bands, Text: text}
	// DocMutations validates the id (the same ValidateID error as a
	// separate check gave: the first thing it checks), time and attributes.
	muts, err := l.ix.DocMutations(d)
	if err != nil {
		it.err = err
		return
	}
	if it.owned {
		it.muts = muts
	}
}

// processFPItem is processItem for a precomputed fingerprint's line,
// without allocating: the id stays in the batch's arena and the cells are
// encoded into the item's buffer. d is scratch space for the document.
func (l *loader) processFPItem(it *item, d *kvindex.Document) {
	id, fp, at, err := parseFPFields(it.text)
	it.text = nil
	if err != nil {
		it.err = err
		return
	}
	it.rec = record{fp: fp, at: at}
	it.owned = l.docShard(uint64(fp)) == l.cfg.Shard
	// The string shares id's bytes, which stay unchanged until the batch
	// is committed; AppendDocCells keeps no reference to it.
	*d = kvindex.Document{ID: unsafe.String(unsafe.SliceData(id), len(id)), Fingerprint: fp, Time: at}
	// AppendDocCells validates the id and time as DocMutations does (the
	// same errors).
	vals, fpLen, err := l.ix.AppendDocCells(it.vals[:0], d)
	if err != nil {
		it.err = err
		return
	}
	it.fast, it.id, it.vals, it.fpLen = true, id, vals, fpLen
}

// docQualifier is the docs cell's qualifier, as bytes.
var docQualifier = []byte(kvindex.DocQualifier)

// commitBatch writes the rejects of a processed batch and buffers its cells
// and index entries.
func (l *loader) commitBatch(ctx context.Context, batch []item, file string) error {
	buckets := l.ix.Buckets()
	for i := range batch {
		it := &batch[i]
		if it.err != nil {
			if errors.Is(it.err, errSkip) {
				continue
			}
			if l.cfg.Strict {
				return fmt.Errorf("%w: %s line %d: %v", ErrStrict, file, it.line, it.err)
			}
			b, _ := json.Marshal(reject{File: file, Line: it.line, Reason: it.err.Error()})
			b = append(b, '\n')
			if _, err := l.rejW.Write(b); err != nil {
				return fmt.Errorf("bulkload: rejects file: %w", err)
			}
			l.cp.RejectsBytes += int64(len(b))
			l.cp.Rejected++
			l.pRejected.Add(1)
			continue
		}
		l.cp.Records++
		l.pRecords.Add(1)
		fp := it.rec.fp
		bucket := buckets.Of(it.rec.at)
		for t, p := range l.perms {
			v := p.Permute(fp)
			if l.rowShard(t, v) == l.cfg.Shard {
				l.bufs[t] = append(l.bufs[t], entry{key: v, aux: bucket})
			}
		}
		if it.owned && it.fast {
			l.bufs[l.T] = append(l.bufs[l.T], entry{key: xxhash.Sum64(it.id)})
			if l.cp.FPRuns {
				l.bufs[l.T+1] = append(l.bufs[l.T+1], entry{key: uint64(fp)})
			}
			var row [8]byte
			binary.BigEndian.PutUint64(row[:], uint64(fp))
			l.cells[cellFP].add(row[:], it.id, it.vals[:it.fpLen])
			l.cells[cellDoc].add(it.id, docQualifier, it.vals[it.fpLen:])
		} else if it.owned {
			l.bufs[l.T] = append(l.bufs[l.T], entry{key: xxhash.Sum64String(it.rec.id)})
			if l.cp.FPRuns {
				l.bufs[l.T+1] = append(l.bufs[l.T+1], entry{key: uint64(fp)})
			}
			for _, m := range it.muts {
				switch {
				case m.Kind == kvindex.Put && m.Table == kvindex.TableFP:
					l.cells[cellFP].add(m.Row, m.Qualifier, m.Value)
				case m.Kind == kvindex.Put && m.Table == kvindex.TableBands:
					// The run value is the bucket (the cell's timestamp);
					// the band cell itself is empty.
					if !l.bandCells {
						return fmt.Errorf("bulkload: band cells from input not expected to hold text")
					}
					var b [4]byte
					binary.BigEndian.PutUint32(b[:], bucket)
					l.cells[cellBand].add(m.Row, m.Qualifier, b[:])
				case m.Kind == kvindex.Put && m.Table == kvindex.TableDocs:
					l.cells[cellDoc].add(m.Row, m.Qualifier, m.Value)
				default:
					return fmt.Errorf("bulkload: unexpected document mutation %d of table %s", m.Kind, m.Table)
				}
			}
		}
	}
	if err := l.rejW.Flush(); err != nil {
		return fmt.Errorf("bulkload: rejects file: %w", err)
	}
	return ctx.Err()
}

// entryKinds is the number of entry buffers (and runs per spill): one per
// index table, the ids, and the fps when the checkpoint has them.
func (l *loader) entryKinds() int {
	if l.cp.FPRuns {
		return l.T + 2
	}
	return l.T + 1
}

func runName(n int, kind string) string { return fmt.Sprintf("run-%06d-%s.sdx", n, kind) }

func (l *loader) kindName(b int) string {
	switch b {
	case l.T:
		return "ids"
	case l.T + 1:
		return "fps"
	}
	return fmt.Sprintf("t%02d", b)
}

// spill sorts and writes every buffer as run number cp.Runs, on the
// calling goroutine (the last spill of the read phase).
func (l *loader) spill() error {
	b := spillBufs{bufs: l.bufs, cells: l.cells}
	if b.empty() {
		return nil
	}
	err := l.writeSpill(&b, l.cp.Runs)
	l.bufs, l.cells = b.bufs, b.cells // emptied
	if err != nil {
		return err
	}
	l.cp.Runs++
	return nil
}

func (b *spillBufs) empty() bool {
	for _, e := range b.bufs {
		if len(e) > 0 {
			return false
		}
	}
	for _, c := range b.cells {
		if len(c.refs) > 0 {
			return false
		}
	}
	return true
}

// spillAsync starts the spill of the buffers as run number cp.Runs in the
// background and gives the input the other set of buffers. The background
// goroutine then hands the runs to syncSpill with the checkpoint of this
// moment (l.cp as it is now, counting the run), while reading goes on. A
// spill used to stop the reading: ~0.2-0.35 s per spill, about half of a
// 10^7 load's read phase. The previous spill is joined first (it owns the
// other set and the sort scratches), so spills happen in order.
func (l *loader) spillAsync(capN int) error {
	if err := l.waitSpillSaved(); err != nil {
		return err
	}
	if e := l.syncErr.Load(); e != nil {
		return fmt.Errorf("bulkload: saving a spill's checkpoint: %w", *e)
	}
	if l.spare == nil {
		l.spare = l.newSpillBufs(capN)
	}
	full := &spillBufs{bufs: l.bufs, cells: l.cells}
	l.bufs, l.cells = l.spare.bufs, l.spare.cells
	l.spare = full
	run := l.cp.Runs
	l.cp.Runs++
	cp := l.cp
	done := make(chan error, 1)
	l.spillSaved = done
	go func() { // joined by waitSpillSaved
		err := l.writeSpill(full, run)
		if err == nil {
			l.syncSpill(l.spillRunPaths(run), cp)
		}
		done <- err
	}()
	return nil
}

// syncSpill syncs a spill's run files (and the checkpoint directory) and
// then saves cp, the checkpoint that counts them, on a goroutine of its
// own, after the previous spill's save: checkpoints are saved in order,
// and never one that names a run not yet on disk whole. Until a spill's
// save is done the previous checkpoint stands: a load killed meanwhile
// resumes from the previous spill and rewrites this one's runs under the
// same names. Nothing waits for these goroutines until the end of the
// read phase (waitSynced): at 10^8 a spill's ~200 MB took 1.2-2 s to
// reach the disk, and a spill that waited for the previous one's sync
// made the disk the read phase's pace (~60 s instead of ~40 s of CPU).
// A failed sync or save is reported at the next spill and the end; no
// later checkpoint is saved after it.
func (l *loader) syncSpill(paths []string, cp checkpoint) {
	prev := l.syncTail
	done := make(chan struct{})
	l.syncTail = done
	l.syncWG.Go(func() {
		defer close(done)
		err := syncRuns(l.cfg.CheckpointDir, paths)
		if prev != nil {
			<-prev
		}
		if err == nil && l.syncErr.Load() == nil {
			err = l.saveCheckpointOf(&cp)
		}
		if err != nil {
			l.syncErr.CompareAndSwap(nil, &err)
		}
	})
}

// waitSynced joins every spill's sync and checkpoint save and returns the
// first error of one.
func (l *loader) waitSynced() error {
	l.syncWG.Wait()
	l.syncTail = nil
	if e := l.syncErr.Load(); e != nil {
		return fmt.Errorf("bulkload: saving a spill's checkpoint: %w", *e)
	}
	return nil
}

// writeSpill sorts and writes the buffers of b as run number run and
// empties them.
func (l *loader) writeSpill(b *spillBufs, run int) error {
	// The T+4 buffers are sorted and written by spillWorkers goroutines,
	// each with its own sort scratch (charged to the memory bound in
	// bufferCap), so that a spill keeps the cores busy.
	type job struct {
		cell int // index into b.cells, or -1
		buf  int // index into b.bufs, or -1
	}
	jobs := make(chan job, len(b.cells)+len(b.bufs))
	for i := range b.cells {
		jobs <- job{cell: i, buf: -1}
	}
	for i := range b.bufs {
		jobs <- job{cell: -1, buf: i}
	}
	close(jobs)
	spillStart := time.Now()
	n := l.spillWorkers()
	for len(l.scratches) < n {
		l.scratches = append(l.scratches, nil)
		l.cellScratches = append(l.cellScratches, nil)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			for j := range jobs {
				if errs[w] != nil {
					continue
				}
				if j.cell >= 0 {
					c := &b.cells[j.cell]
					l.cellScratches[w] = c.sort(l.cellScratches[w])
					if _, err := writeCellRun(filepath.Join(l.cfg.CheckpointDir, runName(run, cellKinds[j.cell])), c); err != nil {
						errs[w] = fmt.Errorf("bulkload: spill: %w", err)
					}
					c.reset()
					continue
				}
				es := b.bufs[j.buf]
				l.scratches[w] = sortEntries(es, l.scratches[w])
				if _, err := writeRun(filepath.Join(l.cfg.CheckpointDir, runName(run, l.kindName(j.buf))), es); err != nil {
					errs[w] = fmt.Errorf("bulkload: spill: %w", err)
				}
				b.bufs[j.buf] = es[:0]
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	l.cfg.Logger.Debug("spilled run", "run", run, "seconds", time.Since(spillStart).Seconds())
	return nil
}

// waitSpillSaved joins the pending spill save, if any, and returns its
// error.
func (l *loader) waitSpillSaved() error {
	if l.spillSaved == nil {
		return nil
	}
	err := <-l.spillSaved
	l.spillSaved = nil
	if err != nil {
		return fmt.Errorf("bulkload: saving a spill's checkpoint: %w", err)
	}
	return nil
}

// spillRunPaths lists the run files of spill n (what spill writes).
func (l *loader) spillRunPaths(n int) []string {
	var out []string
	for _, k := range cellKinds {
		out = append(out, filepath.Join(l.cfg.CheckpointDir, runName(n, k)))
	}
	for b := range l.entryKinds() {
		out = append(out, filepath.Join(l.cfg.CheckpointDir, runName(n, l.kindName(b))))
	}
	return out
}

// removeRuns deletes the spill runs of a finished load.
func (l *loader) removeRuns() error {
	runs, err := filepath.Glob(filepath.Join(l.cfg.CheckpointDir, "run-*.sdx"))
	if err != nil {
		return fmt.Errorf("bulkload: %w", err)
	}
	var errs []error
	for _, r := range runs {
		if err := os.Remove(r); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bulkload: removing the runs of a finished load: %w", err)
	}
	return nil
}

func (l *loader) runPaths(kind string) []string {
	var out []string
	for n := range l.cp.Runs {
		out = append(out, filepath.Join(l.cfg.CheckpointDir, runName(n, kind)))
	}
	return out
}

// errRepeatedIDs ends a speculative merge phase (phase2): the load repeats
// ids after all, so its staged tables are dropped and it runs again with a
// plan.
var errRepeatedIDs = errors.New("bulkload: the load repeats ids")

// phase2 merges each table's runs and writes its rows, tables in parallel.
// It returns the near-duplicate pairs when a dedup report is asked for.
//
// A load into empty tables of a store that ingests (the embedded store)
// needs a plan only if it repeats ids, which a merge of every spill's ids
// tells (~0.4 s of one core at 10^7, ~4 s at 10^8). So the merge phase
// starts at once, as if no id repeated, while that count runs beside it;
// each table waits for the count before its commit (ingest), which comes
// seconds later. If ids do repeat, every staged table is dropped unseen
// and the phase runs again with the plan.
func (l *loader) phase2(ctx context.Context) ([][2]uint64, error) {
	_, ingests := l.ix.Store().(cellIngester)
	indexFirst := l.cfg.IndexFirst || !ingests
	if !l.cp.PlanDone && l.cp.FreshDocs && l.cp.FreshIndex && !indexFirst {
		pairs, err := l.phase2Run(ctx, true)
		if !errors.Is(err, errRepeatedIDs) {
			return pairs, err
		}
		for _, e := range unjoin(err) {
			if !errors.Is(e, errRepeatedIDs) {
				return nil, err
			}
		}
		l.cfg.Logger.Info("ids repeat: merging again with a plan for them")
		l.pRows.Store(0)
	}
	return l.phase2Run(ctx, false)
}

// unjoin lists the errors of an errors.Join (or err itself).
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// phase2Run is one run of the merge phase: with the plan, or (speculate)
// without one, its commits waiting for the id count (idsCounted).
func (l *loader) phase2Run(ctx context.Context, speculate bool) (pairs [][2]uint64, err error) {
	var p *plan
	if speculate {
		done := make(chan struct{})
		l.idsCounted = done
		go func() {
			defer close(done)
			_, _ = l.idCount(ctx) // cached: commit reads it
		}()
		defer func() {
			<-done // joined on every return
			l.idsCounted = nil
			if err == nil {
				// As ensurePlan records a load that needs no plan.
				l.cp.PlanDone, l.cp.HasPlan = true, false
				if serr := l.saveCheckpoint(); serr != nil {
					err = fmt.Errorf("bulkload: checkpoint: %w", serr)
				}
			}
		}()
	} else {
		if p, err = l.ensurePlan(ctx); err != nil {
			return nil, err
		}
	}
	l.plan = p
	noIndex := p.noIndexSet()
	var mu sync.Mutex // protects pairs, errs and the summary counts below
	var errs []error
	var rows, entries, written int64
	// Staged sstables of an interrupted run are garbage: every table is
	// rewritten.
	if err := os.RemoveAll(l.stageDir()); err != nil {
		return nil, fmt.Errorf("bulkload: %w", err)
	}
	l.applySem = make(chan struct{}, max(1, l.cfg.InFlight))
	start, startCPU := time.Now(), processCPU()
	_, ingests := l.ix.Store().(cellIngester)
	indexFirst := l.cfg.IndexFirst || !ingests
	// The band runs are empty unless the load may hold text for an index
	// with bands: then the bands table is not written at all.
	kinds := []int{cellFP, cellDoc}
	if l.bandCells {
		kinds = []int{cellFP, cellBand, cellDoc}
	}
	cells := func(i int) {
		js := time.Now()
		b, err := l.writeCells(ctx, i, p)
		l.cfg.Logger.Debug("cells written", "table", cellKinds[i], "started", js.Sub(start).Seconds(), "seconds", time.Since(js).Seconds())
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			return
		}
		written += b
	}
	table := func(t int) {
		js := time.Now()
		st, p, err := l.mergeTable(ctx, t, noIndex)
		l.cfg.Logger.Debug("index table written", "table", l.kindName(t), "started", js.Sub(start).Seconds(), "seconds", time.Since(js).Seconds())
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			return
		}
		rows += st.rows
		entries += st.entries
		written += st.bytes
		pairs = append(pairs, p...)
	}
	// Jobs start in this order, longest first: the fp and docs cells take
	// one and a half to two times as long as an index table (a Pebble key
	// per document each), and one that started last ran alone for the
	// last ~3 s of a 10^7 load's ~9 s phase (the jobs used to race for
	// the workers).
	var jobs []func()
	if !indexFirst {
		// Ingested tables become visible atomically, each at its commit,
		// and one process owns the store: no order to keep.
		for _, i := range kinds {
			jobs = append(jobs, func() { cells(i) })
		}
	}
	for t := range l.T {
		jobs = append(jobs, func() { table(t) })
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(1, l.cfg.Workers), len(jobs)) {
		wg.Go(func() {
			for j := next.Add(1) - 1; j < int64(len(jobs)); j = next.Add(1) - 1 {
				jobs[j]()
			}
		})
	}
	wg.Wait()
	if indexFirst {
		// The index's write order, for stores that servers read during
		// the load: every index row, then the fp cells, then the docs
		// cells, so that no document is visible before its fingerprint
		// is findable.
		docsStart, docsCPU := time.Now(), processCPU()
		l.cfg.Logger.Info("index tables written", "rows", rows, "entries", entries, "seconds", docsStart.Sub(start).Seconds(),
			"cpu_seconds", (docsCPU - startCPU).Seconds())
		l.phase.Store("docs")
		if l.cfg.onPhase != nil {
			l.cfg.onPhase("docs")
		}
		for _, i := range kinds {
			if len(errs) > 0 {
				break
			}
			cells(i)
		}
		l.cfg.Logger.Info("fp, band and docs cells written", "seconds", time.Since(docsStart).Seconds(), "cpu_seconds", (processCPU() - docsCPU).Seconds())
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := l.applyStoreChanges(ctx, p); err != nil {
		return nil, err
	}
	l.sum.IndexRows, l.sum.IndexEntries = rows, entries
	l.sum.BytesWritten += written
	slices.SortFunc(pairs, func(a, b [2]uint64) int { return slices.Compare(a[:], b[:]) })
	return slices.Compact(pairs), nil
}

type tableStats struct{ rows, entries, bytes int64 }

func (l *loader) mergeTable(ctx context.Context, t int, noIndex map[uint64]bool) (tableStats, [][2]uint64, error) {
	var st tableStats
	var pairs [][2]uint64
	m, err := newMerger(l.runPaths(l.kindName(t)))
	if err != nil {
		return st, nil, fmt.Errorf("bulkload: %w", err)
	}
	defer m.close()
	var rb rowBatch
	if l.cp.FreshIndex {
		if rb.w, err = l.cellWriter(ctx, kvindex.TableIndex, l.kindName(t)); err != nil {
			return st, nil, err
		}
		defer func() {
			if rb.w != nil {
				rb.w.Abort()
			}
		}()
	}
	// The merge runs on a goroutine of its own, a batch of rows ahead of
	// the rows' encoding and writing here: the last table of the merge
	// phase otherwise ran on one core (~0.6 s of a 10^7 load's ~6.4 s
	// phase). stop ends it early; it is joined before mergeTable returns.
	full, free, stop := make(chan *rowRun, 1), make(chan *rowRun, 2), make(chan struct{})
	for range 2 {
		free <- &rowRun{}
	}
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		wg.Wait()
	}()
	wg.Go(func() { l.mergeRows(m, t, noIndex, full, free, stop) })
	for b := range full {
		if b.err != nil {
			return st, nil, b.err
		}
		if err := ctx.Err(); err != nil {
			return st, nil, err
		}
		start := 0
		for _, end := range b.ends {
			row := b.es[start:end]
			start = end
			n, bytes, err := l.writeRow(ctx, t, row, &rb)
			if err != nil {
				return st, nil, err
			}
			st.rows++
			st.entries += int64(n)
			st.bytes += bytes
			l.pRows.Add(1)
			if l.cfg.DedupPath != "" {
				pairs = l.rowPairs(t, row, pairs)
			}
		}
		select {
		case free <- b:
		case <-stop:
		}
	}
	if rb.w != nil {
		err := l.commit(ctx, rb.w, l.kindName(t))
		rb.w = nil
		return st, pairs, err
	}
	return st, pairs, nil
}

// rowRun is a batch of whole index rows from the merge: es holds the
// rows' entries in order, row i ending at ends[i]; or err, the merge's
// error (the last batch).
type rowRun struct {
	es   []entry
	ends []int
	err  error
}

// rowRunEntries is the size at which a rowRun is handed on (1 MiB of
// entries; a row is ~150 entries at 10^7).
const rowRunEntries = 1 << 16

// mergeRows merges table t's runs into rows (entries with the same
// prefix, in order), leaving out the fingerprints in noIndex, and sends
// them in batches taken from free on full, which it closes at the end;
// it returns early when stop is closed.
func (l *loader) mergeRows(m *merger, t int, noIndex map[uint64]bool, full, free chan *rowRun, stop chan struct{}) {
	defer close(full)
	p := l.perms[t]
	rbits := 64 - p.PrefixBits
	send := func(b *rowRun) bool {
		select {
		case full <- b:
			return true
		case <-stop:
			return false
		}
	}
	var b *rowRun
	rowStart := 0         // in b.es: where the current row begins
	take := func() bool { // an empty batch into b
		select {
		case b = <-free:
		case <-stop:
			return false
		}
		b.es, b.ends, rowStart = b.es[:0], b.ends[:0], 0
		return true
	}
	if !take() {
		return
	}
	for {
		e, ok, err := m.next()
		if err != nil {
			b.err = fmt.Errorf("bulkload: %w", err)
			send(b)
			return
		}
		if !ok {
			if len(b.es) > rowStart {
				b.ends = append(b.ends, len(b.es))
			}
			if len(b.ends) > 0 {
				send(b)
			}
			return
		}
		if noIndex != nil && noIndex[uint64(p.Unpermute(e.key))] {
			continue // carried only by superseded records
		}
		if len(b.es) > rowStart && b.es[rowStart].key>>rbits != e.key>>rbits {
			b.ends = append(b.ends, len(b.es))
			rowStart = len(b.es)
			if len(b.es) >= rowRunEntries {
				// Hand on the whole rows; e begins the next batch.
				if !send(b) || !take() {
					return
				}
			}
		}
		b.es = append(b.es, e)
	}
}

// rowBatch takes the cells of rows written without a read (into a fresh
// index), in key order, and holds the buffers writeRow reuses.
type rowBatch struct {
	w       kvindex.CellWriter
	slot    []int32 // bucket - lo -> position in buckets (writeRow)
	flat    []uint64
	pairs   []bucketResidual
	sorted  []bucketResidual
	buckets []uint32
	counts  []int
	sets    []bucketSet
	ours    []uint64
}

// maxSlotSpan bounds the bucket span of a row that writeRow indexes
// through a table (64 KiB of int32) instead of a binary search (a variable
// for the test of the other path).
var maxSlotSpan uint64 = 1 << 14

type bucketResidual struct {
	bucket   uint32
	residual uint64
}

// bucketSet is one time bucket's sorted, distinct residuals of a row.
type bucketSet struct {
	bucket    uint32
	residuals []uint64
}

// writeRow writes one row's base sets. Into an index that had no rows in
// this shard's range when the load started, the cells are put directly (a
// resumed load rewrites identical cells); otherwise they are merged under
// the row lock with what the row holds.
func (l *loader) writeRow(ctx context.Context, t int, es []entry, rb *rowBatch) (int, int64, error) {
	p := l.perms[t]
	prefix := p.Prefix(es[0].key)
	row := kvindex.IndexRowKey(nil, t, prefix, p.PrefixBits)
	// es is sorted by (residual, bucket): regroup by (bucket, residual)
	// with a stable counting placement over the row's few buckets.
	pairs, ours, bs := rb.pairs[:0], rb.ours[:0], rb.buckets[:0]
	lo, hi := es[0].aux, es[0].aux
	for i, e := range es {
		r := p.Residual(e.key)
		pairs = append(pairs, bucketResidual{e.aux, r})
		if i == 0 || es[i-1].key != e.key {
			ours = append(ours, r)
		}
		lo, hi = min(lo, e.aux), max(hi, e.aux)
	}
	// The row's buckets and each one's position among them: through a
	// table over lo..hi when the span is small (a row's buckets are
	// usually a few consecutive ones), else by binary search.
	var slot []int32
	if span := uint64(hi-lo) + 1; span <= maxSlotSpan {
		slot = slices.Grow(rb.slot[:0], int(span))[:span]
		clear(slot)
		for _, pr := range pairs {
			slot[pr.bucket-lo] = 1
		}
		for j, v := range slot {
			if v != 0 {
				slot[j] = int32(len(bs))
				bs = append(bs, lo+uint32(j))
			}
		}
		rb.slot = slot
	} else {
		for _, pr := range pairs {
			if k, found := slices.BinarySearch(bs, pr.bucket); !found {
				bs = slices.Insert(bs, k, pr.bucket)
			}
		}
	}
	bucketIndex := func(b uint32) int {
		if slot != nil {
			return int(slot[b-lo])
		}
		k, _ := slices.BinarySearch(bs, b)
		return k
	}
	if len(bs) > 1 {
		counts := rb.counts[:0]
		for range bs {
			counts = append(counts, 0)
		}
		for _, pr := range pairs {
			counts[bucketIndex(pr.bucket)]++
		}
		pos := 0
		for k, c := range counts {
			counts[k] = pos
			pos += c
		}
		sorted := slices.Grow(rb.sorted[:0], len(pairs))[:len(pairs)]
		for _, pr := range pairs {
			k := bucketIndex(pr.bucket)
			sorted[counts[k]] = pr
			counts[k]++
		}
		rb.sorted, rb.counts = pairs, counts
		pairs = sorted
	}
	rb.buckets = bs
	pairs = slices.Compact(pairs)
	n := len(pairs)
	// The residual slices of all buckets share one backing array, reused
	// across rows (the sets are encoded before writeRow returns).
	flat := slices.Grow(rb.flat[:0], len(pairs))[:len(pairs)]
	rb.flat = flat
	sets := rb.sets[:0]
	for i, pr := range pairs {
		flat[i] = pr.residual
		if len(sets) == 0 || sets[len(sets)-1].bucket != pr.bucket {
			sets = append(sets, bucketSet{bucket: pr.bucket, residuals: flat[i : i+1 : i+1]})
		} else {
			last := &sets[len(sets)-1]
			last.residuals = flat[i-len(last.residuals) : i+1 : i+1]
		}
	}
	rb.pairs, rb.sets, rb.ours = pairs, sets, ours
	if l.cp.FreshIndex {
		// The row is empty: its base sets go straight to the writer
		// (what BaseSetMutations would put, without the mutations).
		var written int64
		for _, bs := range sets {
			cells, err := kvindex.EncodeBaseSet(bs.residuals, 64-p.PrefixBits, l.maxCellBytes)
			if err != nil {
				return 0, 0, fmt.Errorf("bulkload: row %x bucket %d: %w", row, bs.bucket, err)
			}
			for i, c := range cells {
				q := kvindex.BaseQualifier(bs.bucket, i)
				written += int64(len(row) + len(q) + len(c))
				if err := rb.w.Put(row, q, c); err != nil {
					return 0, 0, err
				}
			}
		}
		return n, written, nil
	}
	var written int64
	err := l.ix.UpdateRow(ctx, row, func(cur kvindex.Row) ([]kvindex.Mutation, error) {
		muts, err := l.rowMutations(row, 64-p.PrefixBits, sets, ours, &cur)
		written = 0
		for _, m := range muts {
			written += int64(len(m.Row) + len(m.Qualifier) + len(m.Value))
		}
		return muts, err
	})
	return n, written, err
}

func (l *loader) stageDir() string { return filepath.Join(l.cfg.CheckpointDir, "sst") }

// cellWriter returns the writer of sorted cells of one table (kind names
// its staging directory): the store's own (sstables ingested at commit)
// or batches of puts.
func (l *loader) cellWriter(ctx context.Context, t kvindex.Table, kind string) (kvindex.CellWriter, error) {
	if w, ok, err := l.hfileCellWriter(ctx, t, kind); ok {
		return w, err
	}
	if ci, ok := l.ix.Store().(cellIngester); ok {
		w, err := ci.NewCellWriter(t, filepath.Join(l.stageDir(), kind))
		if err != nil {
			return nil, fmt.Errorf("bulkload: %w", err)
		}
		return w, nil
	}
	return l.newPutWriter(ctx, t), nil
}

// commit commits w, after the test hook.
func (l *loader) commit(ctx context.Context, w kvindex.CellWriter, kind string) error {
	if l.cfg.beforeCommit != nil {
		l.cfg.beforeCommit(kind)
	}
	if done := l.idsCounted; done != nil {
		// A speculative merge phase: commit only if no id repeats.
		select {
		case <-done:
		case <-ctx.Done():
			return errors.Join(ctx.Err(), w.Abort())
		}
		ids, err := l.idCount(ctx)
		if err == nil && ids.repeats > 0 {
			err = errRepeatedIDs
		}
		if err != nil {
			return errors.Join(err, w.Abort())
		}
	}
	if err := w.Commit(ctx); err != nil {
		return fmt.Errorf("bulkload: writing %s: %w", kind, err)
	}
	return nil
}

// timedPutter is implemented by cell writers that stamp cells (HBase's):
// band cells carry their document's bucket start, as an insert writes them,
// so a family TTL expires them with the document's index cells.
type timedPutter interface {
	PutAt(row, qual, val []byte, ts time.Time) error
}

// writeCells merges the cell runs of kind i (cellFP, cellBand, cellDoc)
// and writes each distinct cell once, the last input's value. fp and band
// cells of superseded records (the plan's) are left out. It returns the
// bytes written.
func (l *loader) writeCells(ctx context.Context, i int, p *plan) (int64, error) {
	var skipFP map[fpID]bool
	var skipBand map[bandID]bool
	switch i {
	case cellFP:
		skipFP = p.skipSet()
	case cellBand:
		skipBand = p.skipBandSet()
	}
	m, err := newCellMerger(l.runPaths(cellKinds[i]))
	if err != nil {
		return 0, fmt.Errorf("bulkload: %w", err)
	}
	defer m.close()
	w, err := l.cellWriter(ctx, cellTables[i], cellKinds[i])
	if err != nil {
		return 0, err
	}
	tw, timed := w.(timedPutter)
	buckets := l.ix.Buckets()
	var written int64
	// Without fps runs the distinct fingerprints are the fp table's
	// distinct rows (a row is a fingerprint; with a plan, whose count is
	// used instead, superseded records' cells are skipped here).
	countFPs := i == cellFP && !l.cp.FPRuns
	var fps int64
	var lastFP []byte
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, errors.Join(err, w.Abort())
			}
		}
		row, qual, val, _, ok, err := m.next()
		if err != nil {
			return 0, errors.Join(fmt.Errorf("bulkload: %w", err), w.Abort())
		}
		if !ok {
			break
		}
		switch {
		case skipFP != nil && skipFP[fpID{binary.BigEndian.Uint64(row), string(qual)}]:
			continue // the fp cell of a superseded record
		case i == cellBand:
			band, h, err := kvindex.ParseBandRowKey(row)
			if err != nil || len(val) != 4 {
				return 0, errors.Join(fmt.Errorf("bulkload: band cell run: row %x, value of %d bytes: %v", row, len(val), err), w.Abort())
			}
			if skipBand != nil && skipBand[bandID{band, h, string(qual)}] {
				continue // the band cell of a superseded record
			}
			if timed {
				err = tw.PutAt(row, qual, []byte{}, buckets.Start(binary.BigEndian.Uint32(val)))
			} else {
				err = w.Put(row, qual, []byte{})
			}
			if err != nil {
				return 0, errors.Join(err, w.Abort())
			}
			written += int64(len(row) + len(qual))
			continue
		}
		if err := w.Put(row, qual, val); err != nil {
			return 0, errors.Join(err, w.Abort())
		}
		written += int64(len(row) + len(qual) + len(val))
		if countFPs && (fps == 0 || !bytes.Equal(row, lastFP)) {
			fps++
			lastFP = append(lastFP[:0], row...)
		}
	}
	if countFPs {
		l.fpCount = runCount{n: fps}
	}
	return written, l.commit(ctx, w, cellKinds[i])
}

// rowMutations builds a row's base-set mutations, merged with the row's
// current content cur (nil: the row is known to be empty).
func (l *loader) rowMutations(row []byte, rbits int, sets []bucketSet, ours []uint64, cur *kvindex.Row) ([]kvindex.Mutation, error) {
	var old map[uint32][][]byte
	var tombs map[uint64]bool
	if cur != nil {
		old, tombs = map[uint32][][]byte{}, map[uint64]bool{}
		loaded := make(map[uint32]bool, len(sets))
		for _, s := range sets {
			loaded[s.bucket] = true
		}
		for _, c := range cur.Cells {
			q, err := kvindex.ParseIndexQualifier(c.Qualifier)
			if err != nil {
				return nil, fmt.Errorf("%w: row %x: %v", kvindex.ErrCorrupt, row, err)
			}
			switch q.Kind {
			case kvindex.BaseCell:
				if loaded[q.Bucket] {
					old[q.Bucket] = append(old[q.Bucket], c.Value)
				}
			case kvindex.TombstoneCell:
				tombs[q.Residual] = true
			}
		}
	}
	var muts []kvindex.Mutation
	for _, bset := range sets {
		b, set := bset.bucket, bset.residuals
		if len(old[b]) > 0 {
			var have []uint64
			for _, v := range old[b] {
				var err error
				if have, err = kvindex.DecodeBaseSet(have, v, rbits); err != nil {
					return nil, fmt.Errorf("%w: row %x bucket %d: %v", kvindex.ErrCorrupt, row, b, err)
				}
			}
			set = append(slices.Clone(set), have...)
			slices.Sort(set)
			set = slices.Compact(set)
		}
		m, err := l.ix.BaseSetMutations(row, b, set, len(old[b]))
		if err != nil {
			return nil, err
		}
		muts = append(muts, m...)
	}
	// A loaded fingerprint is carried by a document again: its old
	// tombstone must not hide it (as an online insert does).
	for _, r := range ours {
		if tombs[r] {
			muts = append(muts, kvindex.Mutation{Kind: kvindex.DeleteCell, Table: kvindex.TableIndex, Row: row, Qualifier: kvindex.TombstoneQualifier(r)})
		}
	}
	return muts, nil
}

// phase3 counts distinct ids and fingerprints from their runs and adds the
// counters once. It returns the fingerprints carried by several of the
// loaded documents (exact-duplicate groups) when a report is asked for.
func (l *loader) phase3(ctx context.Context) ([]uint64, error) {
	idc, err := l.idCount(ctx)
	if err != nil {
		return nil, err
	}
	if l.cp.FPRuns {
		<-l.fpCountDone
	}
	if l.fpCount.err != nil {
		return nil, l.fpCount.err
	}
	ids, idDups := idc.n, idc.repeats
	fps, multi := l.fpCount.n, l.fpCount.repeated
	l.sum.Documents, l.sum.DuplicateIDs, l.sum.Fingerprints = ids, idDups, fps
	addDocs, addFPs := ids, fps
	if l.plan != nil {
		addDocs, addFPs = l.plan.NewDocs, l.plan.FPDelta
		l.sum.Fingerprints = l.plan.Fingerprints
	}
	// The marker makes the counter addition happen once per load.
	markerRow, markerQual := []byte("bulkload"), []byte(l.cp.LoadID)
	rows, err := l.ix.Store().Get(ctx, []kvindex.RowKey{{Table: kvindex.TableMeta, Key: markerRow}})
	if err != nil {
		return nil, err
	}
	for _, c := range rows[0].Cells {
		if string(c.Qualifier) == string(markerQual) {
			return multi, nil // added by an earlier (interrupted) run
		}
	}
	muts := l.ix.CounterMutations(addDocs, addFPs)
	muts = append(muts, kvindex.Mutation{Kind: kvindex.Put, Table: kvindex.TableMeta, Row: markerRow, Qualifier: markerQual,
		Value: fmt.Appendf(nil, "documents=%d fingerprints=%d shard=%d/%d", addDocs, addFPs, l.cfg.Shard, l.cfg.Shards)})
	if err := l.ix.Apply(ctx, muts); err != nil {
		return nil, err
	}
	if f, ok := l.ix.Store().(flusher); ok {
		return multi, f.Flush()
	}
	return multi, nil
}

// runCount is what distinct found over one kind of runs.
type runCount struct {
	n, repeats int64
	repeated   []uint64
	err        error
}

// idCount counts the distinct ids once per process: the plan and the
// counters both need it.
func (l *loader) idCount(ctx context.Context) (runCount, error) {
	if !l.ids.done {
		c := &l.ids.runCount
		c.n, c.repeats, _, c.err = l.distinct(ctx, l.runPaths("ids"), false)
		l.ids.done = c.err == nil || ctx.Err() == nil // a cancelled count is not kept
	}
	return l.ids.runCount, l.ids.err
}

// startFPCount counts the distinct fingerprints on a goroutine that
// overlaps the merge phase (it reads only the fps runs); phase3 waits for
// it on fpCountDone. It stops early when ctx ends; run cancels and joins it.
func (l *loader) startFPCount(ctx context.Context) {
	l.fpCountDone = make(chan struct{})
	go func() {
		defer close(l.fpCountDone)
		c := &l.fpCount
		c.n, c.repeats, c.repeated, c.err = l.distinct(ctx, l.runPaths("fps"), l.cfg.DedupPath != "")
	}()
}

// distinct counts distinct keys over runs, the repeats, and (when asked)
// lists the keys that repeat.
func (l *loader) distinct(ctx context.Context, paths []string, listRepeats bool) (n, repeats int64, repeated []uint64, err error) {
	m, err := newMerger(paths)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("bulkload: %w", err)
	}
	defer m.close()
	var prev uint64
	first := true
	for {
		e, ok, err := m.next()
		if err != nil {
			return 0, 0, nil, fmt.Errorf("bulkload: %w", err)
		}
		if !ok {
			return n, repeats, repeated, nil
		}
		if (n+repeats)&(1<<16-1) == 0 && ctx.Err() != nil {
			return 0, 0, nil, ctx.Err()
		}
		if first || e.key != prev {
			n++
		} else {
			repeats++
			if listRepeats && (len(repeated) == 0 || repeated[len(repeated)-1] != e.key) {
				repeated = append(repeated, e.key)
			}
		}
		prev, first = e.key, false
	}
}

// String formats a summary for people.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "records %d, rejected %d, documents %d (duplicate ids %d), fingerprints %d, index rows %d, ",
		s.Records, s.Rejected, s.Documents, s.DuplicateIDs, s.Fingerprints, s.IndexRows)
	fmt.Fprintf(&b, "near-duplicate pairs %d, duplicate documents %d, bytes written %d, input bytes %d, %.1fs",
		s.DuplicatePairs, s.DuplicateDocuments, s.BytesWritten, s.InputBytes, s.Duration.Seconds())
	if s.Duration > 0 {
		fmt.Fprintf(&b, " (%.0f records/s)", float64(s.Records)/s.Duration.Seconds())
	}
	if s.HFilesImported > 0 || s.HFilesPut > 0 {
		fmt.Fprintf(&b, ", HFiles imported %d (written as puts instead %d)", s.HFilesImported, s.HFilesPut)
	}
	if s.Resumed {
		b.WriteString(", resumed from a checkpoint")
	}
	return b.String()
}
