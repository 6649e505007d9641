package kvindex

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/simdex/simdex/storage"
)

// Lock names: the kind in bits 16.., a hash bucket of 16 bits below. The
// space is fixed (not derived from Config.LockStripes) so that processes with
// different settings still agree on names.
const (
	lockKindID  = 1
	lockKindRow = 2
	lockBuckets = 1 << 16
)

// LockNameBounds returns n-1 increasing Locker names that cut the names
// an index locks into n ranges of about equal use, for a store that keeps
// locks in ranges (HBase pre-splits its lock rows on them). An insert
// takes one id name (kind 1) and T = 4 row names (kind 2, the default
// layout's tables) per document, each name's bucket uniform, so the
// bounds cut the name space weighted 1 for the id buckets and 4 for the
// row buckets. Nil for n <= 1.
func LockNameBounds(n int) []uint64 {
	const idWeight, rowWeight = 1, 4
	var out []uint64
	for j := 1; j < n; j++ {
		// The j/n point of the weighted space: within the ids' share
		// idWeight/(idWeight+rowWeight), else within the rows'.
		at := j * (idWeight + rowWeight) // in units of 1/n
		if at < n*idWeight {
			out = append(out, lockKindID<<16|uint64(at*lockBuckets/(n*idWeight)))
			continue
		}
		out = append(out, lockKindRow<<16|uint64((at-n*idWeight)*lockBuckets/(n*rowWeight)))
	}
	return out
}

// stripedLocks serializes writers that touch the same index rows or document
// ids within this process. Each mutex protects every row (or id) whose hash
// falls on its stripe: holding it is the right to read-then-write those rows.
// Callers take all the stripes they need at once, in increasing order, ids
// before rows, so two writers never wait on each other in a cycle.
//
// Why this gives exactly one original: two fingerprints within distance K
// agree on the prefix of at least one table (pigeonhole), so two racing
// near-duplicate inserts both need that table's row lock; the second to get
// it sees the first's committed writes in its lookup.
type stripedLocks struct {
	ids  []sync.Mutex // stripes for document ids
	rows []sync.Mutex // stripes for index rows (table, prefix)
}

func newStripedLocks(n int) *stripedLocks {
	return &stripedLocks{ids: make([]sync.Mutex, n), rows: make([]sync.Mutex, n)}
}

func idHash(id string) uint64 { return xxhash.Sum64String(id) }

func rowHash(table int, prefix uint64) uint64 {
	h := (uint64(table)<<56 ^ prefix) * 0x9E3779B97F4A7C15
	return h ^ h>>29
}

// lockSet is what one operation locks: hashes of ids or rows.
type lockSet struct {
	kind   int
	hashes []uint64
}

// lock takes the in-process stripes of the hashes and then, when the index
// has a Locker, the cross-process locks of the same names.
func (ix *Index) lock(ctx context.Context, ls lockSet) (func(), error) {
	set := ix.locks.rows
	if ls.kind == lockKindID {
		set = ix.locks.ids
	}
	stripes := make([]int, len(ls.hashes))
	for i, h := range ls.hashes {
		stripes[i] = int(h % uint64(len(set)))
	}
	unlock := lockStripes(set, stripes)
	locker, err := ix.writeLocker(ctx)
	if err != nil {
		unlock()
		return nil, err
	}
	if locker == nil {
		return unlock, nil
	}
	remote, err := locker.Lock(ctx, ls.names(nil))
	if err != nil {
		unlock()
		return nil, fmt.Errorf("kvindex: taking locks: %w", storeErr(err))
	}
	return func() { remote(); unlock() }, nil
}

// names appends the Locker names of ls to dst, sorted and deduplicated.
func (ls lockSet) names(dst []uint64) []uint64 {
	n := len(dst)
	for _, h := range ls.hashes {
		dst = append(dst, uint64(ls.kind)<<16|h%lockBuckets)
	}
	slices.Sort(dst[n:])
	return append(dst[:n], slices.Compact(dst[n:])...)
}

// mutateReleasing is mutate for the last writes of an operation holding
// the locks of sets: with a ReleasingLocker the locks are released in the
// request of the last writes (the unlock functions then have less or
// nothing left to do); otherwise it is mutate.
func (ix *Index) mutateReleasing(ctx context.Context, muts []storage.Mutation, sets ...lockSet) error {
	muts, hold := ix.holdCounters(muts)
	if err := ix.mutateReleasingNow(ctx, muts, sets...); err != nil {
		return err
	}
	if hold != nil {
		hold()
	}
	return nil
}

// mutateReleasingNow applies muts (with the release, when the Locker can).
func (ix *Index) mutateReleasingNow(ctx context.Context, muts []storage.Mutation, sets ...lockSet) error {
	rl, ok := ix.cfg.Locker.(storage.ReleasingLocker)
	ok = ok && ix.leaser == nil // the writer lease releases nothing
	if !ok || len(muts) == 0 {
		return ix.mutate(ctx, muts)
	}
	if ix.closed.Load() {
		return ErrClosed
	}
	var names []uint64
	for _, ls := range sets {
		names = ls.names(names)
	}
	start := time.Now()
	err := rl.MutateAndRelease(ctx, muts, names)
	ix.m.observeStore("mutate", start, err)
	if err != nil {
		return storeErr(err)
	}
	return nil
}

// lockStripes takes the given stripes of set in increasing order and returns
// the function that releases them.
func lockStripes(set []sync.Mutex, stripes []int) func() {
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		set[s].Lock()
	}
	return func() {
		for i := len(stripes) - 1; i >= 0; i-- {
			set[stripes[i]].Unlock()
		}
	}
}
