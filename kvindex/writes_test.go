package kvindex_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// Which rows an insert locks, by mode: InsertAlways locks the ids and the
// index rows (of the new and the replaced fingerprint), InsertIfUnique
// the band and text-key rows too.
func TestInsertModeLockedRows(t *testing.T) {
	for _, tc := range []struct {
		mode             kvindex.InsertMode
		minRows, maxRows int // row names of the second document's row lock call
	}{
		{kvindex.InsertAlways, 1, 8},
		{kvindex.InsertIfUnique, 2 * fingerprint.NumBands, 2*fingerprint.NumBands + 8},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			lk := &memLocker{names: map[uint64]*sync.Mutex{}}
			ix := openAt(t, t.TempDir(), kvindex.Config{Locker: lk, Confirm: kvindex.ConfirmEach(jaccardConfirm)}, false)
			a := kvindex.Document{ID: "a", Fingerprint: 0x0123456789ABCDEF, Time: t0, Sketch: nearSketch, Chars: 900, Bands: bandsFrom(1, nil)}
			mustInsert(t, ix, a, tc.mode)
			// The same id again with another fingerprint and bands: the
			// replaced version's rows are locked too.
			a2 := a
			a2.Fingerprint, a2.Bands, a2.Time = ^a.Fingerprint, bandsFrom(2, nil), t0.Add(time.Second)
			if r := mustInsert(t, ix, a2, tc.mode); !r.Stored || !r.Replaced {
				t.Fatalf("re-insert: %+v, want stored and replaced", r)
			}
			lk.mu.Lock()
			defer lk.mu.Unlock()
			var rowCalls [][]uint64
			for _, c := range lk.calls {
				if c[0]>>16 == 2 { // row names (ids are kind 1)
					rowCalls = append(rowCalls, c)
				}
			}
			if len(rowCalls) != 2 {
				t.Fatalf("%d row lock calls for two inserts, want 2: %v", len(rowCalls), lk.calls)
			}
			if n := len(rowCalls[1]); n < tc.minRows || n > tc.maxRows {
				t.Fatalf("replacing insert locked %d row names, want %d..%d", n, tc.minRows, tc.maxRows)
			}
		})
	}
}

// writeLog is a store whose Mutate and MutateUnordered record the tables
// each call wrote (over a real embedded store), and whose MutateUnordered
// fails while failUnordered is set: the first phase of an insert's writes
// failing on HBase.
type writeLog struct {
	storage.Store
	mu            sync.Mutex // guards calls and failUnordered
	calls         []string
	failUnordered bool
}

var errInjected = errors.New("injected: a region server refused the writes")

func (w *writeLog) record(kind string, muts []storage.Mutation) {
	var tables []string
	for _, m := range muts {
		if !slices.Contains(tables, m.Table.String()) {
			tables = append(tables, m.Table.String())
		}
	}
	slices.Sort(tables)
	w.calls = append(w.calls, fmt.Sprintf("%s%v", kind, tables))
}

func (w *writeLog) Mutate(ctx context.Context, muts []storage.Mutation) error {
	w.mu.Lock()
	w.record("ordered", muts)
	w.mu.Unlock()
	return w.Store.Mutate(ctx, muts)
}

func (w *writeLog) MutateUnordered(ctx context.Context, muts []storage.Mutation) error {
	w.mu.Lock()
	w.record("unordered", muts)
	fail := w.failUnordered
	w.mu.Unlock()
	if fail {
		// As on HBase, a failed call may have written part of its
		// mutations: the first one here.
		if err := w.Store.Mutate(ctx, muts[:1]); err != nil {
			return err
		}
		return fmt.Errorf("%w: %w", storage.ErrStore, errInjected)
	}
	return w.Store.Mutate(ctx, muts)
}

func (w *writeLog) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.calls
	w.calls = nil
	return c
}

// On a store with MutateUnordered an insert writes the index, fp and band
// cells in one unordered call, then the docs and meta cells in order; when
// the unordered call fails the insert fails, writes no docs cell and
// counts nothing: the document is neither acknowledged nor stored, and
// inserting it again stores it.
func TestInsertWritesUnorderedThenDocs(t *testing.T) {
	for _, mode := range []kvindex.InsertMode{kvindex.InsertAlways, kvindex.InsertIfUnique} {
		t.Run(mode.String(), func(t *testing.T) {
			st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			w := &writeLog{Store: st}
			ix, err := kvindex.Open(bg, w, kvindex.Config{RecipeVersion: testRecipe, Confirm: kvindex.ConfirmEach(jaccardConfirm)})
			if err != nil {
				st.Close()
				t.Fatal(err)
			}
			t.Cleanup(func() { ix.Close() })
			w.take()
			docs := []kvindex.Document{
				{ID: "x1", Fingerprint: 0x1111222233334444, Time: t0, Sketch: fingerprint.Sketch{1, 2}, Chars: 900, Bands: bandsFrom(11, nil)},
				{ID: "x2", Fingerprint: 0x5555666677778888, Time: t0, Sketch: fingerprint.Sketch{3, 4}, Chars: 900, Bands: bandsFrom(12, nil)},
			}
			if _, errs, err := ix.InsertBatch(bg, docs, mode, 3); err != nil || errs[0] != nil || errs[1] != nil {
				t.Fatal(err, errs)
			}
			want := []string{"unordered[bands fp index]", "ordered[docs meta]"}
			if got := w.take(); !slices.Equal(got, want) {
				t.Fatalf("writes %v, want %v", got, want)
			}

			w.mu.Lock()
			w.failUnordered = true
			w.mu.Unlock()
			y := kvindex.Document{ID: "y", Fingerprint: 0x0F0F0F0F0F0F0F0F, Time: t0, Sketch: fingerprint.Sketch{5, 6}, Chars: 900, Bands: bandsFrom(13, nil)}
			res, _, err := ix.InsertBatch(bg, []kvindex.Document{y}, mode, 3)
			if !errors.Is(err, kvindex.ErrStore) || !errors.Is(err, errInjected) || res != nil {
				t.Fatalf("insert with failing writes: results %v, err %v; want no results and the store's error", res, err)
			}
			if got := w.take(); !slices.Equal(got, []string{"unordered[bands fp index]"}) {
				t.Fatalf("writes after the failure: %v, want none after the unordered call", got)
			}
			if _, err := ix.Get(bg, "y"); !errors.Is(err, kvindex.ErrNotFound) {
				t.Fatalf("Get of the failed insert: %v, want not found", err)
			}
			stats, err := ix.Stats(bg)
			if err != nil {
				t.Fatal(err)
			}
			if stats.Documents != 2 {
				t.Fatalf("documents counted: %d, want 2", stats.Documents)
			}

			w.mu.Lock()
			w.failUnordered = false
			w.mu.Unlock()
			if r := mustInsert(t, ix, y, mode); !r.Stored || r.Replaced {
				t.Fatalf("retry: %+v, want stored as new", r)
			}
			lr, err := ix.Lookup(bg, y.Fingerprint, kvindex.LookupOptions{K: 0})
			if err != nil || len(lr.Hits) != 1 || lr.Hits[0].ID != "y" {
				t.Fatalf("lookup after the retry: %+v, %v", lr, err)
			}
		})
	}
}
