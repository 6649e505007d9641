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
	"github.com/simdex/simdex/internal/indextest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// memLocker is a cross-"process" Locker for tests: one mutex per name,
// shared by several Index values over one store.
type memLocker struct {
	mu    sync.Mutex // protects names and calls
	names map[uint64]*sync.Mutex
	calls [][]uint64
}

// mutexesOf returns the mutex of each of names in m, making those it does
// not hold yet (the caller guards m).
func mutexesOf(m map[uint64]*sync.Mutex, names []uint64) []*sync.Mutex {
	ms := make([]*sync.Mutex, len(names))
	for i, n := range names {
		if m[n] == nil {
			m[n] = &sync.Mutex{}
		}
		ms[i] = m[n]
	}
	return ms
}

func (l *memLocker) Lock(ctx context.Context, names []uint64) (func(), error) {
	l.mu.Lock()
	if !slices.IsSorted(names) {
		l.mu.Unlock()
		return nil, fmt.Errorf("names not sorted: %v", names)
	}
	l.calls = append(l.calls, slices.Clone(names))
	ms := mutexesOf(l.names, names)
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
	st := openStore(t, t.TempDir())
	lk := &memLocker{names: map[uint64]*sync.Mutex{}}
	raceTwoIndexes(t, st, lk, 8)
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

// releasingLocker is a memLocker that is also a storage.ReleasingLocker:
// MutateAndRelease applies the writes to the store and then releases the
// named locks at once (the unlock functions skip what it released).
type releasingLocker struct {
	st storage.Store
	mu sync.Mutex // protects names, held, folds and folded
	// names is the mutex per lock name; held is the release of each name
	// held now (its unlock runs once, by MutateAndRelease or the unlock).
	names  map[uint64]*sync.Mutex
	held   map[uint64]*heldName
	folds  int // MutateAndRelease calls
	folded int // names released by them
}

// heldName is one held lock name's release (idempotent).
type heldName struct{ release func() }

func (l *releasingLocker) Lock(ctx context.Context, names []uint64) (func(), error) {
	l.mu.Lock()
	ms := mutexesOf(l.names, names)
	l.mu.Unlock()
	rels := make([]*heldName, len(names))
	for i, m := range ms {
		m.Lock()
		rels[i] = &heldName{release: sync.OnceFunc(m.Unlock)}
	}
	l.mu.Lock()
	for i, n := range names {
		l.held[n] = rels[i]
	}
	l.mu.Unlock()
	return func() {
		for i := len(rels) - 1; i >= 0; i-- {
			l.mu.Lock()
			if l.held[names[i]] == rels[i] {
				delete(l.held, names[i])
			}
			l.mu.Unlock()
			rels[i].release()
		}
	}, nil
}

func (l *releasingLocker) MutateAndRelease(ctx context.Context, muts []storage.Mutation, names []uint64) error {
	if err := l.st.Mutate(ctx, muts); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.folds++
	for _, n := range names {
		if rel := l.held[n]; rel != nil {
			delete(l.held, n)
			l.folded++
			rel.release()
		}
	}
	return nil
}

// With a ReleasingLocker the locks are released with the last writes, and
// two Index values over one store (two processes) still store exactly one
// of two near-duplicates inserted at once.
func TestReleasingLockerAcrossIndexes(t *testing.T) {
	st := openStore(t, t.TempDir())
	lk := &releasingLocker{st: st, names: map[uint64]*sync.Mutex{}, held: map[uint64]*heldName{}}
	raceTwoIndexes(t, st, lk, 9)
	lk.mu.Lock()
	defer lk.mu.Unlock()
	// 100 stored documents: each insert that stored released its 1 id and
	// T=4 row names with its writes.
	if lk.folds < 100 || lk.folded < 500 {
		t.Fatalf("%d MutateAndRelease calls releasing %d names; want >= 100 and >= 500", lk.folds, lk.folded)
	}
	if len(lk.held) != 0 {
		t.Fatalf("%d names still held after every insert returned", len(lk.held))
	}
}

// raceTwoIndexes opens two Index values over st sharing lk (two server
// processes) and, for 100 rounds, inserts two near-duplicates at once
// with insert-if-unique, one through each: exactly one must be stored.
func raceTwoIndexes(t *testing.T, st storage.Store, lk storage.Locker, seed uint64) {
	t.Helper()
	var ixs []*kvindex.Index
	for range 2 {
		ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: testRecipe, Locker: lk})
		if err != nil {
			t.Fatal(err)
		}
		ixs = append(ixs, ix)
	}
	defer ixs[0].Close()
	indextest.RaceInsertIfUnique(t, ixs[0], ixs[1], 100, seed)
}

// TestLockNameBounds: the bounds cut the names that insert-if-unique
// really locks into ranges of about equal use (a store that keeps locks in
// ranges, HBase's pre-split meta table, gets its lock work spread evenly).
func TestLockNameBounds(t *testing.T) {
	if b := kvindex.LockNameBounds(1); b != nil {
		t.Fatalf("1 range: bounds %x", b)
	}
	st := openStore(t, t.TempDir())
	lk := &memLocker{names: map[uint64]*sync.Mutex{}}
	ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: testRecipe, Locker: lk})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		d := kvindex.Document{ID: fmt.Sprint("n", i), Fingerprint: fingerprint.Fingerprint(r.Uint64()), Time: time.Unix(1e9, 0)}
		if _, err := ix.Insert(bg, d, kvindex.InsertIfUnique, 3); err != nil {
			t.Fatal(err)
		}
	}
	lk.mu.Lock()
	defer lk.mu.Unlock()
	for _, n := range []int{2, 3, 8, 16} {
		bounds := kvindex.LockNameBounds(n)
		if len(bounds) != n-1 || !slices.IsSorted(bounds) || len(slices.Compact(slices.Clone(bounds))) != n-1 {
			t.Fatalf("%d ranges: bounds %x", n, bounds)
		}
		per := make([]int, n)
		total := 0
		for _, c := range lk.calls {
			for _, name := range c {
				i, found := slices.BinarySearch(bounds, name)
				if found {
					i++
				}
				per[i]++
				total++
			}
		}
		mean := total / n
		t.Logf("%d ranges: %v", n, per)
		for i, k := range per {
			if k < mean*3/4 || k > mean*5/4 {
				t.Fatalf("%d ranges: range %d holds %d of %d lock names (mean %d): %v", n, i, k, total, mean, per)
			}
		}
	}
}
