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
	mu            sync.Mutex // guards calls, failUnordered and failDocs
	calls         []string
	failUnordered bool
	// failDocs fails every ordered call that writes the docs table,
	// writing nothing of it: the docs region is down.
	failDocs bool
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
	fail := w.failDocs && slices.ContainsFunc(muts, func(m storage.Mutation) bool { return m.Table == storage.TableDocs })
	w.mu.Unlock()
	if fail {
		return fmt.Errorf("%w: %w", storage.ErrStore, errInjected)
	}
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

// An insert whose docs cell could not be written (the docs region was
// down) wrote its index, fp and band cells first and answered an error.
// It is not a document: a lookup by fingerprint and a lookup of documents
// do not find it, a racing near-duplicate inserted if unique is stored as
// the original, and Get answers not found, whether or not the index has a
// Confirm. Retrying it with the same id stores it as any insert would.
func TestUncommittedInsertIsNoDocument(t *testing.T) {
	for _, confirm := range []bool{false, true} {
		for _, mode := range []kvindex.InsertMode{kvindex.InsertAlways, kvindex.InsertIfUnique} {
			t.Run(fmt.Sprintf("confirm=%v/%s", confirm, mode), func(t *testing.T) {
				st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				w := &writeLog{Store: st}
				cfg := kvindex.Config{RecipeVersion: testRecipe}
				if confirm {
					cfg.Confirm = kvindex.ConfirmEach(jaccardConfirm)
				}
				ix, err := kvindex.Open(bg, w, cfg)
				if err != nil {
					st.Close()
					t.Fatal(err)
				}
				t.Cleanup(func() { ix.Close() })
				k := ix.Layout().K
				y := kvindex.Document{ID: "y", Fingerprint: 0x0F0F0F0F0F0F0F0F, Time: t0, Sketch: nearSketch, Chars: 900, Bands: bandsFrom(13, nil)}
				z := kvindex.Document{ID: "z", Fingerprint: y.Fingerprint ^ 1, Time: t0.Add(time.Second), Sketch: nearSketch, Chars: 900, Bands: bandsFrom(13, nil)}

				w.mu.Lock()
				w.failDocs = true
				w.mu.Unlock()
				if res, _, err := ix.InsertBatch(bg, []kvindex.Document{y}, mode, k); !errors.Is(err, kvindex.ErrStore) || res != nil {
					t.Fatalf("insert with the docs write failing: %v, %v; want the store's error", res, err)
				}
				w.mu.Lock()
				w.failDocs = false
				w.mu.Unlock()
				if n := countCells(t, st, storage.TableFP); n != 1 {
					t.Fatalf("fp cells after the failed insert: %d, want its 1 (written before the docs cell)", n)
				}

				lr, err := ix.Lookup(bg, y.Fingerprint, kvindex.LookupOptions{K: k})
				if err != nil || len(lr.Hits) != 0 {
					t.Fatalf("lookup of the unacknowledged insert: %+v, %v; want no hits", lr.Hits, err)
				}
				dr, err := ix.LookupDocuments(bg, []kvindex.Query{{Fingerprint: y.Fingerprint, Bands: y.Bands}}, kvindex.LookupOptions{K: k})
				if err != nil || len(dr[0].Hits) != 0 {
					t.Fatalf("document lookup of the unacknowledged insert: %+v, %v; want no hits", dr, err)
				}
				if _, err := ix.Get(bg, "y"); !errors.Is(err, kvindex.ErrNotFound) {
					t.Fatalf("Get of the unacknowledged insert: %v, want not found", err)
				}
				r := mustInsert(t, ix, z, kvindex.InsertIfUnique)
				if !r.Stored || r.Original != nil || len(r.Duplicates) != 0 {
					t.Fatalf("near-duplicate inserted if unique after the failed insert: %+v, want stored as the original", r)
				}

				// The retry: a duplicate of z, which is stored now.
				r = mustInsert(t, ix, y, mode)
				if r.Original == nil || r.Original.ID != "z" || r.Stored != (mode == kvindex.InsertAlways) {
					t.Fatalf("retry of the failed insert (%s): %+v, want z as its original", mode, r)
				}
				lr, err = ix.Lookup(bg, y.Fingerprint, kvindex.LookupOptions{K: k})
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, h := range lr.Hits {
					ids = append(ids, h.ID)
				}
				want := []string{"z"}
				if mode == kvindex.InsertAlways {
					want = []string{"y", "z"}
				}
				if !slices.Equal(ids, want) {
					t.Fatalf("lookup after the retry: %v, want %v", ids, want)
				}
				// The counters count documents and the fingerprints they
				// carry, not the failed insert's cells.
				stats, err := ix.Stats(bg)
				if err != nil {
					t.Fatal(err)
				}
				if n := int64(len(want)); stats.Documents != n || stats.Fingerprints != n {
					t.Fatalf("counted %d documents, %d fingerprints; want %d of each", stats.Documents, stats.Fingerprints, n)
				}
			})
		}
	}
}

// An fp cell whose document now carries another fingerprint (a replace
// whose removal of the old cell failed) leads to no hit and no duplicate.
func TestStaleFPCellIsNoDocument(t *testing.T) {
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Behind writeLog, the index takes the store as HBase (its writes in
	// two calls, not atomic), where such a cell can be left.
	ix, err := kvindex.Open(bg, &writeLog{Store: st}, kvindex.Config{RecipeVersion: testRecipe})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	const g, h = fingerprint.Fingerprint(0x1234567812345678), fingerprint.Fingerprint(0x7777000077770000)
	mustInsert(t, ix, doc("v", g, t0), kvindex.InsertAlways)
	mustInsert(t, ix, doc("w", g, t0.Add(time.Second)), kvindex.InsertAlways)
	mustInsert(t, ix, doc("w", h, t0.Add(2*time.Second)), kvindex.InsertAlways)
	// Put w's fp cell back on g, as if the replace had not removed it.
	rows, err := st.Get(bg, []storage.RowKey{{Table: storage.TableFP, Key: kvindex.FPRowKey(uint64(h))}})
	if err != nil || len(rows[0].Cells) != 1 {
		t.Fatalf("w's fp row: %+v, %v", rows, err)
	}
	if err := st.Mutate(bg, []storage.Mutation{{Kind: storage.Put, Table: storage.TableFP, Row: kvindex.FPRowKey(uint64(g)), Qualifier: []byte("w"), Value: rows[0].Cells[0].Value}}); err != nil {
		t.Fatal(err)
	}
	lr, err := ix.Lookup(bg, g, kvindex.LookupOptions{K: 0})
	if err != nil || len(lr.Hits) != 1 || lr.Hits[0].ID != "v" {
		t.Fatalf("lookup of the old fingerprint: %+v, %v; want v alone", lr.Hits, err)
	}
	dr, err := ix.LookupDocuments(bg, []kvindex.Query{{Fingerprint: g}}, kvindex.LookupOptions{K: 0})
	if err != nil || len(dr[0].Hits) != 1 || dr[0].Hits[0].ID != "v" {
		t.Fatalf("document lookup of the old fingerprint: %+v, %v; want v alone", dr, err)
	}
	r := mustInsert(t, ix, doc("u", g, t0.Add(3*time.Second)), kvindex.InsertAlways)
	if len(r.Duplicates) != 1 || r.Duplicates[0].ID != "v" {
		t.Fatalf("duplicates of a new document on the old fingerprint: %+v, want v alone", r.Duplicates)
	}
}

func countCells(t *testing.T, st storage.Store, table storage.Table) int {
	t.Helper()
	n := 0
	if err := st.Scan(bg, table, nil, nil, func(r storage.Row) error { n += len(r.Cells); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}
