package bulkload

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/simdex/simdex/storage"
)

// This file is the loader's write path for stores without a sorted-cell
// ingest (HBase): the sorted cells of each table are applied as batches of
// puts of about ApplyBytes, at most InFlight Apply calls at a time across
// the whole merge phase (HBase takes large batches best several at once).
// phase2 orders the tables for such stores: every index row first, then
// the fp cells, then the docs cells (the index's write order: a document is
// never visible before its fingerprint is findable).

// applier runs Apply calls of one writer; sem, shared by every writer of a
// merge phase, bounds the calls in flight. The first error is kept and
// returned by later submits and by wait.
type applier struct {
	apply func(context.Context, []storage.Mutation) error
	sem   chan struct{}
	wg    sync.WaitGroup
	// mu protects err.
	mu  sync.Mutex
	err error
}

func (a *applier) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// submit applies muts, which it owns from now on: synchronously when one
// call may be in flight, else in a goroutine once a slot is free.
func (a *applier) submit(ctx context.Context, muts []storage.Mutation) error {
	if len(muts) == 0 {
		return a.failed()
	}
	if cap(a.sem) <= 1 {
		return a.apply(ctx, muts)
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
		if err := a.apply(ctx, muts); err != nil {
			a.mu.Lock()
			if a.err == nil {
				a.err = err
			}
			a.mu.Unlock()
		}
	})
	return nil
}

// wait joins every call submitted by this writer and returns the first
// error.
func (a *applier) wait() error {
	a.wg.Wait()
	return a.failed()
}

// putWriter is the CellWriter of stores without their own: puts in
// batches of about ApplyBytes, applied on the merge phase's InFlight
// lanes. The cells of one table have distinct keys, so its batches may be
// applied in any order. It is not atomic, which the loader does not need:
// the merge phase rewrites every cell when resumed.
type putWriter struct {
	ctx      context.Context // of the merge that owns the writer
	t        storage.Table
	a        *applier
	maxBytes int
	muts     []storage.Mutation
	bytes    int
}

func (l *loader) newPutWriter(ctx context.Context, t storage.Table) *putWriter {
	return &putWriter{ctx: ctx, t: t, a: &applier{apply: l.apply, sem: l.applySem}, maxBytes: l.cfg.ApplyBytes}
}

func (p *putWriter) Put(row, qual, val []byte) error {
	return p.PutAt(row, qual, val, time.Time{})
}

// PutAt is Put with the cell's timestamp (zero: none).
func (p *putWriter) PutAt(row, qual, val []byte, ts time.Time) error {
	p.muts = append(p.muts, storage.Mutation{Kind: storage.Put, Table: p.t, Row: slices.Clone(row), Qualifier: slices.Clone(qual), Value: slices.Clone(val), Timestamp: ts})
	p.bytes += len(row) + len(qual) + len(val) + 16
	if p.bytes >= p.maxBytes {
		return p.flush(p.ctx)
	}
	return nil
}

func (p *putWriter) flush(ctx context.Context) error {
	muts := p.muts
	p.muts, p.bytes = nil, 0
	return p.a.submit(ctx, muts) // owns muts now
}

// Commit applies the last batch and waits for every batch in flight.
func (p *putWriter) Commit(ctx context.Context) error {
	err := p.flush(ctx)
	if werr := p.a.wait(); err == nil {
		err = werr
	}
	return err
}

// Abort drops the unsent cells and waits for the batches in flight.
func (p *putWriter) Abort() error {
	p.muts = nil
	p.a.wait()
	return nil
}
