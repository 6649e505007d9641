package bulkload

import (
	"context"
	"fmt"

	"github.com/simdex/simdex/storage"
)

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
	if err := l.addCounters(ctx, addDocs, addFPs); err != nil {
		return nil, err
	}
	return multi, nil
}

// addCounters adds docs and fps to the index's counters, once per load:
// with them it puts a marker cell (meta row "bulkload", qualifier the load
// id), and a rerun that finds the marker adds nothing.
func (l *loader) addCounters(ctx context.Context, docs, fps int64) error {
	markerRow, markerQual := []byte("bulkload"), []byte(l.cp.LoadID)
	rows, err := l.ix.Store().Get(ctx, []storage.RowKey{{Table: storage.TableMeta, Key: markerRow}})
	if err != nil {
		return err
	}
	for _, c := range rows[0].Cells {
		if string(c.Qualifier) == string(markerQual) {
			return nil // added by an earlier (interrupted) run
		}
	}
	muts := l.bw.Counters(docs, fps)
	muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableMeta, Row: markerRow, Qualifier: markerQual,
		Value: fmt.Appendf(nil, "documents=%d fingerprints=%d shard=%d/%d", docs, fps, l.cfg.Shard, l.cfg.Shards)})
	if err := l.apply(ctx, muts); err != nil {
		return err
	}
	if f, ok := l.ix.Store().(flusher); ok {
		return f.Flush()
	}
	return nil
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
