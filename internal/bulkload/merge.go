package bulkload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdex/simdex/storage"
)

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
	if !l.cp.PlanDone && l.cp.FreshDocs && l.cp.FreshIndex && !l.indexFirst() {
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

// indexFirst reports whether the merge phase writes the cell tables after
// every index row (Config.IndexFirst, implied for stores without a
// sorted-cell ingest).
func (l *loader) indexFirst() bool {
	_, ingests := l.ix.Store().(cellIngester)
	return l.cfg.IndexFirst || !ingests
}

// unjoin lists the errors of an errors.Join (or err itself).
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// mergeRun is one run of the merge phase: what its jobs share, and what
// they wrote. mu guards errs, the counts and pairs: the jobs run on
// several goroutines.
type mergeRun struct {
	plan    *plan
	noIndex map[uint64]bool
	// start and startCPU are when the run began (for its log lines).
	start    time.Time
	startCPU time.Duration

	mu                     sync.Mutex
	errs                   []error
	rows, entries, written int64
	pairs                  [][2]uint64
}

// phase2Run is one run of the merge phase: with the plan, or (speculate)
// without one, its commits waiting for the id count (idsCounted).
func (l *loader) phase2Run(ctx context.Context, speculate bool) (pairs [][2]uint64, err error) {
	var p *plan
	if speculate {
		end := l.speculate(ctx)
		defer func() { err = end(err) }()
	} else {
		if p, err = l.ensurePlan(ctx); err != nil {
			return nil, err
		}
	}
	l.plan = p
	r := &mergeRun{plan: p, noIndex: p.noIndexSet()}
	// Staged sstables of an interrupted run are garbage: every table is
	// rewritten.
	if err := os.RemoveAll(l.stageDir()); err != nil {
		return nil, fmt.Errorf("bulkload: %w", err)
	}
	l.applySem = make(chan struct{}, max(1, l.cfg.InFlight))
	r.start, r.startCPU = time.Now(), processCPU()
	indexFirst := l.indexFirst()
	// The band runs are empty unless the load may hold text for an index
	// with bands: then the bands table is not written at all.
	kinds := []int{cellFP, cellDoc}
	if l.bandCells {
		kinds = []int{cellFP, cellBand, cellDoc}
	}
	// Jobs start in this order, longest first: the fp and docs cells take
	// one and a half to two times as long as an index table (a Pebble key
	// per document each), and one that started last would run alone for
	// the last ~3 s of a 10^7 load's ~9 s phase.
	var jobs []func()
	if !indexFirst {
		// Ingested tables become visible atomically, each at its commit,
		// and one process owns the store: no order to keep.
		for _, i := range kinds {
			jobs = append(jobs, func() { l.cellsJob(ctx, r, i) })
		}
	}
	for t := range l.T {
		jobs = append(jobs, func() { l.tableJob(ctx, r, t) })
	}
	runJobs(min(max(1, l.cfg.Workers), len(jobs)), jobs)
	if indexFirst {
		l.cellsAfterIndex(ctx, r, kinds)
	}
	if err := errors.Join(r.errs...); err != nil {
		return nil, err
	}
	if err := l.applyStoreChanges(ctx, p); err != nil {
		return nil, err
	}
	l.sum.IndexRows, l.sum.IndexEntries = r.rows, r.entries
	l.sum.BytesWritten += r.written
	slices.SortFunc(r.pairs, func(a, b [2]uint64) int { return slices.Compare(a[:], b[:]) })
	return slices.Compact(r.pairs), nil
}

// speculate starts the id count beside a merge phase run without a plan:
// the run's commits wait for it (idsCounted). The returned end, called
// with the run's error on every return, joins the count and, when the run
// succeeded, records that the load needs no plan, as ensurePlan records
// it.
func (l *loader) speculate(ctx context.Context) (end func(err error) error) {
	done := make(chan struct{})
	l.idsCounted = done
	go func() {
		defer close(done)
		_, _ = l.idCount(ctx) // cached: commit reads it
	}()
	return func(err error) error {
		<-done
		l.idsCounted = nil
		if err == nil {
			l.cp.PlanDone, l.cp.HasPlan = true, false
			if serr := l.saveCheckpoint(); serr != nil {
				err = fmt.Errorf("bulkload: checkpoint: %w", serr)
			}
		}
		return err
	}
}

// runJobs runs jobs on n goroutines, each taking the next job not yet
// started, and returns when every job is done.
func runJobs(n int, jobs []func()) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for j := next.Add(1) - 1; j < int64(len(jobs)); j = next.Add(1) - 1 {
				jobs[j]()
			}
		})
	}
	wg.Wait()
}

// cellsJob writes the cells of kind i (cellFP, cellBand, cellDoc) and adds
// the outcome to r.
func (l *loader) cellsJob(ctx context.Context, r *mergeRun, i int) {
	js := time.Now()
	b, err := l.writeCells(ctx, i, r.plan)
	l.cfg.Logger.Debug("cells written", "table", cellKinds[i], "started", js.Sub(r.start).Seconds(), "seconds", time.Since(js).Seconds())
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	r.written += b
}

// tableJob merges and writes index table t and adds the outcome to r.
func (l *loader) tableJob(ctx context.Context, r *mergeRun, t int) {
	js := time.Now()
	st, pairs, err := l.mergeTable(ctx, t, r.noIndex)
	l.cfg.Logger.Debug("index table written", "table", l.kindName(t), "started", js.Sub(r.start).Seconds(), "seconds", time.Since(js).Seconds())
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	r.rows += st.rows
	r.entries += st.entries
	r.written += st.bytes
	r.pairs = append(r.pairs, pairs...)
}

// cellsAfterIndex writes the cell tables of kinds one after the other,
// once every index table is written: the index's write order, for stores
// that servers read during the load. Every index row comes first, then
// the fp cells, then the band cells, then the docs cells, so that no
// document is visible before its fingerprint is findable. It stops at the
// first error.
func (l *loader) cellsAfterIndex(ctx context.Context, r *mergeRun, kinds []int) {
	docsStart, docsCPU := time.Now(), processCPU()
	l.cfg.Logger.Info("index tables written", "rows", r.rows, "entries", r.entries, "seconds", docsStart.Sub(r.start).Seconds(),
		"cpu_seconds", (docsCPU - r.startCPU).Seconds())
	l.phase.Store("docs")
	if l.cfg.onPhase != nil {
		l.cfg.onPhase("docs")
	}
	for _, i := range kinds {
		if len(r.errs) > 0 {
			break
		}
		l.cellsJob(ctx, r, i)
	}
	l.cfg.Logger.Info("fp, band and docs cells written", "seconds", time.Since(docsStart).Seconds(), "cpu_seconds", (processCPU() - docsCPU).Seconds())
}

// tableStats is what mergeTable wrote: rows, index entries (residuals)
// and bytes.
type tableStats struct{ rows, entries, bytes int64 }

// mergeTable merges index table t's runs into rows and writes them,
// leaving out the fingerprints in noIndex. It returns what it wrote and,
// when a dedup report is asked for, the near-duplicate pairs within the
// rows.
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
		if rb.w, err = l.cellWriter(ctx, storage.TableIndex, l.kindName(t)); err != nil {
			return st, nil, err
		}
		defer func() {
			if rb.w != nil {
				rb.w.Abort()
			}
		}()
	}
	// The merge runs on a goroutine of its own, a batch of rows ahead of
	// the rows' encoding and writing here: otherwise the last table of
	// the merge phase would run on one core (~0.6 s of a 10^7 load's
	// ~6.4 s phase). stop ends it early; it is joined before mergeTable
	// returns.
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
		if pairs, err = l.writeRowRun(ctx, t, b, &rb, &st, pairs); err != nil {
			return st, nil, err
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

// writeRowRun writes the rows of a batch from the merge of table t,
// counting them in st, and appends their near-duplicate pairs to pairs
// when a dedup report is asked for.
func (l *loader) writeRowRun(ctx context.Context, t int, b *rowRun, rb *rowBatch, st *tableStats, pairs [][2]uint64) ([][2]uint64, error) {
	start := 0
	for _, end := range b.ends {
		row := b.es[start:end]
		start = end
		n, bytes, err := l.writeRow(ctx, t, row, rb)
		if err != nil {
			return pairs, err
		}
		st.rows++
		st.entries += int64(n)
		st.bytes += bytes
		l.pRows.Add(1)
		if l.cfg.DedupPath != "" {
			pairs = l.rowPairs(t, row, pairs)
		}
	}
	return pairs, nil
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
