package storage

import "context"

// Locker serializes writers across processes that share one store (several
// servers on one HBase). A user calls Lock with lock names sorted and
// deduplicated, never while holding another Locker lock of its own, and
// calls the returned unlock exactly once; the index always takes
// document-id names before row names within one operation. A Locker must
// give mutual exclusion per name across every process using the store, and
// should fail (rather than wait forever) when ctx ends. The embedded store
// needs none: only one process can open it, and in-process locks already
// serialize.
type Locker interface {
	Lock(ctx context.Context, names []uint64) (unlock func(), err error)
}

// ReleasingLocker is a Locker that can release locks in the request that
// carries an operation's last writes, so that the release costs no round
// trip (nor, on HBase, a write-ahead-log sync) of its own. The index's
// check-and-insert uses it when its Locker has it.
type ReleasingLocker interface {
	Locker
	// MutateAndRelease applies muts as the store's Mutate does and releases
	// the named locks, which this process holds through Lock. Every
	// mutation outside TableMeta is acknowledged before any lock is
	// released; TableMeta mutations (counters, which no lock protects) may
	// share the release's request. The locks' unlock functions must still
	// be called once the operation is over: they release what this did not
	// (everything, when it could not fold the release into the writes).
	MutateAndRelease(ctx context.Context, muts []Mutation, names []uint64) error
}

// PlacedLocker is a Locker that can keep its locks in one of two places:
// where the store has always kept them, or a separate place of the store's
// own (the HBase store's lock family, where taking and releasing a lock
// does not get slower with its use). Every process that locks the same
// names must use the same place, so the index decides, from its persisted
// format, when it opens: Separate(true) for an index whose format promises
// that every writer uses the separate place (a binary from before it
// refuses the index), Separate(false) for an older one. Separate is called
// before the first Lock; it fails when the store lacks the separate place.
type PlacedLocker interface {
	Locker
	Separate(separate bool) error
}

// WriterLeaser is a Locker that can instead serialize the index's writers
// by one lease on the whole store: the process holding it is the only one
// that writes, and its in-process locks are all the exclusion it needs, so
// an operation takes no cross-process lock of its own (on HBase, no
// conditional write per name). The index asks for it when its persisted
// format says its writers take turns (every process that writes it must
// agree, as with PlacedLocker).
type WriterLeaser interface {
	Locker
	// WriterLease starts contending for the store's writer lease (once; a
	// later call returns the same Locker) and returns the Locker the
	// index's writes use from then on. Its Lock succeeds, taking nothing
	// across processes, while this process holds the lease for long
	// enough to finish an operation; otherwise it fails at once with an
	// error wrapping ErrStore (and ErrNotWriter) that names the holder.
	// The lease is given back when the store closes.
	WriterLease(ctx context.Context) (Locker, error)
	// LeaseGuest registers this process as a guest of the writer lease
	// (once; a later call returns the same Locker) and returns the Locker
	// of its writes: a guest writes beside the holder without taking the
	// lease (a bulk load, an offline compaction), with per-name locks
	// that the holder takes too while a guest is registered. Its Lock
	// waits until the holder has admitted the guest, failing with an
	// error wrapping ErrStore and ErrNotWriter when that takes longer
	// than a lease. The registration ends when the store closes.
	LeaseGuest(ctx context.Context) (Locker, error)
}
