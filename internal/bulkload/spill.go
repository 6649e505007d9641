package bulkload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// spillWorkers is the number of goroutines that sort and write a spill's
// buffers: one per worker, at most 2 (each adds a sort scratch of the
// buffers' size to the memory charged; two keep two cores busy).
func (l *loader) spillWorkers() int { return max(1, min(l.cfg.Workers, 2)) }

// runName is the file name of spill n's run of kind (an entry kind,
// kindName, or a cell kind, cellKinds).
func runName(n int, kind string) string { return fmt.Sprintf("run-%06d-%s.sdx", n, kind) }

// kindName names entry buffer b: index table b ("t00".."tNN"), the id
// hashes ("ids") or the fingerprints ("fps").
func (l *loader) kindName(b int) string {
	switch b {
	case l.T:
		return "ids"
	case l.T + 1:
		return "fps"
	}
	return fmt.Sprintf("t%02d", b)
}

// runPaths lists the run files of one kind over every spill.
func (l *loader) runPaths(kind string) []string {
	var out []string
	for n := range l.cp.Runs {
		out = append(out, filepath.Join(l.cfg.CheckpointDir, runName(n, kind)))
	}
	return out
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

// spillLast spills what the buffers hold at the end of the input, on the
// calling goroutine, and waits until every spill's runs are synced and its
// checkpoint saved: the read phase's next save is its last.
func (l *loader) spillLast() error {
	// The background spill first: it uses the sort scratches too.
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
	return l.waitSynced()
}

// spillAsync starts the spill of the buffers as run number cp.Runs in the
// background and gives the input the other set of buffers. The background
// goroutine then hands the runs to syncSpill with the checkpoint of this
// moment (l.cp as it is now, counting the run), while reading goes on: a
// spill on the reading goroutine would stop the reading for ~0.2-0.35 s
// each time, about half of a 10^7 load's read phase in all. The previous
// spill is joined first (it owns the other set and the sort scratches), so
// spills happen in order.
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
// read phase (waitSynced): at 10^8 a spill's ~200 MB takes 1.2-2 s to
// reach the disk, and a spill that waited for the previous one's sync
// would make the disk the read phase's pace (~60 s instead of ~40 s of
// CPU). A failed sync or save is reported at the next spill and the end;
// no later checkpoint is saved after it.
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

// spillJob is one buffer of a spill to sort and write: a cell buffer or an
// entry buffer.
type spillJob struct {
	cell int // index into spillBufs.cells, or -1
	buf  int // index into spillBufs.bufs, or -1
}

// writeSpill sorts and writes the buffers of b as run number run and
// empties them.
func (l *loader) writeSpill(b *spillBufs, run int) error {
	// The buffers (each cell kind's and each entry kind's) are sorted and
	// written by spillWorkers goroutines, each with its own sort scratch
	// (charged to the memory bound in bufferCap), so that a spill keeps
	// the cores busy.
	jobs := make(chan spillJob, len(b.cells)+len(b.bufs))
	for i := range b.cells {
		jobs <- spillJob{cell: i, buf: -1}
	}
	for i := range b.bufs {
		jobs <- spillJob{cell: -1, buf: i}
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
				if errs[w] == nil {
					errs[w] = l.writeSpillJob(b, run, w, j)
				}
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

// writeSpillJob sorts one buffer of b with worker w's scratch, writes it
// as its run of spill run and empties it.
func (l *loader) writeSpillJob(b *spillBufs, run, w int, j spillJob) error {
	var err error
	if j.cell >= 0 {
		c := &b.cells[j.cell]
		l.cellScratches[w] = c.sort(l.cellScratches[w])
		if _, werr := writeCellRun(filepath.Join(l.cfg.CheckpointDir, runName(run, cellKinds[j.cell])), c); werr != nil {
			err = fmt.Errorf("bulkload: spill: %w", werr)
		}
		c.reset()
		return err
	}
	es := b.bufs[j.buf]
	l.scratches[w] = sortEntries(es, l.scratches[w])
	if _, werr := writeRun(filepath.Join(l.cfg.CheckpointDir, runName(run, l.kindName(j.buf))), es); werr != nil {
		err = fmt.Errorf("bulkload: spill: %w", werr)
	}
	b.bufs[j.buf] = es[:0]
	return err
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
