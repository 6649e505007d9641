package hbasestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/kvindex"
)

// TestLeaseTakeoverAndRelease: a lock is exclusive while its lease runs; an
// expired lease is taken over; the old owner's release does not free the
// new owner's lock.
func TestLeaseTakeoverAndRelease(t *testing.T) {
	zk := hbasetest.ZK(t)
	ctx := context.Background()
	ns := fmt.Sprintf("lease%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	s, err := Open(ctx, Config{ZooKeeper: []string{zk}, Namespace: ns, CreateTables: true, Compression: "NONE"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := Drop(ctx, s.Client(), ns); err != nil {
			t.Log(err)
		}
		s.Close()
	}()
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
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, kvindex.ErrStore) {
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
