package bulkload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// Index is what the loader needs of a *kvindex.Index.
type Index interface {
	Layout() fingerprint.Layout
	Buckets() storage.Buckets
	// BulkWriter encodes the loaded documents' cells and index rows, and
	// applies batches of cells.
	BulkWriter() *kvindex.BulkWriter
	// RowWriter merges base sets into index rows that may hold data,
	// under their row lock.
	RowWriter() *kvindex.RowWriter
	DecodeDocument(row storage.Row) (kvindex.Document, error)
	// Documents reads stored documents by id (the dedup report judges
	// its pairs by their docs cells).
	Documents(ctx context.Context, ids []string) (map[string]kvindex.Document, error)
	// TextKeyCounts counts the documents in text-key rows, overall and in
	// a source (the dedup report learns each document's template from them,
	// as a check would); SourceOf names a stored document's source.
	TextKeyCounts(ctx context.Context, qs []kvindex.KeyQuery) ([]kvindex.KeyCounts, error)
	SourceOf(attrs map[string]string) string
	// HasBands reports whether the index keeps LSH band rows: text
	// documents then get band cells.
	HasBands() bool
	Store() storage.Store
	Config() kvindex.Config
}

var _ Index = (*kvindex.Index)(nil)

// cellIngester is the optional store capability the loader writes sorted
// cells through: the embedded store builds sorted string tables from them
// and ingests them (no memtable inserts). Stores without it (HBase) take
// the same sorted cells as batches of puts.
type cellIngester interface {
	NewCellWriter(t storage.Table, dir string) (storage.CellWriter, error)
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

// loader is one Run's state. Its fields are used by the Run goroutine only,
// except the atomics read by the progress reporter.
type loader struct {
	ix  Index
	cfg Config
	// bw and rw are the index's writers.
	bw *kvindex.BulkWriter
	rw *kvindex.RowWriter
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
	l, err := newLoader(ix, cfg)
	if err != nil {
		return Summary{}, err
	}
	files, err := l.open(ctx)
	if err != nil {
		return Summary{}, err
	}
	if fin := l.cp.Finished; fin != nil {
		return l.alreadyFinished(*fin)
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
	return l.finish()
}

// newLoader makes the state of a Run of cfg (with its defaults) into ix.
func newLoader(ix Index, cfg Config) (*loader, error) {
	l := &loader{ix: ix, cfg: cfg, bw: ix.BulkWriter(), rw: ix.RowWriter(), perms: ix.Layout().Permuters()}
	l.T = len(l.perms)
	if l.cfg.DedupK == -1 {
		l.cfg.DedupK = ix.Layout().K
	}
	if l.cfg.DedupK > ix.Layout().K {
		return nil, fmt.Errorf("%w: dedup k %d above the layout's K %d", ErrConfig, l.cfg.DedupK, ix.Layout().K)
	}
	l.phase.Store("read")
	return l, nil
}

// open makes the checkpoint directory, lists the input files and reads the
// checkpoint (or starts one).
func (l *loader) open(ctx context.Context) ([]string, error) {
	if err := os.MkdirAll(l.cfg.CheckpointDir, 0o755); err != nil {
		return nil, fmt.Errorf("bulkload: %w", err)
	}
	files, err := expandInputs(l.cfg.Inputs)
	if err != nil {
		return nil, err
	}
	if err := l.loadCheckpoint(ctx, files); err != nil {
		return nil, err
	}
	return files, nil
}

// alreadyFinished answers a rerun of a finished load with its summary
// and writes nothing: the index already holds the load.
func (l *loader) alreadyFinished(s Summary) (Summary, error) {
	s.Resumed = true
	l.cfg.Logger.Info("bulk load already finished (remove the checkpoint directory to load again)", "checkpoint", l.cpPath(),
		"records", s.Records, "documents", s.Documents, "fingerprints", s.Fingerprints)
	// A kill after the mark may have left runs behind.
	return s, l.removeRuns()
}

// finish marks the checkpoint finished with the summary and deletes the
// spill runs.
func (l *loader) finish() (Summary, error) {
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
	l.cfg.Logger.Info("bulk load done", "records", s.Records, "rejected", s.Rejected, "documents", s.Documents,
		"fingerprints", s.Fingerprints, "duplicate_ids", s.DuplicateIDs, "index_rows", s.IndexRows,
		"duplicate_pairs", s.DuplicatePairs, "duplicate_documents", s.DuplicateDocuments,
		"bytes_written", s.BytesWritten, "seconds", s.Duration.Seconds(), "resumed", s.Resumed)
	return s, nil
}

// run runs the phases a load has left: reading the input into sorted runs
// (phase 1, unless the checkpoint says it is done), merging them into the
// tables (phase 2), counting and adding the counters (phase 3) and the
// dedup report.
func (l *loader) run(ctx context.Context, files []string) error {
	if !l.cp.Phase1Done {
		if err := l.readInput(ctx, files); err != nil {
			return err
		}
	}
	t0 := time.Now()
	l.startMergePhase()
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

// readInput is phase 1 with the rejects file open.
func (l *loader) readInput(ctx context.Context, files []string) error {
	t0 := time.Now()
	if err := l.openRejects(); err != nil {
		return err
	}
	err := l.phase1(ctx, files)
	err = errors.Join(err, l.closeRejects())
	if err != nil {
		return err
	}
	l.cfg.Logger.Info("input read", "records", l.cp.Records, "runs", l.cp.Runs, "seconds", time.Since(t0).Seconds())
	return nil
}

// startMergePhase takes the read phase's counts into the summary and sets
// up the merge phase's progress (an estimate of the rows it writes).
func (l *loader) startMergePhase() {
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

// apply writes muts through the index's BulkWriter (through the test hook
// aroundApply when set).
func (l *loader) apply(ctx context.Context, muts []storage.Mutation) error {
	if l.cfg.aroundApply != nil {
		return l.cfg.aroundApply(ctx, muts, l.bw.Apply)
	}
	return l.bw.Apply(ctx, muts)
}
