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
	"github.com/simdex/simdex/kvindex"
)

// Lease locks (kvindex.Locker across processes). One lock is one cell of
// the meta table:
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
// ends. Release: CheckAndMutate "cell equals mine -> delete", sent in the
// background after the caller's writes (retried until the lease runs out;
// a lock put whose outcome is unknown, e.g. it timed out, is released the
// same way, since it may have been applied). HBase applies
// each CheckAndMutate atomically under its row lock, so at any moment at
// most one owner's value is in the cell, and a release or takeover never
// removes somebody else's lease. docs/ARCHITECTURE.md has the argument for
// exactly one original.

// lockQualifier is the qualifier of a lock cell.
var lockQualifier = []byte("o")

// lockRowPrefix starts every lock row of the meta table.
const lockRowPrefix = "lock:"

// Locker is the cross-process kvindex.Locker of a Store.
type Locker struct {
	s     *Store
	lease time.Duration
	// now is the clock (tests may replace it).
	now func() time.Time
}

var _ kvindex.Locker = (*Locker)(nil)

// Locker returns the store's lease locker, for kvindex.Config.Locker.
func (s *Store) Locker() *Locker {
	return &Locker{s: s, lease: s.cfg.LockLease, now: time.Now}
}

func lockRow(name uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(lockRowPrefix), name)
}

// Lock takes the named locks and returns the function that releases them
// all. It first tries every name at once with a single put-if-absent each
// (no waiting, so no hold-and-wait and no deadlock); if any is taken it
// gives back what it got and takes the names one by one in the given
// (sorted) order, waiting for each, as the deadlock-free protocol requires.
// Release deletes all of them in parallel.
func (l *Locker) Lock(ctx context.Context, names []uint64) (func(), error) {
	var token [16]byte
	if _, err := crand.Read(token[:]); err != nil {
		return nil, fmt.Errorf("%w: hbasestore: lock token: %w", kvindex.ErrStore, err)
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
	if len(names) > 1 {
		errs := make([]error, len(names))
		var wg sync.WaitGroup
		for i, n := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				held[i], errs[i] = l.tryOnce(ctx, n, token[:])
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			release()
			return nil, err
		}
		if !slices.ContainsFunc(held, func(v []byte) bool { return v == nil }) {
			return release, nil
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
	return release, nil
}

// tryOnce puts our value into the lock cell if it is absent, without
// waiting; it returns the value, or nil when the lock is held.
func (l *Locker) tryOnce(ctx context.Context, name uint64, token []byte) ([]byte, error) {
	if err := l.s.check(ctx); err != nil {
		return nil, err
	}
	row := lockRow(name)
	mine := l.value(token)
	put := &hbase.Put{Row: row, Values: []hbase.Value{{Family: l.s.fam, Qualifier: lockQualifier, Value: mine}}}
	ok, err := l.s.c.CheckAndMutate(ctx, l.s.tables[kvindex.TableMeta], hbase.Check{Row: row, Family: l.s.fam, Qualifier: lockQualifier, Op: hbase.Equal}, put)
	if err != nil {
		// The put may have been applied (a reply lost, or a call queued at a
		// hung server and run later): the caller releases mine anyway, so a
		// lock nobody knows it holds does not wait out its whole lease.
		return mine, l.s.wrap(ctx, fmt.Errorf("lock %x: %w", name, err))
	}
	if !ok {
		return nil, nil
	}
	return mine, nil
}

func (l *Locker) value(token []byte) []byte {
	exp := l.now().Add(l.lease).UnixMilli()
	return binary.BigEndian.AppendUint64(append([]byte(nil), token...), uint64(exp))
}

func (l *Locker) acquire(ctx context.Context, name uint64, token []byte) ([]byte, error) {
	row := lockRow(name)
	table := l.s.tables[kvindex.TableMeta]
	fam := l.s.fam
	backoff := time.Millisecond
	for {
		if err := l.s.check(ctx); err != nil {
			if errors.Is(err, kvindex.ErrStore) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: lock %x not taken: %w", kvindex.ErrStore, name, err)
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
		case !found:
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
			return nil, fmt.Errorf("%w: lock %x held by another process: %w", kvindex.ErrStore, name, ctx.Err())
		case <-t.C:
		}
	}
}

// releaseAll releases every held name in parallel and waits.
func (l *Locker) releaseAll(ctx context.Context, names []uint64, held [][]byte) {
	var wg sync.WaitGroup
	for i, v := range held {
		if v == nil {
			continue
		}
		wg.Go(func() { l.release(ctx, names[i], v) })
	}
	wg.Wait()
}

// releaseAttempt bounds one release call, so that a hung region server
// costs a retry, not the whole lease.
const releaseAttempt = 5 * time.Second

// release deletes the lock cell if it still holds our value. A failure is
// retried with backoff until the lease expires (then nobody needs the
// release any more) or ctx ends; only then is it logged and left to
// expire.
func (l *Locker) release(ctx context.Context, name uint64, mine []byte) {
	row := lockRow(name)
	del := &hbase.Delete{Row: row, Targets: []hbase.DeleteTarget{{Family: l.s.fam, Qualifier: lockQualifier, Kind: hbase.DeleteColumnVersions}}}
	expiry := time.UnixMilli(int64(binary.BigEndian.Uint64(mine[16:])))
	backoff := 100 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, releaseAttempt)
		_, err := l.s.c.CheckAndMutate(actx, l.s.tables[kvindex.TableMeta], hbase.Check{Row: row, Family: l.s.fam, Qualifier: lockQualifier, Op: hbase.Equal, Value: mine}, del)
		cancel()
		if err == nil || errors.Is(err, hbase.ErrClosed) {
			return
		}
		if ctx.Err() != nil || !l.now().Add(backoff).Before(expiry) {
			l.s.cfg.Logger.Warn("hbasestore: releasing lock failed; its lease will expire", "name", fmt.Sprintf("%x", name), "expires", expiry, "err", err)
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
