package kvindex

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Group commit of single inserts (Config.GroupWindow).
//
// On HBase one check-and-insert costs a handful of sequential WAL-synced
// round trips (lock takes, the lookup, one Multi per table written),
// whatever the number of documents it decides. Concurrent single inserts
// are therefore gathered: the first to arrive becomes the group's leader,
// waits GroupWindow (or until GroupMax documents joined), and decides the
// whole group with one InsertBatch, which takes every lock of the group at
// once, looks up all its fingerprints in one read, compares each document
// with the stored ones and with the group's earlier ones in (time, id)
// order, and writes one Multi per table. Each member gets its own result.
//
// What a caller sees is unchanged: a document's Time is set on arrival (not
// when the group runs), so the original of near-duplicates that land in
// one group is still the earliest (time, id); exactly one of them is stored
// by InsertIfUnique, by the same locks as without grouping, across
// processes too (docs/ARCHITECTURE.md).

// groupKey separates documents that cannot share one InsertBatch call.
type groupKey struct {
	mode InsertMode
	k    int
}

// group is one set of inserts decided together.
type group struct {
	key  groupKey
	docs []Document
	ids  map[string]bool
	ctxs []context.Context
	full chan struct{} // closed when the group reached GroupMax
	done chan struct{} // closed when results, errs and err are set

	results []InsertResult
	errs    []error
	err     error
}

// grouper gathers concurrent single inserts into groups.
type grouper struct {
	ix     *Index
	window time.Duration
	max    int
	// slots bounds the groups deciding at once (GroupsInFlight). While
	// they run, new arrivals keep joining the open group, so under load
	// groups grow to what one round of the store's latency gathers, and
	// an idle index pays only the window.
	slots chan struct{}

	// mu protects open: the group per key that still takes members.
	mu   sync.Mutex
	open map[groupKey]*group
}

func newGrouper(ix *Index, window time.Duration, max, inFlight int) *grouper {
	return &grouper{ix: ix, window: window, max: max, slots: make(chan struct{}, inFlight), open: map[groupKey]*group{}}
}

// insert adds doc to the open group of its (mode, k), leading a new group
// when there is none, and returns doc's own result.
func (g *grouper) insert(ctx context.Context, doc Document, mode InsertMode, k int) (InsertResult, error) {
	if doc.Time.IsZero() {
		doc.Time = time.Now().UTC() // arrival time: the group runs later
	}
	key := groupKey{mode, k}
	g.mu.Lock()
	gr := g.open[key]
	if gr != nil && gr.ids[doc.ID] {
		// The same id twice in one batch is an error of the batch: this
		// one goes alone (its id lock orders it after the group).
		g.mu.Unlock()
		return g.ix.insertOne(ctx, doc, mode, k)
	}
	leader := gr == nil
	if leader {
		gr = &group{key: key, ids: map[string]bool{}, full: make(chan struct{}), done: make(chan struct{})}
		g.open[key] = gr
	}
	n := len(gr.docs)
	gr.docs = append(gr.docs, doc)
	gr.ctxs = append(gr.ctxs, ctx)
	gr.ids[doc.ID] = true
	if len(gr.docs) >= g.max {
		delete(g.open, key)
		close(gr.full)
	}
	g.mu.Unlock()

	if leader {
		g.lead(ctx, gr)
	} else {
		select {
		case <-gr.done:
		case <-ctx.Done():
			// The group may still store the document: the caller was not
			// told it was stored, and a retry of the same id is idempotent.
			return InsertResult{}, fmt.Errorf("%w: insert %q: waiting for its group: %w", ErrStore, doc.ID, ctx.Err())
		}
	}
	if gr.err != nil {
		return InsertResult{}, gr.err
	}
	if gr.errs[n] != nil {
		return InsertResult{}, gr.errs[n]
	}
	return gr.results[n], nil
}

// lead waits for the group to fill or its window to pass, then for a free
// slot (members keep joining meanwhile), closes the group, and decides it
// with one InsertBatch. The batch's context ends when every member's has
// ended (nobody waits for the answer any more), and has the latest of their
// deadlines, so no member's request fails early because of another's
// deadline. The wait for a slot is bounded by the running groups' own
// deadlines.
func (g *grouper) lead(ctx context.Context, gr *group) {
	t := time.NewTimer(g.window)
	select {
	case <-gr.full:
	case <-t.C:
	case <-ctx.Done():
	}
	t.Stop()
	g.slots <- struct{}{}
	defer func() { <-g.slots }()
	g.mu.Lock()
	if g.open[gr.key] == gr {
		delete(g.open, gr.key)
	}
	ctxs := gr.ctxs // no member joins any more
	g.mu.Unlock()

	bctx, cancel := batchContext(ctxs)
	defer cancel()
	gr.results, gr.errs, gr.err = g.ix.InsertBatch(bctx, gr.docs, gr.key.mode, gr.key.k)
	g.ix.m.groupSize.Observe(float64(len(gr.docs)))
	close(gr.done)
}

// batchContext returns a context without the members' values that is
// cancelled once every member's context is done, with the latest member
// deadline (none if any member has none).
func batchContext(ctxs []context.Context) (context.Context, context.CancelFunc) {
	var latest time.Time
	noDeadline := false
	for _, c := range ctxs {
		d, ok := c.Deadline()
		if !ok {
			noDeadline = true
		} else if d.After(latest) {
			latest = d
		}
	}
	base, cancel := context.WithCancel(context.Background())
	if !noDeadline {
		var cancelDeadline context.CancelFunc
		base, cancelDeadline = context.WithDeadline(base, latest)
		prev := cancel
		cancel = func() { cancelDeadline(); prev() }
	}
	var mu sync.Mutex // guards live
	live := len(ctxs)
	stops := make([]func() bool, len(ctxs))
	for i, c := range ctxs {
		stops[i] = context.AfterFunc(c, func() {
			mu.Lock()
			live--
			last := live == 0
			mu.Unlock()
			// A last member that ran out of time leaves the batch to its
			// own deadline (the latest member's): cancelling here would
			// race that timer and could end the batch with Canceled,
			// which the server answers as a client that went away (499)
			// instead of a timeout (503).
			if last && (noDeadline || !errors.Is(c.Err(), context.DeadlineExceeded)) {
				cancel()
			}
		})
	}
	return base, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
