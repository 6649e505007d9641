package hbasestore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/internal/schematest"
	"github.com/simdex/simdex/schema"
	"github.com/simdex/simdex/storage"
)

// TestLockFamily: locks live in the meta table's lock family when the
// namespace has it (released by an empty value, which is free to the next
// taker) and in the data family of a namespace created without it
// (released by a delete, as older binaries do); either way a held lock is
// exclusive and a released one can be taken again.
func TestLockFamily(t *testing.T) {
	ctx := context.Background()
	names := []uint64{1<<16 | 11, 2<<16 | 12, 2<<16 | 13}
	cell := func(t *testing.T, s *Store, fam []byte, name uint64) ([]byte, bool) {
		t.Helper()
		r, err := s.Client().Get(ctx, s.tables[storage.TableMeta], &hbase.Get{Row: lockRow(name), Columns: []hbase.Column{{Family: fam}}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Value(string(fam), string(lockQualifier))
	}
	exclusive := func(t *testing.T, s *Store) {
		t.Helper()
		unlock, err := s.Locker().Lock(ctx, names)
		if err != nil {
			t.Fatal(err)
		}
		if got := heldLockCells(t, s, names); got != len(names) {
			t.Fatalf("%d of %d lock cells hold a lease", got, len(names))
		}
		c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = s.Locker().Lock(c, names[1:2])
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("second Lock of a held name: %v, want a timeout", err)
		}
		released := func() {
			unlock()
			deadline := time.Now().Add(5 * time.Second)
			for heldLockCells(t, s, names) != 0 {
				if time.Now().After(deadline) {
					t.Fatal("lock cells still held after unlock")
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		released()
		c, cancel = context.WithTimeout(ctx, 5*time.Second)
		unlock, err = s.Locker().Lock(c, names)
		cancel()
		if err != nil {
			t.Fatalf("Lock of released names: %v", err)
		}
		released()
	}

	t.Run("lock family", func(t *testing.T) {
		s := openPrivate(t, "lockfam")
		if string(s.lockFam) != schema.LockFamily {
			t.Fatalf("lock family %q, want %q", s.lockFam, schema.LockFamily)
		}
		exclusive(t, s)
		for _, n := range names {
			if v, ok := cell(t, s, s.lockFam, n); !ok || len(v) != 0 {
				t.Fatalf("released lock %x: cell %q (present %v), want an empty value", n, v, ok)
			}
			if v, ok := cell(t, s, s.fam, n); ok {
				t.Fatalf("lock %x has a cell %q in the data family", n, v)
			}
		}
	})

	t.Run("index of format 8 beside it", func(t *testing.T) {
		// An index whose writers may include binaries that lock in the data
		// family keeps its locks there, lock family or not.
		s := openPrivate(t, "lockfam8")
		if err := s.Locker().Separate(false); err != nil {
			t.Fatal(err)
		}
		exclusive(t, s)
		for _, n := range names {
			if v, ok := cell(t, s, []byte(schema.LockFamily), n); ok {
				t.Fatalf("lock %x has a cell %q in the lock family", n, v)
			}
		}
	})

	t.Run("namespace without it", func(t *testing.T) {
		zk := hbasetest.ZK(t)
		ns := hbasetest.Namespace("lockold")
		c, err := hbase.New(hbase.Config{ZooKeeper: []string{zk}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := Drop(ctx, c, ns); err != nil {
				t.Log(err)
			}
			c.Close()
		})
		// The schema of a namespace created before the lock family.
		schematest.CreateBeforeLockFamily(ctx, t, c, ns)
		s, err := Open(ctx, Config{ZooKeeper: []string{zk}, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if string(s.lockFam) != string(s.fam) {
			t.Fatalf("lock family %q, want the data family %q", s.lockFam, s.fam)
		}
		if err := s.Locker().Separate(true); err == nil || !errors.Is(err, storage.ErrStore) {
			t.Fatalf("Separate(true) without the lock family: %v, want ErrStore", err)
		}
		exclusive(t, s)
		for _, n := range names {
			if v, ok := cell(t, s, s.fam, n); ok {
				t.Fatalf("released lock %x: cell %q left, want it deleted", n, v)
			}
		}
	})
}
