package kvindex_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/kvindex/pebblestore"
)

// memLocker is a cross-"process" Locker for tests: one mutex per name,
// shared by several Index values over one store.
type memLocker struct {
	mu    sync.Mutex // protects names and calls
	names map[uint64]*sync.Mutex
	calls [][]uint64
}

func (l *memLocker) Lock(ctx context.Context, names []uint64) (func(), error) {
	l.mu.Lock()
	if !slices.IsSorted(names) {
		l.mu.Unlock()
		return nil, fmt.Errorf("names not sorted: %v", names)
	}
	l.calls = append(l.calls, slices.Clone(names))
	ms := make([]*sync.Mutex, len(names))
	for i, n := range names {
		if l.names[n] == nil {
			l.names[n] = &sync.Mutex{}
		}
		ms[i] = l.names[n]
	}
	l.mu.Unlock()
	for _, m := range ms {
		m.Lock()
	}
	return func() {
		for i := len(ms) - 1; i >= 0; i-- {
			ms[i].Unlock()
		}
	}, nil
}

// Two Index values over one store stand for two server processes: their
// in-process locks are separate, so only the shared Locker keeps
// insert-if-unique to exactly one original.
func TestSharedLockerAcrossIndexes(t *testing.T) {
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lk := &memLocker{names: map[uint64]*sync.Mutex{}}
	var ixs []*kvindex.Index
	for range 2 {
		ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: testRecipe, Locker: lk})
		if err != nil {
			t.Fatal(err)
		}
		ixs = append(ixs, ix)
	}
	defer ixs[0].Close()
	r := rand.New(rand.NewPCG(8, 8))
	for round := range 100 {
		base := fingerprint.Fingerprint(r.Uint64())
		docs := []kvindex.Document{doc(fmt.Sprintf("r%d-a", round), base, t0), doc(fmt.Sprintf("r%d-b", round), flip(r, base, 2), t0.Add(time.Second))}
		res := make([]kvindex.InsertResult, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i], errs[i] = ixs[i].Insert(bg, docs[i], kvindex.InsertIfUnique, 3)
			}()
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatal(errs)
		}
		if res[0].Stored == res[1].Stored {
			t.Fatalf("round %d: stored %v and %v; want exactly one", round, res[0].Stored, res[1].Stored)
		}
	}
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if len(lk.calls) < 400 {
		t.Fatalf("Locker called %d times for 200 inserts (want id and row locks each)", len(lk.calls))
	}
	for _, c := range lk.calls {
		kind := c[0] >> 16
		for _, n := range c {
			if n>>16 != kind {
				t.Fatalf("one Lock call mixes id and row names: %v", c)
			}
		}
	}
}
