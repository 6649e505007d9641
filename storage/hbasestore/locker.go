package hbasestore

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/schema"
	"github.com/simdex/simdex/storage"
)

// Lease locks (storage.Locker across processes). One lock is one cell of
// the meta table's lock family (schema.LockFamily; in a namespace created
// before that family, of its data family):
//
//	row        "lock:" | name (8 bytes, big-endian)
//	qualifier  "o"
//	value      owner token (16 random bytes) | lease expiry (8 bytes,
//	           big-endian Unix milliseconds, by the owner's clock)
//
// Acquire: CheckAndMutate "cell absent -> put mine". If it fails, read the
// cell: when it is ours (a retried CheckAndMutate that had applied) we hold
// it; when its lease has expired, CheckAndMutate "cell equals what I read
// -> put mine" takes it over; otherwise back off and try again until ctx
// ends. Release: CheckAndMutate "cell equals mine -> put an empty value"
// (in the data family of an older namespace: "-> delete"), sent with the
// caller's last writes when it uses MutateAndRelease (in the request of the
// meta table's counter updates, after every other write was acknowledged),
// else in the background after the caller's writes (retried until the lease runs out;
// a lock put whose outcome is unknown, e.g. it timed out, is released the
// same way, since it may have been applied). HBase applies
// each CheckAndMutate atomically under its row lock, so at any moment at
// most one owner's value is in the cell, and a release or takeover never
// removes somebody else's lease. "Cell absent" matches an empty value too
// (HBase's check for a null value), so a released cell is free either way.
// docs/ARCHITECTURE.md has the argument for exactly one original.

// lockQualifier is the qualifier of a lock cell.
var lockQualifier = []byte("o")

// lockRowPrefix starts every lock row of the meta table (the schema
// pre-splits meta on it).
const lockRowPrefix = schema.LockRowPrefix

// Locker is the cross-process storage.Locker of a Store.
type Locker struct {
	s     *Store
	lease time.Duration
	// now is the clock (tests may replace it).
	now func() time.Time

	// mu protects held: the value in the lock cell of every name this
	// Locker holds (taken by Lock, not yet released). A name is held by at
	// most one operation at a time, across processes, so the name is key
	// enough; MutateAndRelease takes the values from here, and an unlock
	// function releases only the names still here with its own value.
	mu   sync.Mutex
	held map[uint64][]byte
}

var (
	_ storage.ReleasingLocker = (*Locker)(nil)
	_ storage.PlacedLocker    = (*Locker)(nil)
)

// Separate puts the store's locks into the meta table's lock family
// (true) or its data family (false); see storage.PlacedLocker. It fails
// when the namespace has no lock family: AddLockFamily adds it.
func (l *Locker) Separate(separate bool) error {
	if !separate {
		l.s.lockFam = l.s.fam
		return nil
	}
	if !l.s.hasLockFam {
		return fmt.Errorf("%w: the index keeps its locks in the meta table's lock family %q, which table %s lacks (opening the store with CreateTables, --hbase-create-tables, adds it)", storage.ErrStore, schema.LockFamily, l.s.tables[storage.TableMeta])
	}
	l.s.lockFam = []byte(schema.LockFamily)
	return nil
}

// Locker returns the store's lease locker, for kvindex.Config.Locker.
func (s *Store) Locker() *Locker {
	return &Locker{s: s, lease: s.cfg.LockLease, now: time.Now, held: map[uint64][]byte{}}
}

// MutateAndRelease applies muts (as Store.Mutate) and releases the named
// locks in the request of the last writes when those are the meta table's
// (the counter updates that end a check-and-insert): the conditional
// deletes ride with them, after the index, fp and docs writes were
// acknowledged, exactly when the separate release would have been sent.
// Released names leave the held set, so their unlock functions skip them;
// the rest (not folded, or an error) are released by the unlock functions
// as before.
func (l *Locker) MutateAndRelease(ctx context.Context, muts []storage.Mutation, names []uint64) error {
	var rel []hbase.CondMutation
	var relNames []uint64
	var relVals [][]byte
	l.mu.Lock()
	for _, n := range names {
		if v, ok := l.held[n]; ok {
			rel = append(rel, l.releaseMut(n, v))
			relNames = append(relNames, n)
			relVals = append(relVals, v)
		}
	}
	l.mu.Unlock()
	folded, relErrs, err := l.s.mutate(ctx, muts, rel)
	if folded && relErrs != nil {
		l.mu.Lock()
		for k, n := range relNames {
			// Released, or no longer ours (the lease was taken over): either
			// way nothing is left to release. With an error the unlock
			// function tries again.
			if relErrs[k] == nil && bytes.Equal(l.held[n], relVals[k]) {
				delete(l.held, n)
			}
		}
		l.mu.Unlock()
	}
	return err
}

// releaseMut is the conditional write that releases name held with value
// v: an empty value in the lock family, whose reads stop at the newest
// version; a delete in the data family of an older namespace, as every
// binary that may share it does (NEW_VERSION_BEHAVIOR keeps the versions
// there either way).
func (l *Locker) releaseMut(name uint64, v []byte) hbase.CondMutation {
	row := lockRow(name)
	chk := hbase.Check{Row: row, Family: l.s.lockFam, Qualifier: lockQualifier, Op: hbase.Equal, Value: v}
	if !bytes.Equal(l.s.lockFam, l.s.fam) {
		return hbase.CondMutation{Check: chk, Mutation: &hbase.Put{Row: row, Values: []hbase.Value{{Family: l.s.lockFam, Qualifier: lockQualifier, Value: []byte{}}}}}
	}
	return hbase.CondMutation{Check: chk, Mutation: &hbase.Delete{Row: row, Targets: []hbase.DeleteTarget{{Family: l.s.lockFam, Qualifier: lockQualifier, Kind: hbase.DeleteColumnVersions}}}}
}

// hold records the names Lock took (values per name, nil: not held).
func (l *Locker) hold(names []uint64, vals [][]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, n := range names {
		if vals[i] != nil {
			l.held[n] = vals[i]
		}
	}
}

// unhold removes from the held set the names still held with the given
// values and returns the values to release (nil where already released).
func (l *Locker) unhold(names []uint64, vals [][]byte) [][]byte {
	out := make([][]byte, len(vals))
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, n := range names {
		if vals[i] != nil && bytes.Equal(l.held[n], vals[i]) {
			delete(l.held, n)
			out[i] = vals[i]
		}
	}
	return out
}

func lockRow(name uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(lockRowPrefix), name)
}

// Lock takes the named locks and returns the function that releases them
// all. It first tries every name at once with a single put-if-absent each,
// all in one CheckAndMutateMulti (no waiting, so no hold-and-wait and no
// deadlock); if any is taken it gives back what it got and takes the names
// one by one in the given (sorted) order, waiting for each, as the
// deadlock-free protocol requires. Release deletes all of them in one
// CheckAndMutateMulti, in the background.
func (l *Locker) Lock(ctx context.Context, names []uint64) (func(), error) {
	var token [16]byte
	if _, err := crand.Read(token[:]); err != nil {
		return nil, fmt.Errorf("%w: hbasestore: lock token: %w", storage.ErrStore, err)
	}
	held := make([][]byte, len(names)) // the value we put, per name; nil: not held
	// releaseNow gives back what is held before Lock goes on (contended fast
	// path): synchronous, so a later read of a cell still holding our token
	// really means we hold it.
	releaseNow := func() {
		l.releaseAll(ctx, names, held)
		clear(held)
	}
	// release is what the caller gets: the lock cells are deleted in the
	// background, so a request never waits on its own unlock (nor, with
	// HBase down or hung, for the release's timeouts: a hung release used
	// to hold the request past its deadline). A release that fails is
	// retried until the lease runs out. Ordering is unchanged: the release
	// is sent after the caller's writes were acknowledged, and a waiter gets
	// the lock only once the cell is gone.
	release := func() {
		mine := slices.Clone(held)
		clear(held)
		l.s.goBackground(func(bg context.Context) { l.releaseAll(bg, names, mine) })
	}
	// granted registers the held names (MutateAndRelease may release them
	// with the caller's last writes) and returns the caller's unlock, which
	// releases, in the background, what is still held.
	granted := func() func() {
		l.hold(names, held)
		mine := slices.Clone(held)
		clear(held)
		return func() {
			left := l.unhold(names, mine)
			if slices.ContainsFunc(left, func(v []byte) bool { return v != nil }) {
				l.s.goBackground(func(bg context.Context) { l.releaseAll(bg, names, left) })
			}
		}
	}
	if len(names) > 1 {
		err := l.tryAll(ctx, names, token[:], held)
		if err != nil {
			release()
			return nil, err
		}
		if !slices.ContainsFunc(held, func(v []byte) bool { return v == nil }) {
			return granted(), nil
		}
		releaseNow() // contended: fall back to ordered acquisition
	}
	for i, n := range names {
		v, err := l.acquire(ctx, n, token[:])
		if err != nil {
			held[i] = v // with an error: maybe held, released to be sure
			release()
			return nil, err
		}
		held[i] = v
	}
	return granted(), nil
}

// tryAll puts our value into every lock cell that is absent, without
// waiting, in one CheckAndMutateMulti (one round trip per region server,
// each put atomic on its own row). held[i] is set for the names taken, and
// on an error also for those whose outcome is unknown (to be released).
func (l *Locker) tryAll(ctx context.Context, names []uint64, token []byte, held [][]byte) error {
	if err := l.s.check(ctx); err != nil {
		return err
	}
	mine := l.value(token)
	muts := make([]hbase.CondMutation, len(names))
	for i, n := range names {
		row := lockRow(n)
		muts[i] = hbase.CondMutation{
			Check:    hbase.Check{Row: row, Family: l.s.lockFam, Qualifier: lockQualifier, Op: hbase.Equal},
			Mutation: &hbase.Put{Row: row, Values: []hbase.Value{{Family: l.s.lockFam, Qualifier: lockQualifier, Value: mine}}},
		}
	}
	applied, errs, err := l.s.c.CheckAndMutateMulti(ctx, l.s.tables[storage.TableMeta], muts)
	if err != nil {
		for i := range held {
			held[i] = mine // unknown: release to be sure
		}
		return l.s.wrap(ctx, fmt.Errorf("lock %d names: %w", len(names), err))
	}
	for i := range names {
		if applied[i] || errs[i] != nil {
			held[i] = mine
		}
	}
	if err := errors.Join(errs...); err != nil {
		return l.s.wrap(ctx, fmt.Errorf("lock %d names: %w", len(names), err))
	}
	return nil
}

func (l *Locker) value(token []byte) []byte {
	exp := l.now().Add(l.lease).UnixMilli()
	return binary.BigEndian.AppendUint64(append([]byte(nil), token...), uint64(exp))
}

func (l *Locker) acquire(ctx context.Context, name uint64, token []byte) ([]byte, error) {
	row := lockRow(name)
	table := l.s.tables[storage.TableMeta]
	fam := l.s.lockFam
	backoff := time.Millisecond
	for {
		if err := l.s.check(ctx); err != nil {
			if errors.Is(err, storage.ErrStore) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: lock %x not taken: %w", storage.ErrStore, name, err)
		}
		mine := l.value(token)
		put := &hbase.Put{Row: row, Values: []hbase.Value{{Family: fam, Qualifier: lockQualifier, Value: mine}}}
		ok, err := l.s.c.CheckAndMutate(ctx, table, hbase.Check{Row: row, Family: fam, Qualifier: lockQualifier, Op: hbase.Equal}, put)
		if err != nil {
			return mine, l.s.wrap(ctx, fmt.Errorf("lock %x: %w", name, err)) // maybe applied: release it
		}
		if ok {
			return mine, nil
		}
		res, err := l.s.c.Get(ctx, table, &hbase.Get{Row: row, Columns: []hbase.Column{{Family: fam, Qualifiers: [][]byte{lockQualifier}}}})
		if err != nil {
			return nil, l.s.wrap(ctx, fmt.Errorf("lock %x: %w", name, err))
		}
		cur, found := res.Value(string(fam), string(lockQualifier))
		switch {
		case !found || len(cur) == 0:
			// Released between our two calls: try again at once.
			continue
		case len(cur) == 24 && bytes.Equal(cur[:16], token):
			// Ours: a CheckAndMutate retried after a lost reply had applied.
			return cur, nil
		case len(cur) != 24 || int64(binary.BigEndian.Uint64(cur[16:])) < l.now().UnixMilli():
			// Expired (or unreadable) lease: take it over, unless someone
			// else changed the cell since we read it.
			put.Values[0].Value = l.value(token)
			ok, err := l.s.c.CheckAndMutate(ctx, table, hbase.Check{Row: row, Family: fam, Qualifier: lockQualifier, Op: hbase.Equal, Value: cur}, put)
			if err != nil {
				return put.Values[0].Value, l.s.wrap(ctx, fmt.Errorf("lock %x: take over: %w", name, err)) // maybe applied
			}
			if ok {
				return put.Values[0].Value, nil
			}
			continue
		}
		// Held by another owner: wait with jittered, growing backoff.
		d := backoff/2 + rand.N(backoff)
		if backoff < 50*time.Millisecond {
			backoff *= 2
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w: lock %x held by another process: %w", storage.ErrStore, name, ctx.Err())
		case <-t.C:
		}
	}
}

// releaseAll releases every held name, all in one CheckAndMutateMulti
// round (one request per region server); names whose release failed are
// retried with backoff until their lease runs out or ctx ends, then left
// to expire.
func (l *Locker) releaseAll(ctx context.Context, names []uint64, held [][]byte) {
	var todo []int
	for i, v := range held {
		if v != nil {
			todo = append(todo, i)
		}
	}
	backoff := 100 * time.Millisecond
	for len(todo) > 0 {
		muts := make([]hbase.CondMutation, len(todo))
		for k, i := range todo {
			muts[k] = l.releaseMut(names[i], held[i])
		}
		actx, cancel := context.WithTimeout(ctx, releaseAttempt)
		_, errs, err := l.s.c.CheckAndMutateMulti(actx, l.s.tables[storage.TableMeta], muts)
		cancel()
		if errors.Is(err, hbase.ErrClosed) {
			return
		}
		var again []int
		var last error
		for k, i := range todo {
			e := err
			if e == nil {
				e = errs[k]
			}
			if e == nil {
				continue
			}
			last = e
			// Worth retrying only while the lease runs: after it, the lock
			// is free anyway (and maybe somebody else's by now, which the
			// compared value protects).
			if exp := leaseExpiry(held[i]); l.now().Add(backoff).Before(exp) {
				again = append(again, i)
			}
		}
		if last != nil && (len(again) == 0 || ctx.Err() != nil) {
			l.s.cfg.Logger.Warn("hbasestore: releasing locks failed; their leases will expire", "locks", len(todo), "err", last)
			return
		}
		todo = again
		if len(todo) == 0 {
			return
		}
		t := time.NewTimer(backoff/2 + rand.N(backoff))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func leaseExpiry(v []byte) time.Time {
	if len(v) != 24 {
		return time.Time{}
	}
	return time.UnixMilli(int64(binary.BigEndian.Uint64(v[16:])))
}

// releaseAttempt bounds one release round, so that a hung region server
// costs a retry, not the whole lease.
const releaseAttempt = 5 * time.Second

// AddLockFamily adds the meta table's lock family (schema.LockFamily) to a
// namespace created before it, and waits until meta's regions reopened
// with it; a namespace that has it is left alone. Only an index of format
// 9 or later keeps its locks there (kvindex.UpgradeFormat raises it).
func (s *Store) AddLockFamily(ctx context.Context) error {
	name := s.tables[storage.TableMeta]
	td, err := s.c.DescribeTable(ctx, name)
	if err != nil {
		return s.wrap(ctx, fmt.Errorf("describe %s: %w", name, err))
	}
	if !slices.ContainsFunc(td.Families, func(f hbase.FamilyDescriptor) bool { return f.Name == schema.LockFamily }) {
		td.Families = append(td.Families, schema.LockFamilyDescriptor())
		if err := s.c.ModifyTable(ctx, td); err != nil {
			return s.wrap(ctx, fmt.Errorf("add family %s to %s: %w", schema.LockFamily, name, err))
		}
	}
	s.hasLockFam = true
	return nil
}
