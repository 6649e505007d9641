package hbasestore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/storage"
)

// heldLockCells counts the names whose lock cell holds a lease (a value
// that is not empty), read with HBase's own Get from the store's lock
// family.
func heldLockCells(t *testing.T, s *Store, names []uint64) int {
	t.Helper()
	n := 0
	for _, name := range names {
		r, err := s.Client().Get(context.Background(), s.tables[storage.TableMeta], &hbase.Get{Row: lockRow(name), Columns: []hbase.Column{{Family: s.lockFam}}})
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := r.Value(string(s.lockFam), string(lockQualifier)); ok && len(v) > 0 {
			n++
		}
	}
	return n
}

// openPrivate opens a store on a fresh namespace of the test HBase (named
// after prefix, the process and the clock, so parallel runs never share
// one) and drops the namespace when the test ends.
func openPrivate(t *testing.T, prefix string) *Store {
	t.Helper()
	zk := hbasetest.ZK(t)
	ctx := context.Background()
	ns := hbasetest.Namespace(prefix)
	s, err := Open(ctx, Config{ZooKeeper: []string{zk}, Namespace: ns, CreateTables: true, Compression: "NONE"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Drop(ctx, s.Client(), ns); err != nil {
			t.Log(err)
		}
		s.Close()
	})
	return s
}

// TestLeaseTakeoverAndRelease: a lock is exclusive while its lease runs; an
// expired lease is taken over; the old owner's release does not free the
// new owner's lock.
func TestLeaseTakeoverAndRelease(t *testing.T) {
	ctx := context.Background()
	s := openPrivate(t, "lease")
	names := []uint64{1<<16 | 7, 2<<16 | 9}
	held := func(within time.Duration) bool {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		unlock, err := s.Locker().Lock(c, names[:1])
		if err == nil {
			unlock()
			return false
		}
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, storage.ErrStore) {
			t.Fatalf("Lock on a held lock: %v, want ErrStore and DeadlineExceeded", err)
		}
		return true
	}

	unlock1, err := s.Locker().Lock(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	if !held(300 * time.Millisecond) {
		t.Fatal("a second owner took a lock whose lease runs")
	}
	unlock1()
	if held(2 * time.Second) {
		t.Fatal("lock still held after release")
	}

	// An owner whose clock says its lease has already run out.
	old := s.Locker()
	old.now = func() time.Time { return time.Now().Add(-time.Hour) }
	unlockOld, err := old.Lock(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	unlockNew, err := s.Locker().Lock(c, names)
	cancel()
	if err != nil {
		t.Fatalf("expired lease not taken over: %v", err)
	}
	unlockOld() // must not free the new owner's locks
	if !held(300 * time.Millisecond) {
		t.Fatal("the expired owner's release freed the new owner's lock")
	}
	unlockNew()
	if held(2 * time.Second) {
		t.Fatal("lock still held after the new owner's release")
	}
}

// TestMutateAndRelease: the locks are released in the request of the last
// writes when those are meta counter updates (the cells are gone before the
// unlock function runs, the writes are all applied, and the unlock then has
// nothing left to do); without a meta write at the end the locks stay held
// until the unlock function releases them.
func TestMutateAndRelease(t *testing.T) {
	ctx := context.Background()
	s := openPrivate(t, "fold")
	names := []uint64{1<<16 | 3, 2<<16 | 5, 2<<16 | 6}
	lockCells := func() int {
		t.Helper()
		return heldLockCells(t, s, names)
	}
	counter := []byte("ctr")
	for _, tc := range []struct {
		name     string
		withMeta bool
	}{{"counters last: folded", true}, {"no meta write: released by unlock", false}} {
		t.Run(tc.name, func(t *testing.T) {
			l := s.Locker()
			unlock, err := l.Lock(ctx, names)
			if err != nil {
				t.Fatal(err)
			}
			if got := lockCells(); got != len(names) {
				t.Fatalf("%d lock cells after Lock, want %d", got, len(names))
			}
			doc := []byte("doc-" + tc.name)
			muts := []storage.Mutation{{Kind: storage.Put, Table: storage.TableDocs, Row: doc, Qualifier: []byte("d"), Value: []byte("v")}}
			if tc.withMeta {
				muts = append(muts, storage.Mutation{Kind: storage.Add, Table: storage.TableMeta, Row: counter, Qualifier: []byte("n"), Delta: 2})
			}
			if err := l.MutateAndRelease(ctx, muts, names); err != nil {
				t.Fatal(err)
			}
			want := 0
			if !tc.withMeta {
				want = len(names)
			}
			if got := lockCells(); got != want {
				t.Fatalf("%d lock cells after MutateAndRelease, want %d", got, want)
			}
			rows, err := s.Get(ctx, []storage.RowKey{{Table: storage.TableDocs, Key: doc}, {Table: storage.TableMeta, Key: counter}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows[0].Cells) != 1 || tc.withMeta && (len(rows[1].Cells) != 1 || be64(rows[1].Cells[0].Value) != 2) {
				t.Fatalf("writes not applied: %+v", rows)
			}
			unlock()
			deadline := time.Now().Add(5 * time.Second)
			for lockCells() != 0 {
				if time.Now().After(deadline) {
					t.Fatal("lock cells left after unlock")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if tc.withMeta {
				if n := len(l.held); n != 0 {
					t.Fatalf("%d names still registered as held", n)
				}
			}
		})
	}
}
