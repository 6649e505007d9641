package bulkload

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/kvindex"
)

// This file is the loader's write path for stores that other processes read
// while a load runs and that take writes best in large concurrent batches
// (HBase: Config.IndexFirst, Config.InFlight). The index rows are applied
// in batches of about ApplyBytes, InFlight at a time; the fp and docs cells,
// held in document runs during phase 1, are written after every index row
// (the index's write order: a document is never visible before its
// fingerprint is findable), fp cells before docs cells within each batch.

// applier runs Apply calls with at most n in flight; the first error is
// kept and returned by later submits and by wait.
type applier struct {
	ix  Index
	sem chan struct{}
	wg  sync.WaitGroup
	// mu protects err.
	mu  sync.Mutex
	err error
}

func newApplier(ix Index, n int) *applier {
	return &applier{ix: ix, sem: make(chan struct{}, max(1, n))}
}

func (a *applier) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// submit applies muts, which it owns from now on: synchronously when one
// call may be in flight, else in a goroutine once a slot is free.
func (a *applier) submit(ctx context.Context, muts []kvindex.Mutation) error {
	if len(muts) == 0 {
		return a.failed()
	}
	if cap(a.sem) == 1 {
		return a.ix.Apply(ctx, muts)
	}
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := a.failed(); err != nil {
		<-a.sem
		return err
	}
	a.wg.Go(func() {
		defer func() { <-a.sem }()
		if err := a.ix.Apply(ctx, muts); err != nil {
			a.mu.Lock()
			if a.err == nil {
				a.err = err
			}
			a.mu.Unlock()
		}
	})
	return nil
}

// wait joins every submitted call and returns the first error.
func (a *applier) wait() error {
	a.wg.Wait()
	return a.failed()
}

// writeDocRuns applies the fp and docs cells of every document run, in
// batches of about ApplyBytes on InFlight lanes. A document goes to the
// lane of its docs row (its id), and each lane applies its batches in
// order, so a repeated id's last record still wins, as when phase 1 writes
// them itself.
func (l *loader) writeDocRuns(ctx context.Context) error {
	n := max(1, l.cfg.InFlight)
	lanes := make([]chan []kvindex.Mutation, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := range lanes {
		lanes[i] = make(chan []kvindex.Mutation, 1)
		wg.Go(func() {
			for muts := range lanes[i] {
				if errs[i] != nil {
					continue // drain
				}
				if errs[i] = l.ix.Apply(ctx, muts); errs[i] != nil {
					cancel()
				}
			}
		})
	}
	bufs := make([][]kvindex.Mutation, n)
	sizes := make([]int, n)
	send := func(i int) error {
		if len(bufs[i]) == 0 {
			return nil
		}
		select {
		case lanes[i] <- bufs[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		bufs[i], sizes[i] = nil, 0
		return nil
	}
	var err error
	for run := range l.cp.Runs {
		path := filepath.Join(l.cfg.CheckpointDir, runName(run, "docs"))
		err = readDocRun(path, func(rec []kvindex.Mutation) error {
			key := rec[0].Row
			for _, m := range rec {
				if m.Table == kvindex.TableDocs {
					key = m.Row
				}
			}
			i := int(xxhash.Sum64(key) % uint64(n))
			for _, m := range rec {
				sizes[i] += len(m.Row) + len(m.Qualifier) + len(m.Value) + 16
			}
			bufs[i] = append(bufs[i], rec...)
			l.pRows.Add(1)
			if sizes[i] >= l.cfg.ApplyBytes {
				return send(i)
			}
			return nil
		})
		if err != nil {
			break
		}
	}
	for i := range n {
		if err == nil {
			err = send(i)
		}
		close(lanes[i])
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("bulkload: writing documents: %w", err)
	}
	return nil
}
