package hbasestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/schema"
	"github.com/simdex/simdex/storage"
)

// Guests of the writer lease: processes that write an index whose writers
// take turns without holding its lease, beside the holder (a bulk load or
// Spark ingest that merges into rows the servers write, an offline
// compaction). A guest takes the per-name locks, and while any guest is
// registered the holder takes them too, so the two exclude each other as
// writers that share do; the holder's writes go on meanwhile.
//
// Two more kinds of cell in the lease row (family l, beside "o"):
//
//	"g" + guest token (16 bytes)  the guest's registration: its expiry (8
//	                              bytes, big-endian Unix milliseconds, by
//	                              the guest's clock) | its epoch (4 bytes,
//	                              big-endian) | its name (host:pid)
//	"a" + guest token             the holder's admission of that guest:
//	                              the holder's lease token (16 bytes) |
//	                              the epoch admitted (4 bytes)
//
// The protocol:
//  1. The guest puts its registration (renewed every lease/6, expiry one
//     lease ahead) and reads the row. It may write (taking per-name locks)
//     once the lease is free or expired, or the admission holds the
//     current holder's token and its epoch; and only while its
//     registration's expiry, measured from when it sent that renewal, is
//     at least lease/2 away. When that lapses the holder may have dropped
//     it: it raises its epoch and waits for a fresh admission.
//  2. The holder reads the row after every renewal or take, before the
//     renewed expiry lets it write. With a live registration it enters
//     guest mode (its operations take per-name locks from then on), waits
//     for the operations under way without them to end (each ends within
//     its request deadline), then writes the admissions. With none left
//     (unregistered, or expired by its clock) it leaves guest mode and
//     deletes admissions whose registration is gone.
//
// Why a guest and a holder never write the same name unlocked: a guest is
// admitted either by the holder, which had entered guest mode and drained
// its unlocked operations first; or by reading a free or expired lease
// after its registration was written, in which case any holder's next take
// or renewal comes after that registration and reads it before writing. A
// holder stays in guest mode until the registration's expiry passes,
// after the guest stopped writing at half its lease (clock skew must stay
// below that margin, as for the lease itself).

var (
	guestPrefix = []byte("g")
	admitPrefix = []byte("a")
)

// leaseRowState is the lease row, decoded.
type leaseRowState struct {
	lease  []byte                // "o": the lease (empty: free)
	guests map[string]guestValue // by guest token
	admits map[string]admitValue // by guest token
}

type guestValue struct {
	expiry time.Time
	epoch  uint32
	name   string
}

func (g guestValue) encode() []byte {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 12+len(g.name)), uint64(g.expiry.UnixMilli()))
	return append(binary.BigEndian.AppendUint32(v, g.epoch), g.name...)
}

func parseGuestValue(v []byte) (g guestValue, ok bool) {
	if len(v) < 12 {
		return g, false
	}
	return guestValue{expiry: time.UnixMilli(int64(binary.BigEndian.Uint64(v))), epoch: binary.BigEndian.Uint32(v[8:]), name: string(v[12:])}, true
}

type admitValue struct {
	holder []byte // the holder's lease token
	epoch  uint32
}

func (a admitValue) encode() []byte {
	return binary.BigEndian.AppendUint32(append(make([]byte, 0, 20), a.holder...), a.epoch)
}

func parseAdmitValue(v []byte) (a admitValue, ok bool) {
	if len(v) != 20 {
		return a, false
	}
	return admitValue{holder: v[:16], epoch: binary.BigEndian.Uint32(v[16:])}, true
}

// readLeaseRow reads and decodes the lease row's cells.
func (s *Store) readLeaseRow(ctx context.Context) (leaseRowState, error) {
	fam := []byte(schema.LockFamily)
	res, err := s.c.Get(ctx, s.tables[storage.TableMeta], &hbase.Get{Row: leaseRow, Columns: []hbase.Column{{Family: fam}}})
	if err != nil {
		return leaseRowState{}, err
	}
	st := leaseRowState{guests: map[string]guestValue{}, admits: map[string]admitValue{}}
	for _, c := range res.Cells {
		if !bytes.Equal(c.Family, fam) {
			continue
		}
		q := c.Qualifier
		switch {
		case bytes.Equal(q, lockQualifier):
			st.lease = c.Value
		case len(q) == 17 && q[0] == guestPrefix[0]:
			if g, ok := parseGuestValue(c.Value); ok {
				st.guests[string(q[1:])] = g
			}
		case len(q) == 17 && q[0] == admitPrefix[0]:
			if a, ok := parseAdmitValue(c.Value); ok {
				st.admits[string(q[1:])] = a
			}
		}
	}
	return st, nil
}

// admitGuests is the holder's part (step 2 above): after its write of
// mine (expiring at until) it sets guest mode from row, admits the live
// guests once its unlocked operations have ended, and only then lets the
// new expiry admit writes.
func (w *writerLease) admitGuests(ctx context.Context, row leaseRowState, mine []byte, until time.Time) {
	now := w.now()
	live := 0
	for _, g := range row.guests {
		if g.expiry.After(now) {
			live++
		}
	}
	if live > 0 && !w.guestMode.Load() {
		w.guestMode.Store(true)
		w.drained = false
		w.s.cfg.Logger.Info("hbasestore: a guest writes beside the writer lease's holder: its operations take per-name locks while it does", "guests", live)
	}
	if live == 0 && w.guestMode.Load() {
		w.guestMode.Store(false)
		w.s.cfg.Logger.Info("hbasestore: no guest writes beside the writer lease's holder any more")
	}
	w.mu.Lock()
	if bytes.Equal(w.mine, mine) {
		w.validUntil = until
	}
	w.mu.Unlock()

	fam := []byte(schema.LockFamily)
	var stale []hbase.DeleteTarget
	for tok := range row.admits {
		if _, ok := row.guests[tok]; !ok {
			stale = append(stale, hbase.DeleteTarget{Family: fam, Qualifier: append(append([]byte{}, admitPrefix...), tok...)})
		}
	}
	if len(stale) > 0 {
		if err := w.s.c.Delete(ctx, w.s.tables[storage.TableMeta], &hbase.Delete{Row: leaseRow, Targets: stale}); err != nil {
			w.s.cfg.Logger.Warn("hbasestore: deleting the admissions of guests gone", "err", err)
		}
	}
	if live == 0 {
		return
	}
	if !w.drained {
		// Operations begun without per-name locks end within their
		// request deadline; admit nobody until they have.
		for w.bare.Load() > 0 {
			t := time.NewTimer(5 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return // the next step tries again
			case <-t.C:
			}
		}
		w.drained = true
	}
	var vals []hbase.Value
	for tok, g := range row.guests {
		if !g.expiry.After(now) {
			continue
		}
		if a, ok := row.admits[tok]; ok && bytes.Equal(a.holder, w.token) && a.epoch == g.epoch {
			continue
		}
		vals = append(vals, hbase.Value{Family: fam, Qualifier: append(append([]byte{}, admitPrefix...), tok...), Value: admitValue{holder: w.token, epoch: g.epoch}.encode()})
	}
	if len(vals) > 0 {
		if err := w.s.c.Put(ctx, w.s.tables[storage.TableMeta], &hbase.Put{Row: leaseRow, Values: vals}); err != nil {
			w.s.cfg.Logger.Warn("hbasestore: admitting guests of the writer lease", "err", err)
		}
	}
}

// admitWait bounds how long a guest's Lock waits to be admitted: a
// holder admits at its next renewal (lease/6) once its unlocked
// operations have ended.
func (g *leaseGuest) admitWait() time.Duration { return g.lease }

// leaseGuest is a Store's registration as a guest of the writer lease.
type leaseGuest struct {
	s     *Store
	base  *Locker
	lease time.Duration
	now   func() time.Time
	token []byte
	name  string

	// mu protects the fields below, written by the loop and read by Lock.
	mu sync.Mutex
	// epoch is the registration's; validUntil its expiry as last written
	// (by the clock when sent); admitted: this epoch may write.
	epoch      uint32
	validUntil time.Time
	admitted   bool
	// why is what the last read found, for the error of a Lock that gave
	// up waiting.
	why string
}

// LeaseGuest registers this store as a guest of the writer lease of an
// index whose writers take turns and returns the Locker of its writes:
// per-name locks, taken once the lease's holder has admitted the guest
// (see the comment at the top of this file). The registration is deleted
// when the store closes.
func (l *Locker) LeaseGuest(ctx context.Context) (storage.Locker, error) {
	s := l.s
	if !s.hasLockFam || !bytes.Equal(s.lockFam, []byte(schema.LockFamily)) {
		return nil, fmt.Errorf("%w: hbasestore: the writer lease lives in the meta table's lock family %q, which this namespace's index does not use", storage.ErrStore, schema.LockFamily)
	}
	s.mu.Lock()
	g := s.guest
	first := g == nil
	if first {
		token, name, err := ownerID()
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		g = &leaseGuest{s: s, base: l, lease: l.lease, now: l.now, token: token, name: name}
		s.guest = g
	}
	s.mu.Unlock()
	if !first {
		return g, nil
	}
	if err := s.startLoop(ctx, g.step, g.run); err != nil {
		return nil, err
	}
	return g, nil
}

// Lock waits (up to a lease, and ctx) until the guest may write, then
// takes the per-name locks.
func (g *leaseGuest) Lock(ctx context.Context, names []uint64) (func(), error) {
	if err := g.s.check(ctx); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(g.admitWait())
	for {
		g.mu.Lock()
		ok := g.admitted && g.now().Add(g.lease/2).Before(g.validUntil)
		why := g.why
		g.mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return nil, &storage.NotWriterError{Reason: fmt.Sprintf("hbasestore: not admitted as a guest of the writer lease of namespace %s within %v: %s", g.s.cfg.Namespace, g.admitWait(), why)}
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-g.s.closing:
			t.Stop()
			return nil, fmt.Errorf("%w: hbasestore: closed", storage.ErrStore)
		case <-t.C:
		}
	}
	if len(names) == 0 {
		return func() {}, nil
	}
	return g.base.Lock(ctx, names)
}

// run renews the registration every lease/6 (every 200 ms while not yet
// admitted) until the store closes; then it deletes it.
func (g *leaseGuest) run(ctx context.Context) {
	g.s.repeat(ctx, func() time.Duration {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.admitted {
			return g.lease / 6
		}
		return min(g.lease/6, 200*time.Millisecond)
	}, g.step, g.unregister)
}

// step renews the registration (a new epoch when the last one lapsed) and,
// not yet admitted, reads the row for an admission.
func (g *leaseGuest) step(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, g.lease/6)
	defer cancel()
	g.mu.Lock()
	if g.now().Add(g.lease / 2).After(g.validUntil) {
		// Lapsed (or never written): the holder may have dropped it, so
		// whatever it admitted before no longer counts.
		if g.admitted || !g.validUntil.IsZero() {
			g.epoch++
		}
		g.admitted = false
	}
	epoch := g.epoch
	g.mu.Unlock()
	sent := g.now()
	fam := []byte(schema.LockFamily)
	v := guestValue{expiry: sent.Add(g.lease), epoch: epoch, name: g.name}.encode()
	if err := g.s.c.Put(actx, g.s.tables[storage.TableMeta], &hbase.Put{Row: leaseRow, Values: []hbase.Value{{Family: fam, Qualifier: append(append([]byte{}, guestPrefix...), g.token...), Value: v}}}); err != nil {
		g.s.cfg.Logger.Warn("hbasestore: renewing the registration as a guest of the writer lease", "err", err)
		return
	}
	g.mu.Lock()
	g.validUntil = sent.Add(g.lease)
	admitted := g.admitted
	g.mu.Unlock()
	if admitted {
		return
	}
	row, err := g.s.readLeaseRow(actx)
	if err != nil {
		g.mu.Lock()
		g.why = err.Error()
		g.mu.Unlock()
		return
	}
	why := ""
	lv, held := parseLeaseValue(row.lease)
	switch {
	case !held:
		// Free: whoever takes it reads this registration before writing.
	case lv.expiry.Before(g.now()):
		// Expired: likewise for whoever takes it over, or renews it.
	default:
		if a, ok := row.admits[string(g.token)]; !ok || !bytes.Equal(a.holder, lv.token) || a.epoch != epoch {
			why = fmt.Sprintf("%s holds the lease and has not admitted this guest yet", lv.name)
		}
	}
	g.mu.Lock()
	if why == "" && g.epoch == epoch {
		if !g.admitted {
			g.s.cfg.Logger.Info("hbasestore: admitted as a guest of the writer lease", "namespace", g.s.cfg.Namespace)
		}
		g.admitted = true
	}
	g.why = why
	g.mu.Unlock()
}

// unregister deletes the registration and its admission.
func (g *leaseGuest) unregister(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, releaseAttempt)
	defer cancel()
	fam := []byte(schema.LockFamily)
	err := g.s.c.Delete(actx, g.s.tables[storage.TableMeta], &hbase.Delete{Row: leaseRow, Targets: []hbase.DeleteTarget{
		{Family: fam, Qualifier: append(append([]byte{}, guestPrefix...), g.token...)},
		{Family: fam, Qualifier: append(append([]byte{}, admitPrefix...), g.token...)},
	}})
	if err != nil {
		g.s.cfg.Logger.Warn("hbasestore: deleting the registration as a guest of the writer lease failed; it will expire", "err", err)
	}
}
