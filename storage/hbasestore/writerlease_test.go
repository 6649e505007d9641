package hbasestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/schema"
	"github.com/simdex/simdex/storage"
)

// TestWriterLease: on a real HBase, the writer lease is held by one store
// at a time; the others' Locks fail at once naming the holder; a lease
// left by a crashed holder is taken over once it expires, one given back
// by a closing holder within a second or two; the holder keeps it past
// its length by renewing.
func TestWriterLease(t *testing.T) {
	ctx := context.Background()
	first := openPrivate(t, "wlease")
	ns := first.cfg.Namespace
	open := func() *Store { return openLeaseStore(t, ns) }
	lease := func(s *Store) storage.Locker {
		t.Helper()
		l, err := s.Locker().WriterLease(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	lockErr := func(l storage.Locker) error {
		unlock, err := l.Lock(ctx, []uint64{1, 2})
		if err == nil {
			unlock()
		}
		return err
	}
	wait := func(what string, l storage.Locker, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			err := lockErr(l)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v: %v", what, within, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// A lease left by a holder that crashed, expiring in 2 s.
	v := leaseValue{token: bytes.Repeat([]byte{7}, 16), expiry: time.Now().Add(2 * time.Second), name: "crashed:1"}.encode()
	fam := []byte(schema.LockFamily)
	if err := first.Client().Put(ctx, first.tables[storage.TableMeta], &hbase.Put{Row: leaseRow, Values: []hbase.Value{{Family: fam, Qualifier: lockQualifier, Value: v}}}); err != nil {
		t.Fatal(err)
	}
	a := open()
	la := lease(a)
	err := lockErr(la)
	if !errors.Is(err, storage.ErrStore) || !errors.Is(err, storage.ErrNotWriter) || !strings.Contains(err.Error(), "crashed:1") {
		t.Fatalf("Lock while a crashed holder's lease runs: %v, want ErrStore, ErrNotWriter and the holder's name", err)
	}
	wait("the crashed holder's lease taken over", la, 6*time.Second)

	// Held by a: b is refused, and stays refused past the lease's length
	// while a renews.
	b := open()
	lb := lease(b)
	time.Sleep(3 * time.Second)
	if err := lockErr(la); err != nil {
		t.Fatalf("the holder's Lock after more than a lease's length: %v (not renewed?)", err)
	}
	if err := lockErr(lb); !errors.Is(err, storage.ErrNotWriter) {
		t.Fatalf("a second store's Lock while the first holds the lease: %v, want ErrNotWriter", err)
	}
	if again, err := b.Locker().WriterLease(ctx); err != nil || again != lb {
		t.Fatalf("WriterLease a second time: %v, %v; want the same Locker", again, err)
	}

	// a closes: it gives the lease back, and b takes it within a couple of
	// its polls, well before a's expiry would have passed.
	a.Close()
	wait("the lease taken after its holder closed", lb, 1500*time.Millisecond)
	r, err := b.Client().Get(ctx, b.tables[storage.TableMeta], &hbase.Get{Row: leaseRow, Columns: []hbase.Column{{Family: fam}}})
	if err != nil {
		t.Fatal(err)
	}
	if cur, _ := r.Value(schema.LockFamily, string(lockQualifier)); len(cur) < 24 || !bytes.Equal(cur[:16], b.lease.token) {
		t.Fatalf("lease cell %x, want b's token %x", cur, b.lease.token)
	}
}

// FuzzLeaseValue: a writer lease value decodes to what was encoded (the
// expiry to the millisecond, the name without 0x00 bytes, the URL whole),
// and any cell value decodes without panic; one shorter than a token and
// an expiry is not a lease. A value of the lease's first layout (no URL)
// decodes with no URL.
func FuzzLeaseValue(f *testing.F) {
	f.Add(bytes.Repeat([]byte{1}, 16), int64(1_800_000_000_000), "host:1", "http://10.0.0.5:8080")
	f.Add(bytes.Repeat([]byte{1}, 16), int64(1_800_000_000_000), "host:1", "")
	f.Add([]byte{}, int64(0), "", "")
	f.Fuzz(func(t *testing.T, token []byte, ms int64, name, url string) {
		if _, ok := parseLeaseValue(token); ok != (len(token) >= 24) {
			t.Fatalf("parseLeaseValue of %d bytes: ok %v", len(token), ok)
		}
		if len(token) != 16 {
			return
		}
		in := leaseValue{token: token, expiry: time.UnixMilli(ms), name: name, url: url}
		v := in.encode()
		out, ok := parseLeaseValue(v)
		if !ok || !bytes.Equal(out.token, token) || !out.expiry.Equal(in.expiry) || out.name != strings.ReplaceAll(name, "\x00", "") || out.url != url {
			t.Fatalf("round trip of %+v: %+v %v", in, out, ok)
		}
		if url == "" {
			first := binary.BigEndian.AppendUint64(append([]byte{}, token...), uint64(ms))
			if first = append(first, out.name...); !bytes.Equal(v, first) {
				t.Fatalf("value without a URL %x, want the first layout %x", v, first)
			}
		}
	})
}

// TestWriterLeaseGuest: on a real HBase, a guest of the writer lease (a
// bulk load) is admitted without taking the lease: at once while the
// lease is free, by the holder once the holder's operations begun without
// per-name locks have ended; while it is registered the holder takes the
// per-name locks too (a name the guest holds holds the holder's operation
// back), and once it leaves the holder takes none again. The holder keeps
// the lease throughout.
func TestWriterLeaseGuest(t *testing.T) {
	ctx := context.Background()
	first := openPrivate(t, "wguest")
	ns := first.cfg.Namespace
	open := func() *Store { return openLeaseStore(t, ns) }
	lockWithin := func(l storage.Locker, names []uint64, d time.Duration) (func(), error) {
		lctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return l.Lock(lctx, names)
	}

	// No holder: a guest is admitted at once.
	g0 := open()
	l0, err := g0.Locker().LeaseGuest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := lockWithin(l0, []uint64{9}, time.Second)
	if err != nil {
		t.Fatalf("a guest while the lease is free: %v", err)
	}
	unlock()
	g0.Close()

	a := open()
	la, err := a.Locker().WriterLease(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := lockWithin(la, []uint64{5}, time.Second); err != nil {
		t.Fatalf("the holder, no guest: %v", err)
	} else {
		u()
	}
	w := a.lease
	if w.guestMode.Load() {
		t.Fatal("the holder is in guest mode after the only guest left")
	}

	// An operation of the holder's without per-name locks under way holds
	// the guest's admission back until it ends.
	bare, err := lockWithin(la, []uint64{5}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	g := open()
	lg, err := g.Locker().LeaseGuest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type lockRes struct {
		unlock func()
		err    error
		at     time.Time
	}
	got := make(chan lockRes, 1)
	go func() {
		u, err := lockWithin(lg, []uint64{5}, 10*time.Second)
		got <- lockRes{u, err, time.Now()}
	}()
	time.Sleep(1500 * time.Millisecond) // several of the holder's steps
	released := time.Now()
	bare()
	r := <-got
	if r.err != nil {
		t.Fatalf("the guest's Lock: %v", r.err)
	}
	if r.at.Before(released) {
		t.Fatal("the guest was admitted while an operation of the holder's without per-name locks was under way")
	}
	if !w.guestMode.Load() {
		t.Fatal("the guest was admitted but the holder is not in guest mode")
	}

	// While the guest holds name 5, the holder's operation on it waits;
	// on another name it goes ahead.
	if u, err := lockWithin(la, []uint64{5}, 300*time.Millisecond); err == nil {
		u()
		t.Fatal("the holder locked a name the guest holds")
	}
	if u, err := lockWithin(la, []uint64{6}, time.Second); err != nil {
		t.Fatalf("the holder, another name, guest registered: %v", err)
	} else {
		u()
	}
	r.unlock()
	if u, err := lockWithin(la, []uint64{5}, 2*time.Second); err != nil {
		t.Fatalf("the holder, after the guest released the name: %v", err)
	} else {
		u()
	}

	// The guest leaves: the holder takes no per-name locks again, and the
	// guest's cells are gone.
	g.Close()
	deadline := time.Now().Add(3 * time.Second)
	for w.guestMode.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the holder stayed in guest mode after the guest left")
		}
		time.Sleep(50 * time.Millisecond)
	}
	row, err := a.readLeaseRow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(row.guests) != 0 || len(row.admits) != 0 {
		t.Fatalf("cells left after the guests left: %d registrations, %d admissions", len(row.guests), len(row.admits))
	}
	if lv, ok := parseLeaseValue(row.lease); !ok || !bytes.Equal(lv.token, w.token) {
		t.Fatal("the holder lost the lease while a guest wrote")
	}
}

// FuzzGuestCells: a guest's registration and a holder's admission decode
// to what was encoded, and any value decodes without panic.
func FuzzGuestCells(f *testing.F) {
	f.Add(int64(1_800_000_000_000), uint32(3), "host:1", bytes.Repeat([]byte{2}, 16))
	f.Add(int64(0), uint32(0), "", []byte{})
	f.Fuzz(func(t *testing.T, ms int64, epoch uint32, name string, holder []byte) {
		parseGuestValue(holder)
		parseAdmitValue(holder)
		g := guestValue{expiry: time.UnixMilli(ms), epoch: epoch, name: name}
		if out, ok := parseGuestValue(g.encode()); !ok || !out.expiry.Equal(g.expiry) || out.epoch != epoch || out.name != name {
			t.Fatalf("registration round trip of %+v: %+v %v", g, out, ok)
		}
		if len(holder) != 16 {
			return
		}
		a := admitValue{holder: holder, epoch: epoch}
		if out, ok := parseAdmitValue(a.encode()); !ok || !bytes.Equal(out.holder, holder) || out.epoch != epoch {
			t.Fatalf("admission round trip of %+v: %+v %v", a, out, ok)
		}
	})
}

// openLeaseStore opens another store on namespace ns with a 2 s lease and
// its locks in the lock family, closed when the test ends.
func openLeaseStore(t *testing.T, ns string) *Store {
	t.Helper()
	s, err := Open(context.Background(), Config{ZooKeeper: []string{hbasetest.ZK(t)}, Namespace: ns, LockLease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Locker().Separate(true); err != nil {
		t.Fatal(err)
	}
	return s
}
