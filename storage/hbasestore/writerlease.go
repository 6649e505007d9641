package hbasestore

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/schema"
	"github.com/simdex/simdex/storage"
)

// The writer lease (storage.WriterLeaser): one cell of the meta table's
// lock family that says which process may write an index whose writers
// take turns.
//
//	row        "lock:writer" (in the lock rows' region; a per-name lock
//	           row is "lock:" and 8 bytes, this one 6)
//	qualifier  "o"
//	value      owner token (16 random bytes) | lease expiry (8 bytes,
//	           big-endian Unix milliseconds, by the owner's clock) |
//	           the owner's name (host:pid, for messages) | optionally a
//	           0x00 byte and the URL where the owner takes writes
//	           (Config.WriterURL, for the others to send writes to)
//
// It is taken, renewed and given back with the per-name locks' conditional
// puts: "absent (or empty) -> mine" takes a free lease, "equals what I
// read -> mine" takes over one whose expiry has passed, "equals mine ->
// mine with a later expiry" renews, and "equals mine -> empty" gives it
// back. HBase applies each atomically under the row's lock, so at most one
// owner's value is in the cell at any moment.
//
// The holder renews every lease/6 and counts itself the writer only while
// the expiry it last wrote, measured from when it sent that renewal, is at
// least lease/2 away: an operation is bounded by the request timeout
// (at most lease/6 in the server), so every write of an operation begun
// while the holder was the writer is done before the lease can expire and
// another process take it over, as with the per-name leases. A process
// that does not hold it tries to take it every second, and takes it over
// once its expiry has passed (a holder that crashed; one that closed gave
// it back and is replaced within a second).
//
// Guests (writerguest.go) are processes that write beside the holder
// without taking the lease (bulk loads): while one is registered the
// holder takes the per-name locks too. After every renewal or take the
// holder reads the lease row's guest cells before the new expiry lets it
// write, so it never writes without per-name locks after a guest was
// told it may write.

// leaseRow is the writer lease's row in the meta table.
var leaseRow = []byte(lockRowPrefix + "writer")

// writerLease is a Store's contender for the writer lease.
type writerLease struct {
	s     *Store
	lease time.Duration
	now   func() time.Time
	token []byte
	name  string // host:pid
	url   string // Config.WriterURL

	// mu protects the fields below, written by the loop and read by Lock.
	mu sync.Mutex
	// mine is the value in the cell while this process holds the lease
	// (nil: not held); validUntil is the expiry it carries, by the clock
	// at the time its write was sent.
	mine       []byte
	validUntil time.Time
	// holder and holderUntil are the other owner and its expiry, as last
	// read (for messages).
	holder      string
	holderURL   string
	holderUntil time.Time

	// base is the store's per-name Locker, which the holder's operations
	// take too while a guest is registered (guestMode).
	base *Locker
	// guestMode: a guest is registered, so operations take the per-name
	// locks; bare counts operations under way that took none (Lock
	// raises it before reading guestMode, so that entering guest mode
	// and then waiting for bare to reach 0 leaves none behind). drained:
	// bare reached 0 since guestMode was last set, so guests may be
	// admitted (written and read by the loop only).
	guestMode atomic.Bool
	bare      atomic.Int64
	drained   bool
}

var _ storage.WriterLeaser = (*Locker)(nil)

// WriterLease starts this store's contention for the writer lease and
// returns the Locker of an index whose writers take turns (see the
// comment at the top of this file). The first attempt to take it is made
// before it returns.
func (l *Locker) WriterLease(ctx context.Context) (storage.Locker, error) {
	s := l.s
	if !s.hasLockFam || !bytes.Equal(s.lockFam, []byte(schema.LockFamily)) {
		return nil, fmt.Errorf("%w: hbasestore: the writer lease lives in the meta table's lock family %q, which this namespace's index does not use", storage.ErrStore, schema.LockFamily)
	}
	s.mu.Lock()
	w := s.lease
	first := w == nil
	if first {
		token, name, err := ownerID()
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		w = &writerLease{s: s, lease: l.lease, now: l.now, token: token, name: name, url: s.cfg.WriterURL, base: l}
		s.lease = w
	}
	s.mu.Unlock()
	if !first {
		return w, nil
	}
	if err := s.startLoop(ctx, w.step, w.run); err != nil {
		return nil, err
	}
	return w, nil
}

// ownerID returns a fresh random token and this process's name (host:pid):
// who holds the writer lease, or is registered as its guest.
func ownerID() (token []byte, name string, err error) {
	token = make([]byte, 16)
	if _, err := crand.Read(token); err != nil {
		return nil, "", fmt.Errorf("%w: hbasestore: owner token: %w", storage.ErrStore, err)
	}
	host, _ := os.Hostname()
	return token, host + ":" + strconv.Itoa(os.Getpid()), nil
}

// startLoop makes the first step before it returns, then runs run on a
// goroutine the store owns (the loops of the lease and its guests).
func (s *Store) startLoop(ctx context.Context, step, run func(ctx context.Context)) error {
	step(ctx)
	if !s.goBackground(run) {
		return fmt.Errorf("%w: hbasestore: closed", storage.ErrStore)
	}
	return nil
}

// Lock succeeds, taking nothing, while this process holds the writer
// lease for at least half its length; otherwise it fails at once.
func (w *writerLease) Lock(ctx context.Context, names []uint64) (func(), error) {
	if err := w.s.check(ctx); err != nil {
		return nil, err
	}
	w.mu.Lock()
	held := w.mine != nil && w.now().Add(w.lease/2).Before(w.validUntil)
	holder, url, until, mine := w.holder, w.holderURL, w.holderUntil, w.mine != nil
	w.mu.Unlock()
	if held {
		w.bare.Add(1)
		if !w.guestMode.Load() {
			return func() { w.bare.Add(-1) }, nil
		}
		w.bare.Add(-1)
		if len(names) == 0 {
			return func() {}, nil
		}
		return w.base.Lock(ctx, names)
	}
	ns := w.s.cfg.Namespace
	switch {
	case mine:
		return nil, &storage.NotWriterError{Reason: fmt.Sprintf("hbasestore: the writer lease of namespace %s could not be renewed in time (is HBase reachable?)", ns)}
	case holder != "":
		at := ""
		if url != "" {
			at = " at " + url
		}
		return nil, &storage.NotWriterError{Holder: holder, URL: url,
			Reason: fmt.Sprintf("hbasestore: %s%s holds the writer lease of namespace %s (renewed to %s when last read): send writes there", holder, at, ns, until.UTC().Format(time.RFC3339))}
	}
	return nil, &storage.NotWriterError{Reason: fmt.Sprintf("hbasestore: this process does not hold the writer lease of namespace %s yet", ns)}
}

// run renews the lease while held and contends for it otherwise, until
// the store closes; then it gives the lease back.
func (w *writerLease) run(ctx context.Context) {
	w.s.repeat(ctx, func() time.Duration {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.mine != nil {
			return w.lease / 6
		}
		return min(time.Second, w.lease/6)
	}, w.step, w.giveBack)
}

// repeat calls step after each wait next() gives, until the store closes
// (then it calls closing) or ctx ends: the loop of the writer lease and
// of its guests, on a goroutine of goBackground.
func (s *Store) repeat(ctx context.Context, next func() time.Duration, step, closing func(ctx context.Context)) {
	for {
		t := time.NewTimer(next())
		select {
		case <-s.closing:
			t.Stop()
			closing(ctx)
			return
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		step(ctx)
	}
}

// step renews the lease when held, else tries to take it; then, holding
// it, reads the guests before the new expiry lets this process write.
func (w *writerLease) step(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, w.lease/6)
	defer cancel()
	mine, until, ok := w.acquire(actx)
	if !ok {
		return
	}
	row, err := w.s.readLeaseRow(actx)
	if err != nil {
		w.s.cfg.Logger.Warn("hbasestore: reading the writer lease's guests", "err", err)
		return // the expiry is not extended: it decays until Lock refuses
	}
	w.admitGuests(actx, row, mine, until)
}

// acquire renews the lease when held, else tries to take it (or take it
// over once expired); ok when this process holds it, with the value in
// the cell and the expiry it carries (by the clock when it was sent).
func (w *writerLease) acquire(ctx context.Context) (mine []byte, until time.Time, ok bool) {
	w.mu.Lock()
	cur := w.mine
	w.mu.Unlock()
	if cur != nil {
		return w.put(ctx, cur) // renew
	}
	if mine, until, ok = w.put(ctx, nil); ok {
		return mine, until, true
	}
	res, err := w.s.c.Get(ctx, w.s.tables[storage.TableMeta], &hbase.Get{Row: leaseRow, Columns: []hbase.Column{{Family: []byte(schema.LockFamily), Qualifiers: [][]byte{lockQualifier}}}})
	if err != nil {
		w.s.cfg.Logger.Warn("hbasestore: reading the writer lease", "err", err)
		return nil, until, false
	}
	v, _ := res.Value(schema.LockFamily, string(lockQualifier))
	if len(v) == 0 {
		return nil, until, false // given back since: taken on the next step
	}
	lv, ok := parseLeaseValue(v)
	if ok && bytes.Equal(lv.token, w.token) {
		// Ours: a put whose reply was lost had applied.
		w.mu.Lock()
		w.mine = v
		w.mu.Unlock()
		return v, lv.expiry, true
	}
	if !ok || lv.expiry.Before(w.now()) {
		return w.put(ctx, v) // expired (or unreadable): take it over
	}
	w.mu.Lock()
	w.holder, w.holderURL, w.holderUntil = lv.name, lv.url, lv.expiry
	w.mu.Unlock()
	return nil, until, false
}

// leaseValue is the writer lease cell's value: token (16 bytes) | expiry
// (8 bytes, big-endian Unix milliseconds) | holder name | optionally 0x00
// and the holder's URL. A value without the URL (a holder that advertises
// none) is the value of the lease's first layout, so binaries of either
// read each other's leases; a name holds no 0x00 (encode drops it).
type leaseValue struct {
	token  []byte
	expiry time.Time
	name   string
	url    string
}

func (lv leaseValue) encode() []byte {
	v := binary.BigEndian.AppendUint64(append(make([]byte, 0, 25+len(lv.name)+len(lv.url)), lv.token...), uint64(lv.expiry.UnixMilli()))
	v = append(v, strings.ReplaceAll(lv.name, "\x00", "")...)
	if lv.url != "" {
		v = append(append(v, 0), lv.url...)
	}
	return v
}

// parseLeaseValue decodes a lease cell; ok is false for a value too short
// to hold a token and an expiry (an empty cell: the lease is free).
func parseLeaseValue(v []byte) (lv leaseValue, ok bool) {
	if len(v) < 24 {
		return lv, false
	}
	lv = leaseValue{token: v[:16], expiry: time.UnixMilli(int64(binary.BigEndian.Uint64(v[16:24])))}
	rest := v[24:]
	if i := bytes.IndexByte(rest, 0); i >= 0 {
		lv.url = string(rest[i+1:])
		rest = rest[:i]
	}
	lv.name = string(rest)
	return lv, true
}

// put writes a new value of ours with a fresh expiry if the cell holds
// expect (nil: absent or empty), and records the outcome; ok when it
// applied, with the value and its expiry. The expiry lets this process
// write only once step has read the guests (admitGuests).
func (w *writerLease) put(ctx context.Context, expect []byte) (mine []byte, until time.Time, ok bool) {
	sent := w.now()
	v := leaseValue{token: w.token, expiry: sent.Add(w.lease), name: w.name, url: w.url}.encode()
	fam := []byte(schema.LockFamily)
	ok, err := w.s.c.CheckAndMutate(ctx, w.s.tables[storage.TableMeta],
		hbase.Check{Row: leaseRow, Family: fam, Qualifier: lockQualifier, Op: hbase.Equal, Value: expect},
		&hbase.Put{Row: leaseRow, Values: []hbase.Value{{Family: fam, Qualifier: lockQualifier, Value: v}}})
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err != nil:
		// Unknown outcome: a renewal keeps the expiry it had (it decays
		// until Lock refuses); a take is seen as ours on the next read.
		if !errors.Is(err, hbase.ErrClosed) {
			w.s.cfg.Logger.Warn("hbasestore: writing the writer lease", "err", err)
		}
		return nil, until, false
	case ok:
		if w.mine == nil {
			w.s.cfg.Logger.Info("hbasestore: took the writer lease", "namespace", w.s.cfg.Namespace)
		}
		w.mine, w.holder = v, ""
		return v, sent.Add(w.lease), true
	}
	if expect != nil && bytes.Equal(expect, w.mine) {
		// Our renewal failed: the lease expired and was taken over.
		w.s.cfg.Logger.Warn("hbasestore: lost the writer lease", "namespace", w.s.cfg.Namespace)
		w.mine = nil
	}
	return nil, until, false
}

// giveBack empties the cell if it still holds our value, so that another
// process takes the lease within a second instead of after its expiry.
func (w *writerLease) giveBack(ctx context.Context) {
	w.mu.Lock()
	v := w.mine
	w.mine = nil
	w.mu.Unlock()
	if v == nil {
		return
	}
	actx, cancel := context.WithTimeout(ctx, releaseAttempt)
	defer cancel()
	fam := []byte(schema.LockFamily)
	_, err := w.s.c.CheckAndMutate(actx, w.s.tables[storage.TableMeta],
		hbase.Check{Row: leaseRow, Family: fam, Qualifier: lockQualifier, Op: hbase.Equal, Value: v},
		&hbase.Put{Row: leaseRow, Values: []hbase.Value{{Family: fam, Qualifier: lockQualifier, Value: []byte{}}}})
	if err != nil {
		w.s.cfg.Logger.Warn("hbasestore: giving the writer lease back failed; it will expire", "err", err)
	}
}
