package kvindex

// Where the index's writers take their cross-process locks: per operation
// (the store's Locker, its cells apart from the data from format 9 on), or
// under one writer lease for an index whose writers take turns (format 10).

import (
	"context"
	"fmt"

	"github.com/simdex/simdex/storage"
)

// placeLocks tells a Locker that can keep its locks apart from the data
// whether this index's writers all do (format 9 on), and in an index
// whose writers take turns (format 10) makes the writes use the Locker's
// writer lease (writeLocker).
func (ix *Index) placeLocks(format int) error {
	if pl, ok := ix.cfg.Locker.(storage.PlacedLocker); ok {
		if err := pl.Separate(format > formatShards); err != nil {
			return fmt.Errorf("kvindex: index of format %d: %w", format, err)
		}
	}
	ix.writerLease = format == FormatWriterLease
	if !ix.writerLease || ix.cfg.Locker == nil {
		return nil
	}
	wl, ok := ix.cfg.Locker.(storage.WriterLeaser)
	if !ok {
		return fmt.Errorf("%w: kvindex: the index's writers take turns under a writer lease (format %d), which this store's Locker cannot hold", ErrMetaMismatch, format)
	}
	ix.leaser = wl
	return nil
}

// writeLocker returns the cross-process Locker of the index's writes: in
// an index whose writers take turns, the writer lease, contended for from
// the first locked write on (so a process that only reads, or bulk loads
// rows that did not exist, never takes the lease from the servers), else
// the configured Locker.
func (ix *Index) writeLocker(ctx context.Context) (storage.Locker, error) {
	if ix.leaser == nil {
		return ix.cfg.Locker, nil
	}
	ix.leaseMu.Lock()
	defer ix.leaseMu.Unlock()
	if ix.leaseLocker == nil {
		get, what := ix.leaser.WriterLease, "writer lease"
		if ix.cfg.LeaseGuest {
			get, what = ix.leaser.LeaseGuest, "guest of the writer lease"
		}
		l, err := get(ctx)
		if err != nil {
			return nil, fmt.Errorf("kvindex: %s: %w", what, storeErr(err))
		}
		ix.leaseLocker = l
	}
	return ix.leaseLocker, nil
}

// WriterLease reports whether the index's writers take turns under one
// lease (format 10): only the process holding it writes.
func (ix *Index) WriterLease() bool { return ix.writerLease }

// Writable reports whether a write begun now may go ahead: nil unless the
// index's writers take turns and this process does not hold the writer
// lease (an error wrapping ErrStore and ErrNotWriter, naming the holder).
// For a load balancer's choice of the server that takes writes.
func (ix *Index) Writable(ctx context.Context) error {
	if ix.leaser == nil {
		return nil
	}
	l, err := ix.writeLocker(ctx)
	if err != nil {
		return err
	}
	unlock, err := l.Lock(ctx, nil)
	if err != nil {
		return storeErr(err)
	}
	unlock()
	return nil
}
