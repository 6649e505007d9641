package kvindex

// Counter additions held in the process and written once per interval
// (Config.CounterInterval).
//
// On HBase a counter addition is an Increment, which reads its cell first,
// and in a family with NEW_VERSION_BEHAVIOR (simdex's data family) that
// read walks every version of the cell HBase still keeps: all of them,
// flushed or not, until the region's next major compaction (by default a
// week). Adding with every insert group, even spread over the
// CounterShards rows, piles about one version per row per second on a
// busy server, and each Increment gets dearer with every one of them.
// Held here and written once per interval, a process adds one version per
// interval instead of one per group.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdex/simdex/storage"
)

// counterBuffer holds the counter additions of acknowledged writes until
// the next flush.
type counterBuffer struct {
	// docs and fps are the additions not yet written.
	docs, fps atomic.Int64
	// mu is held by a flush across its write and by Stats across its read,
	// so a sum is never read with an addition both in the store and still
	// held (nor in neither).
	mu sync.Mutex

	stop     chan struct{} // closed by Close: the flusher writes once more and ends
	done     chan struct{} // closed when the flusher has ended
	stopOnce sync.Once
}

// startCounters starts the goroutine that writes held counter additions
// every interval; Close stops it after a last write.
func (ix *Index) startCounters(interval time.Duration) {
	cb := &counterBuffer{stop: make(chan struct{}), done: make(chan struct{})}
	ix.counters = cb
	go func() {
		defer close(cb.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), counterWriteTimeout)
				ix.flushCounters(ctx)
				cancel()
			case <-cb.stop:
				return
			}
		}
	}()
}

// counterWriteTimeout bounds one write of the held additions; what it could
// not write stays held for the next.
const counterWriteTimeout = 10 * time.Second

// flushCounters writes the held additions (to the next counter row, as a
// single operation's would be). On an error they stay held.
func (ix *Index) flushCounters(ctx context.Context) error {
	cb := ix.counters
	cb.mu.Lock()
	defer cb.mu.Unlock()
	docs, fps := cb.docs.Swap(0), cb.fps.Swap(0)
	if docs == 0 && fps == 0 {
		return nil
	}
	if err := ix.mutate(ctx, ix.counterMuts(docs, fps)); err != nil {
		cb.docs.Add(docs)
		cb.fps.Add(fps)
		ix.log.Warn("kvindex: writing the counters failed; they stay held for the next write", "documents", docs, "fingerprints", fps, "err", err)
		return err
	}
	return nil
}

// stopCounters ends the flusher and writes what it held. A process that
// ends without it (killed) loses at most one interval of additions.
func (ix *Index) stopCounters() error {
	cb := ix.counters
	if cb == nil {
		return nil
	}
	var err error
	cb.stopOnce.Do(func() {
		close(cb.stop)
		<-cb.done
		ctx, cancel := context.WithTimeout(context.Background(), counterWriteTimeout)
		defer cancel()
		err = ix.flushCounters(ctx)
	})
	return err
}

// holdCounters takes the counter additions out of an operation's last
// writes when the index holds them (Config.CounterInterval), and returns
// the rest with the function that holds them, to call once the writes
// were acknowledged; without holding it returns muts and nil.
func (ix *Index) holdCounters(muts []storage.Mutation) ([]storage.Mutation, func()) {
	cb := ix.counters
	if cb == nil {
		return muts, nil
	}
	var docs, fps int64
	rest := muts[:0:0]
	for _, m := range muts {
		if m.Table == storage.TableMeta && m.Kind == storage.Add {
			switch string(m.Qualifier) {
			case string(qualDocuments):
				docs += m.Delta
				continue
			case string(qualFingerprints):
				fps += m.Delta
				continue
			}
		}
		rest = append(rest, m)
	}
	return rest, func() {
		cb.docs.Add(docs)
		cb.fps.Add(fps)
	}
}
