package kvindex_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/indextest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

const fpA = fingerprint.Fingerprint(0x0123456789abcdef)

func TestInsertGetLookupRoundTrip(t *testing.T) {
	ix := openIndex(t, fingerprint.DefaultLayout)
	d := kvindex.Document{ID: "news/2026/01/a", Fingerprint: fpA, TitleFingerprint: 42, ExactHash: 7, Time: t0,
		Attrs: map[string]string{"source": "wire", "lang": "zh", "空": ""}}
	r := mustInsert(t, ix, d, kvindex.InsertIfUnique)
	if !r.Stored || r.Replaced || r.Original != nil || len(r.Duplicates) != 0 {
		t.Fatalf("first insert: %+v", r)
	}
	got, err := ix.Get(bg, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != d.ID || got.Fingerprint != d.Fingerprint || got.TitleFingerprint != 42 || got.ExactHash != 7 || !got.Time.Equal(t0) || len(got.Attrs) != 3 || got.Attrs["空"] != "" || got.Attrs["source"] != "wire" {
		t.Fatalf("Get = %+v", got)
	}
	res := indextest.MustLookup(t, ix, fpA, kvindex.LookupOptions{K: 3, ExactHash: 7})
	if len(res.Hits) != 1 || !res.Hits[0].Exact || res.Hits[0].Distance != 0 || res.Candidates < 1 {
		t.Fatalf("Lookup = %+v", res)
	}
	res, _ = ix.Lookup(bg, fpA, kvindex.LookupOptions{K: 3, ExactHash: 8})
	if res.Hits[0].Exact {
		t.Fatal("different exact hash reported as exact")
	}
}

func TestInsertIfUniqueAndOriginal(t *testing.T) {
	ix := openIndex(t, fingerprint.DefaultLayout)
	mustInsert(t, ix, doc("late", fpA^0b11, t0.Add(time.Hour)), kvindex.InsertAlways)
	mustInsert(t, ix, doc("early", fpA^0b1, t0), kvindex.InsertAlways)
	mustInsert(t, ix, doc("far", fpA^0xF0F0, t0.Add(-time.Hour)), kvindex.InsertAlways)
	r := mustInsert(t, ix, doc("new", fpA, t0.Add(2*time.Hour)), kvindex.InsertIfUnique)
	if r.Stored {
		t.Fatal("near-duplicate stored by insert-if-unique")
	}
	if r.Original == nil || r.Original.ID != "early" {
		t.Fatalf("original = %+v, want the earliest near-duplicate", r.Original)
	}
	if got := ids(r.Duplicates); !slices.Equal(got, []string{"early", "late"}) {
		t.Fatalf("duplicates = %v (sorted by distance)", got)
	}
	if _, err := ix.Get(bg, "new"); !errors.Is(err, kvindex.ErrNotFound) {
		t.Fatalf("unstored document is readable: %v", err)
	}
	// InsertAlways stores and still reports.
	r = mustInsert(t, ix, doc("new", fpA, t0.Add(2*time.Hour)), kvindex.InsertAlways)
	if !r.Stored || r.Original == nil || r.Original.ID != "early" {
		t.Fatalf("insert: %+v", r)
	}
}

func TestBatchOriginalIsEarliestWhateverTheOrder(t *testing.T) {
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}} {
		ix := openIndex(t, fingerprint.DefaultLayout)
		all := []kvindex.Document{doc("a", fpA, t0), doc("b", fpA^1, t0.Add(time.Minute)), doc("c", fpA^2, t0.Add(time.Minute))}
		var batch []kvindex.Document
		for _, i := range order {
			batch = append(batch, all[i])
		}
		res, errs, err := ix.InsertBatch(bg, batch, kvindex.InsertIfUnique, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			wantStored := batch[i].ID == "a"
			if r.Stored != wantStored || (!wantStored && r.Original.ID != "a") {
				t.Fatalf("order %v: %s -> %+v", order, batch[i].ID, r)
			}
		}
	}
}

func TestReplaceMovesFingerprint(t *testing.T) {
	ix := openIndex(t, fingerprint.DefaultLayout)
	mustInsert(t, ix, doc("x", fpA, t0), kvindex.InsertAlways)
	other := fpA ^ 0xFFFF_0000_FFFF_0000
	r := mustInsert(t, ix, doc("x", other, t0.Add(time.Hour)), kvindex.InsertIfUnique)
	if !r.Stored || !r.Replaced || len(r.Duplicates) != 0 {
		t.Fatalf("replace: %+v (a document is never its own duplicate)", r)
	}
	if res, _ := ix.Lookup(bg, fpA, kvindex.LookupOptions{K: 3}); len(res.Hits) != 0 {
		t.Fatalf("old fingerprint still finds %v", ids(res.Hits))
	}
	if res, _ := ix.Lookup(bg, other, kvindex.LookupOptions{K: 0}); !slices.Equal(ids(res.Hits), []string{"x"}) {
		t.Fatalf("new fingerprint finds %v", ids(res.Hits))
	}
	st, err := ix.Stats(bg)
	if err != nil || st.Documents != 1 || st.Fingerprints != 1 {
		t.Fatalf("stats after replace: %+v %v", st, err)
	}
	// Re-insert with the same fingerprint and a new time: one hit, new time.
	mustInsert(t, ix, doc("x", other, t0.Add(48*time.Hour)), kvindex.InsertAlways)
	res, _ := ix.Lookup(bg, other, kvindex.LookupOptions{K: 3})
	if len(res.Hits) != 1 || !res.Hits[0].Time.Equal(t0.Add(48*time.Hour)) {
		t.Fatalf("after same-fingerprint replace: %+v", res.Hits)
	}
}

func TestDeleteSharedFingerprintAndReinsert(t *testing.T) {
	ix := openIndex(t, fingerprint.DefaultLayout)
	mustInsert(t, ix, doc("one", fpA, t0), kvindex.InsertAlways)
	mustInsert(t, ix, doc("two", fpA, t0.Add(time.Second)), kvindex.InsertAlways)
	look := func() []string {
		res := indextest.MustLookup(t, ix, fpA^1, kvindex.LookupOptions{K: 1})
		return ids(res.Hits)
	}
	if err := ix.Delete(bg, "one"); err != nil {
		t.Fatal(err)
	}
	if got := look(); !slices.Equal(got, []string{"two"}) {
		t.Fatalf("after deleting one of two: %v", got)
	}
	if err := ix.Delete(bg, "one"); !errors.Is(err, kvindex.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if err := ix.Delete(bg, "two"); err != nil {
		t.Fatal(err)
	}
	if got := look(); len(got) != 0 {
		t.Fatalf("after deleting both: %v", got)
	}
	st, _ := ix.Stats(bg)
	if st.Documents != 0 || st.Fingerprints != 0 {
		t.Fatalf("stats after deletes: %+v", st)
	}
	// The tombstone must not hide a later insert of the same fingerprint.
	mustInsert(t, ix, doc("three", fpA, t0), kvindex.InsertIfUnique)
	if got := look(); !slices.Equal(got, []string{"three"}) {
		t.Fatalf("re-inserted fingerprint: %v", got)
	}
}

func TestWindowLimitAndOrder(t *testing.T) {
	ix := openAt(t, t.TempDir(), kvindex.Config{BucketWidth: time.Hour}, false)
	var batch []kvindex.Document
	for i := range 10 {
		batch = append(batch, doc(fmt.Sprintf("d%d", i), fpA^fingerprint.Fingerprint(1<<(i%4))>>(i/8), t0.Add(time.Duration(i)*90*time.Minute)))
	}
	if _, _, err := ix.InsertBatch(bg, batch, kvindex.InsertAlways, 3); err != nil {
		t.Fatal(err)
	}
	res := indextest.MustLookup(t, ix, fpA, kvindex.LookupOptions{K: 3, Since: t0.Add(3 * time.Hour), Until: t0.Add(9 * time.Hour)})
	for _, h := range res.Hits {
		if h.Time.Before(t0.Add(3*time.Hour)) || !h.Time.Before(t0.Add(9*time.Hour)) {
			t.Fatalf("hit %s at %s outside the window", h.ID, h.Time)
		}
	}
	if got := sorted(ids(res.Hits)); !slices.Equal(got, []string{"d2", "d3", "d4", "d5"}) {
		t.Fatalf("window hits %v", got)
	}
	all, _ := ix.Lookup(bg, fpA, kvindex.LookupOptions{K: 3})
	lim, _ := ix.Lookup(bg, fpA, kvindex.LookupOptions{K: 3, Limit: 3})
	if !lim.Truncated || len(lim.Hits) != 3 || !slices.Equal(ids(lim.Hits), ids(all.Hits[:3])) {
		t.Fatalf("limit 3: %v of %v", ids(lim.Hits), ids(all.Hits))
	}
	if all.Truncated {
		t.Fatal("unlimited lookup truncated")
	}
}

func TestBadInput(t *testing.T) {
	ix := openIndex(t, fingerprint.DefaultLayout)
	for _, k := range []int{-1, 4, 64} {
		if _, err := ix.Lookup(bg, fpA, kvindex.LookupOptions{K: k}); !errors.Is(err, kvindex.ErrBadK) {
			t.Errorf("Lookup k=%d: %v", k, err)
		}
		if _, err := ix.Insert(bg, doc("a", fpA, t0), kvindex.InsertAlways, k); !errors.Is(err, kvindex.ErrBadK) {
			t.Errorf("Insert k=%d: %v", k, err)
		}
	}
	if _, err := ix.Lookup(bg, fpA, kvindex.LookupOptions{K: 1, Limit: -1}); !errors.Is(err, kvindex.ErrBadOptions) {
		t.Errorf("negative limit: %v", err)
	}
	if _, err := ix.Lookup(bg, fpA, kvindex.LookupOptions{K: 1, Since: t0, Until: t0.Add(-time.Second)}); !errors.Is(err, kvindex.ErrBadOptions) {
		t.Errorf("inverted window: %v", err)
	}
	for _, id := range []string{"", strings.Repeat("x", 257), "a\x00b", "tab\there", "\xff\xfe"} {
		if _, err := ix.Insert(bg, doc(id, fpA, t0), kvindex.InsertAlways, 3); !errors.Is(err, kvindex.ErrBadID) {
			t.Errorf("Insert id %q: %v", id, err)
		}
		if _, err := ix.Get(bg, id); !errors.Is(err, kvindex.ErrBadID) {
			t.Errorf("Get id %q: %v", id, err)
		}
		if err := ix.Delete(bg, id); !errors.Is(err, kvindex.ErrBadID) {
			t.Errorf("Delete id %q: %v", id, err)
		}
	}
	if _, err := ix.Get(bg, "nobody"); !errors.Is(err, kvindex.ErrNotFound) {
		t.Errorf("Get unknown: %v", err)
	}
	if err := ix.Delete(bg, "nobody"); !errors.Is(err, kvindex.ErrNotFound) {
		t.Errorf("Delete unknown: %v", err)
	}
	bad := []kvindex.Document{
		{ID: "t", Fingerprint: fpA, Time: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "a", Fingerprint: fpA, Time: t0, Attrs: map[string]string{"": "x"}},
		{ID: "b", Fingerprint: fpA, Time: t0, Attrs: map[string]string{"k": strings.Repeat("v", 5000)}},
		{ID: "c", Fingerprint: fpA, Time: t0, Attrs: map[string]string{"k": "\xff"}},
	}
	for _, d := range bad {
		if _, err := ix.Insert(bg, d, kvindex.InsertAlways, 3); !errors.Is(err, kvindex.ErrBadDocument) {
			t.Errorf("Insert %+v: %v", d.ID, err)
		}
	}
	// Per-item errors in a batch leave the other items alone.
	res, errs, err := ix.InsertBatch(bg, []kvindex.Document{doc("ok", fpA, t0), doc("", fpA, t0), doc("ok", fpA, t0)}, kvindex.InsertAlways, 3)
	if err != nil || errs[0] != nil || !errors.Is(errs[1], kvindex.ErrBadID) || !errors.Is(errs[2], kvindex.ErrBadDocument) || !res[0].Stored {
		t.Fatalf("batch: %+v %v %v", res, errs, err)
	}
	st, _ := ix.Stats(bg)
	if st.Documents != 1 {
		t.Fatalf("documents after failed inserts = %d, want 1", st.Documents)
	}
}

func TestCorruptCellsAreErrorsNamingTheRow(t *testing.T) {
	dir := t.TempDir()
	ix, err := openPebbleIndex(t, dir, pebblestore.Options{}, kvindex.Config{RecipeVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	mustInsert(t, ix, doc("a", fpA, t0), kvindex.InsertAlways)
	p := ix.Layout().Permuters()[2]
	row := kvindex.IndexRowKey(nil, 2, p.Prefix(p.Permute(fpA)), p.PrefixBits)
	cases := []struct {
		name string
		mut  storage.Mutation
		call func() error
	}{
		{"base set", storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: row, Qualifier: kvindex.BaseQualifier(0, 0), Value: []byte{1, 0, 0, 0, 0, 9, 9}},
			func() error { _, err := ix.Lookup(bg, fpA, kvindex.LookupOptions{K: 3}); return err }},
		{"unknown index cell", storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: row, Qualifier: []byte("zz"), Value: nil},
			func() error { _, err := ix.Lookup(bg, fpA, kvindex.LookupOptions{K: 3}); return err }},
		{"fp cell", storage.Mutation{Kind: storage.Put, Table: storage.TableFP, Row: kvindex.FPRowKey(uint64(fpA)), Qualifier: []byte("a"), Value: []byte{1, 2}},
			func() error { _, err := ix.Lookup(bg, fpA, kvindex.LookupOptions{K: 0}); return err }},
		{"docs cell", storage.Mutation{Kind: storage.Put, Table: storage.TableDocs, Row: []byte("a"), Qualifier: []byte("d"), Value: []byte{1, 2, 3}},
			func() error { _, err := ix.Get(bg, "a"); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := ix.BulkWriter().Apply(bg, []storage.Mutation{c.mut}); err != nil {
				t.Fatal(err)
			}
			err := c.call()
			var ce *kvindex.CorruptError
			if !errors.Is(err, kvindex.ErrCorrupt) || !errors.As(err, &ce) || !strings.Contains(err.Error(), fmt.Sprintf("%x", c.mut.Row)) {
				t.Fatalf("err = %v, want a CorruptError naming row %x", err, c.mut.Row)
			}
			// Repair by removing the bad cell: the index answers again.
			del := c.mut
			del.Kind = storage.DeleteCell
			if c.name == "fp cell" || c.name == "docs cell" {
				del = storage.Mutation{Kind: storage.Put, Table: c.mut.Table, Row: c.mut.Row, Qualifier: c.mut.Qualifier}
				m, _ := ix.BulkWriter().DocCells(doc("a", fpA, t0))
				for _, x := range m {
					if x.Table == c.mut.Table {
						del = x
					}
				}
			}
			if err := ix.BulkWriter().Apply(bg, []storage.Mutation{del}); err != nil {
				t.Fatal(err)
			}
			if err := c.call(); err != nil {
				t.Fatalf("after repair: %v", err)
			}
		})
	}
}

func TestMetaMismatchRefused(t *testing.T) {
	dir := t.TempDir()
	ix := openAt(t, dir, kvindex.Config{}, false)
	ix.Close()
	for _, cfg := range []kvindex.Config{
		{Layout: fingerprint.Layout{B: 5, K: 3}},
		{RecipeVersion: 2},
		{BucketWidth: time.Hour},
	} {
		ix, err := openPebbleIndex(t, dir, pebblestore.Options{}, cfg)
		if err == nil {
			ix.Close()
		}
		if !errors.Is(err, kvindex.ErrMetaMismatch) {
			t.Fatalf("Open with %+v: %v, want ErrMetaMismatch", cfg, err)
		}
		t.Log(err)
	}
	st := openStore(t, dir)
	m, ok, err := kvindex.ReadMeta(bg, st)
	st.Close()
	if err != nil || !ok || m.Layout != fingerprint.DefaultLayout || m.RecipeVersion != testRecipe || m.Format != kvindex.FormatVersion {
		t.Fatalf("ReadMeta = %+v %v %v", m, ok, err)
	}
	// The same settings open fine.
	openAt(t, dir, kvindex.Config{}, false)
}

// downStore fails every call, as a store that went away does.
type downStore struct{ storage.Store }

var errDown = errors.New("connection refused")

func (downStore) Get(context.Context, []storage.RowKey) ([]storage.Row, error) { return nil, errDown }
func (downStore) Mutate(context.Context, []storage.Mutation) error             { return errDown }

func TestStoreDownIsErrStore(t *testing.T) {
	dir := t.TempDir()
	ix := openAt(t, dir, kvindex.Config{}, false)
	ix.Close()
	st := openStore(t, dir)
	defer st.Close()
	_, err := kvindex.Open(bg, downStore{st}, kvindex.Config{RecipeVersion: testRecipe})
	if !errors.Is(err, kvindex.ErrStore) || !errors.Is(err, errDown) {
		t.Fatalf("Open on a down store: %v", err)
	}
	// Context errors stay recognisable.
	ix2 := openAt(t, t.TempDir(), kvindex.Config{}, false)
	ctx, cancel := context.WithTimeout(bg, -time.Second)
	defer cancel()
	if _, err := ix2.Lookup(ctx, fpA, kvindex.LookupOptions{K: 1}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("expired ctx: %v", err)
	}
	ix2.Close()
	if _, err := ix2.Lookup(bg, fpA, kvindex.LookupOptions{K: 1}); !errors.Is(err, kvindex.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestFullestRows(t *testing.T) {
	ix := openIndex(t, fingerprint.DefaultLayout)
	r := rand.New(rand.NewPCG(1, 2))
	var batch []kvindex.Document
	for i := range 20 {
		// Same top 16 bits: table 0's row for that prefix is the fullest.
		batch = append(batch, doc(fmt.Sprint(i), fpA&^0xFFFF_FFFF_FFFF|fingerprint.Fingerprint(r.Uint64()>>16), t0))
	}
	if _, _, err := ix.InsertBatch(bg, batch, kvindex.InsertAlways, 3); err != nil {
		t.Fatal(err)
	}
	st, err := ix.StatsWith(bg, kvindex.StatsOptions{FullestRows: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.FullestRows) != 3 || st.FullestRows[0].Table != 0 || st.FullestRows[0].Prefix != uint64(fpA)>>48 || st.FullestRows[0].Fingerprints != 20 {
		t.Fatalf("fullest rows %+v", st.FullestRows)
	}
	if st.Documents != 20 || st.Fingerprints != 20 || st.IndexRows == 0 || st.IndexBytes == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// BulkWriter.BaseSets builds an index whose lookups agree with brute force.
func TestBaseSetsMatchBruteForce(t *testing.T) {
	ix := openIndex(t, fingerprint.Layout{B: 5, K: 3})
	r := rand.New(rand.NewPCG(4, 4))
	live := oracle{}
	fps := make([]uint64, 3000)
	var muts []storage.Mutation
	for i := range fps {
		fps[i] = r.Uint64()
		if i%10 == 0 && i > 0 {
			fps[i] = uint64(flip(r, fingerprint.Fingerprint(fps[i-1]), 2))
		}
		d := doc(fmt.Sprint(i), fingerprint.Fingerprint(fps[i]), t0)
		live[d.ID] = d
		m, err := ix.BulkWriter().DocCells(d)
		if err != nil {
			t.Fatal(err)
		}
		muts = append(muts, m...)
	}
	batches := 0
	err := ix.BulkWriter().BaseSets(fps, ix.Buckets().Of(t0), 500, func(m []storage.Mutation) error { batches++; return ix.BulkWriter().Apply(bg, m) })
	if err != nil || batches < 2 {
		t.Fatalf("BaseSets: %v, %d batches", err, batches)
	}
	if err := ix.BulkWriter().Apply(bg, muts); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(fps); i += 97 {
		q := flip(r, fingerprint.Fingerprint(fps[i]), r.IntN(3))
		res := indextest.MustLookup(t, ix, q, kvindex.LookupOptions{K: 3})
		if got, want := sorted(ids(res.Hits)), live.within(q, 3); !slices.Equal(got, want) {
			t.Fatalf("query %v: got %v, want %v", q, got, want)
		}
	}
}
