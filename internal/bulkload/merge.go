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

	"github.com/simdex/simdex/kvindex"
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
