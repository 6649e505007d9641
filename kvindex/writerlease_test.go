package kvindex_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// leaser is a memLocker that can also hand out a writer lease: while
// held is false its lease Locker refuses like a process that does not
// hold the lease.
type leaser struct {
	memLocker
	mu         sync.Mutex
	held       bool
	leaseCalls int
	asked      int
	guests     int
}

// LeaseGuest hands out the per-name locks, counting the asks.
func (l *leaser) LeaseGuest(ctx context.Context) (storage.Locker, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.guests++
	return &l.memLocker, nil
}

func (l *leaser) WriterLease(ctx context.Context) (storage.Locker, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked++
	return leaseLocker{l}, nil
}

type leaseLocker struct{ l *leaser }

func (ll leaseLocker) Lock(ctx context.Context, names []uint64) (func(), error) {
	ll.l.mu.Lock()
	defer ll.l.mu.Unlock()
	if !ll.l.held {
		return nil, fmt.Errorf("%w (%w): another process holds the writer lease", storage.ErrStore, storage.ErrNotWriter)
	}
	ll.l.leaseCalls++
	return func() {}, nil
}

func (l *leaser) counts() (lease, perName, asked int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.memLocker.mu.Lock()
	defer l.memLocker.mu.Unlock()
	return l.leaseCalls, len(l.memLocker.calls), l.asked
}

// TestWriterLease: an index created with Config.WriterLease records
// format 10 and writes under the Locker's writer lease alone (no
// per-operation lock); without the lease its writes fail as the store
// being unavailable while its reads go on; the index decides for
// processes opened after, SetWriterLease switches it, and the mismatches
// are refused.
func TestWriterLease(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lk := &leaser{memLocker: memLocker{names: map[uint64]*sync.Mutex{}}, held: true}
	ix := openAt(t, dir, kvindex.Config{WriterLease: true, Locker: lk}, true)
	if m, ok, err := kvindex.ReadMeta(ctx, ix.Store()); err != nil || !ok || m.Format != kvindex.FormatWriterLease || !ix.WriterLease() {
		t.Fatalf("new index with a writer lease: format %d (%v %v), WriterLease %v", m.Format, ok, err, ix.WriterLease())
	}
	if r := mustInsert(t, ix, doc("a", 0xf0f0, t0), kvindex.InsertIfUnique); !r.Stored {
		t.Fatalf("first insert: %+v", r)
	}
	if r := mustInsert(t, ix, doc("b", 0xf0f1, t0), kvindex.InsertIfUnique); r.Stored || len(r.Duplicates) != 1 || r.Original == nil || r.Original.ID != "a" {
		t.Fatalf("near-duplicate: %+v", r)
	}
	lease, perName, asked := lk.counts()
	if lease < 2 || perName != 0 || asked != 1 {
		t.Fatalf("lease Locks %d, per-name Locks %d, leases asked for %d; want >= 2, 0, 1", lease, perName, asked)
	}

	if err := ix.Writable(ctx); err != nil {
		t.Fatalf("Writable while holding the lease: %v", err)
	}
	lk.mu.Lock()
	lk.held = false
	lk.mu.Unlock()
	if err := ix.Writable(ctx); !errors.Is(err, storage.ErrNotWriter) {
		t.Fatalf("Writable without the lease: %v, want ErrNotWriter", err)
	}
	_, err := ix.Insert(ctx, doc("c", 0x0ff0_0000, t0), kvindex.InsertIfUnique, 3)
	if !errors.Is(err, storage.ErrStore) || !errors.Is(err, storage.ErrNotWriter) {
		t.Fatalf("insert without the lease: %v, want ErrStore and ErrNotWriter", err)
	}
	if err := ix.Delete(ctx, "a"); !errors.Is(err, storage.ErrNotWriter) {
		t.Fatalf("delete without the lease: %v, want ErrNotWriter", err)
	}
	if res, err := ix.Lookup(ctx, 0xf0f0, kvindex.LookupOptions{}); err != nil || len(res.Hits) != 1 {
		t.Fatalf("lookup without the lease: %+v (%v)", res, err)
	}
	ix.Close()

	// A process opened without the setting follows the index; one with a
	// Locker that cannot hold a lease is refused.
	ix = openAt(t, dir, kvindex.Config{Locker: lk}, true)
	if !ix.WriterLease() {
		t.Fatal("reopened without the setting: the index's writer lease was not kept")
	}
	// Opening (a bulk load, a reader) does not contend for the lease; the
	// first write, or Writable, does.
	if _, _, n := lk.counts(); n != 1 {
		t.Fatalf("opening the index asked for the lease (%d times in all)", n)
	}
	if err := ix.Writable(ctx); !errors.Is(err, storage.ErrNotWriter) {
		t.Fatalf("Writable of the reopened index without the lease: %v", err)
	}
	if _, _, n := lk.counts(); n != 2 {
		t.Fatalf("Writable: leases asked for %d times in all, want 2", n)
	}
	ix.Close()

	// A guest (a bulk load) writes with per-name locks, without the lease
	// and without contending for it.
	ix = openAt(t, dir, kvindex.Config{Locker: lk, LeaseGuest: true}, true)
	if r := mustInsert(t, ix, doc("g", 0x00ff_0000, t0), kvindex.InsertIfUnique); !r.Stored {
		t.Fatalf("a guest's insert without the lease: %+v", r)
	}
	_, perName, asked = lk.counts()
	lk.mu.Lock()
	guests := lk.guests
	lk.mu.Unlock()
	if perName == 0 || asked != 2 || guests != 1 {
		t.Fatalf("a guest: per-name Locks %d, leases asked for %d, guest registrations %d; want > 0, 2, 1", perName, asked, guests)
	}
	ix.Close()
	if _, err := openPebbleIndex(t, dir, pebblestore.Options{NoSync: true}, kvindex.Config{Locker: &memLocker{names: map[uint64]*sync.Mutex{}}}); !errors.Is(err, kvindex.ErrMetaMismatch) {
		t.Fatalf("a Locker without a writer lease opened a format-10 index: %v", err)
	}

	// Switched off, the index is of format 9 again, writes take
	// per-operation locks, and a process asking for the lease is refused.
	st := openStore(t, dir)
	if from, to, err := kvindex.SetWriterLease(ctx, st, false); err != nil || from != kvindex.FormatWriterLease || to != kvindex.FormatVersion {
		t.Fatalf("SetWriterLease(off): %d -> %d, %v", from, to, err)
	}
	if from, to, err := kvindex.SetWriterLease(ctx, st, false); err != nil || from != to {
		t.Fatalf("SetWriterLease(off) again: %d -> %d, %v", from, to, err)
	}
	st.Close()
	if _, err := openPebbleIndex(t, dir, pebblestore.Options{NoSync: true}, kvindex.Config{WriterLease: true, Locker: lk}); !errors.Is(err, kvindex.ErrMetaMismatch) {
		t.Fatalf("WriterLease on an index whose writers share: %v, want ErrMetaMismatch", err)
	}
	ix = openAt(t, dir, kvindex.Config{Locker: lk}, true)
	if ix.WriterLease() {
		t.Fatal("switched off, the index still reports a writer lease")
	}
	if r := mustInsert(t, ix, doc("c", 0x0ff0_0000, t0), kvindex.InsertIfUnique); !r.Stored {
		t.Fatalf("insert with per-name locks: %+v", r)
	}
	if _, perName, _ := lk.counts(); perName == 0 {
		t.Fatal("format 9: no per-operation lock taken")
	}
	ix.Close()

	// An index older than 9 cannot be switched.
	st = openStore(t, dir)
	defer st.Close()
	if err := st.Mutate(ctx, []storage.Mutation{{Kind: storage.Put, Table: storage.TableMeta, Row: []byte("simdex"), Qualifier: []byte("format"), Value: []byte("8")}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kvindex.SetWriterLease(ctx, st, true); !errors.Is(err, kvindex.ErrMetaMismatch) {
		t.Fatalf("SetWriterLease on format 8: %v, want ErrMetaMismatch", err)
	}
}
