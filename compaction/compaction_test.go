package compaction_test

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/compaction"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/indextest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

var bg = context.Background()

var now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func openIndex(t *testing.T, dir string, maxCell int) *kvindex.Index {
	t.Helper()
	st, err := pebblestore.Open(dir, pebblestore.Options{NoSync: true, CacheBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: 1, BucketWidth: 24 * time.Hour, MaxCellBytes: maxCell})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func newCompactor(t *testing.T, ix *kvindex.Index, cfg compaction.Config) *compaction.Compactor {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return now }
	}
	cfg.BatchRows = 50 // many small batches
	c, err := compaction.New(ix, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dump returns every cell of every table, for content comparisons.
func dump(t *testing.T, ix *kvindex.Index) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tb := range storage.Tables {
		err := ix.Store().Scan(bg, tb, nil, nil, func(r storage.Row) error {
			for _, c := range r.Cells {
				out[fmt.Sprintf("%d/%x/%x", tb, r.Key, c.Qualifier)] = string(c.Value)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// cellKinds counts index cells by kind.
func cellKinds(t *testing.T, ix *kvindex.Index) (base, deltas, tombs int) {
	t.Helper()
	err := ix.Store().Scan(bg, storage.TableIndex, nil, nil, func(r storage.Row) error {
		for _, c := range r.Cells {
			switch c.Qualifier[0] {
			case 'b':
				base++
			case 'd':
				deltas++
			case 'x':
				tombs++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return
}

type liveDoc struct {
	fp fingerprint.Fingerprint
	at time.Time
}

// TestConcurrentInsertsDeletesAndCompaction runs inserts, deletes and
// re-inserts of deleted fingerprints while compaction runs in a loop, then
// checks against the oracle of acknowledged operations: every live document
// is found (at distance 0 and by a k=3 query), every deleted one is not,
// counters are right, no delta survives a final run and a further run
// changes nothing.
func TestConcurrentInsertsDeletesAndCompaction(t *testing.T) {
	ix := openIndex(t, t.TempDir(), 0)
	reg := prometheus.NewRegistry()
	m, err := compaction.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	comp := newCompactor(t, ix, compaction.Config{Metrics: m})

	const writers, ops = 3, 150
	var mu sync.Mutex // protects live and deleted
	live := map[string]liveDoc{}
	deleted := map[string]fingerprint.Fingerprint{}

	// Preload, then compact, so the concurrent phase works on base sets.
	r := rand.New(rand.NewPCG(1, 2))
	var pre []kvindex.Document
	for i := range 1000 {
		d := kvindex.Document{ID: fmt.Sprintf("pre-%d", i), Fingerprint: fingerprint.Fingerprint(r.Uint64()), Time: now.Add(-time.Duration(r.IntN(72)) * time.Hour)}
		pre = append(pre, d)
		live[d.ID] = liveDoc{d.Fingerprint, d.Time}
	}
	if _, errs, err := ix.InsertBatch(bg, pre, kvindex.InsertAlways, 3); err != nil || errors.Join(errs...) != nil {
		t.Fatal(err, errors.Join(errs...))
	}
	if s, err := comp.Run(bg); err != nil || s.DeltasFolded != 4*1000 {
		t.Fatalf("first run: %+v, %v", s, err)
	}

	ctx, cancel := context.WithCancel(bg)
	var compErr error
	var runs atomic.Int64
	compDone := make(chan struct{})
	go func() { // owner: this test; stopped by cancel, joined by compDone
		defer close(compDone)
		for ctx.Err() == nil {
			if _, err := comp.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				compErr = err
				return
			}
			runs.Add(1)
		}
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 99))
			var mine []string
			// Keep writing until compaction has completed several whole
			// runs while writes were going on.
			// (Bounded: every delete leaves a range tombstone in Pebble's
			// memtable that later reads pay for, so long runs slow down.)
			for i := 0; i < ops || runs.Load() < 2 && i < 3*ops && !stopped(compDone); i++ {
				switch x := r.IntN(10); {
				case x < 3 && len(mine) > 0: // delete one of mine
					j := r.IntN(len(mine))
					id := mine[j]
					mine = slices.Delete(mine, j, j+1)
					mu.Lock()
					fp := live[id].fp
					mu.Unlock()
					if err := ix.Delete(bg, id); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					delete(live, id)
					deleted[id] = fp
					mu.Unlock()
				default: // insert; sometimes the fingerprint of a deleted document
					fp := fingerprint.Fingerprint(r.Uint64())
					if x == 9 {
						mu.Lock()
						for _, f := range deleted {
							fp = f
							break
						}
						mu.Unlock()
					}
					id := fmt.Sprintf("w%d-%d", w, i)
					at := now.Add(-time.Duration(r.IntN(72)) * time.Hour)
					if _, err := ix.Insert(bg, kvindex.Document{ID: id, Fingerprint: fp, Time: at}, kvindex.InsertAlways, 3); err != nil {
						t.Error(err)
						return
					}
					mine = append(mine, id)
					mu.Lock()
					live[id] = liveDoc{fp, at}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	cancel()
	<-compDone
	if compErr != nil {
		t.Fatal(compErr)
	}
	t.Logf("%d compaction runs overlapped the writers", runs.Load())

	final, err := comp.Run(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("final run: %+v", final)
	if _, deltas, tombs := cellKinds(t, ix); deltas != 0 || tombs != 0 {
		t.Errorf("after a final run: %d deltas, %d tombstones left", deltas, tombs)
	}

	// Oracle checks.
	fps := map[fingerprint.Fingerprint]bool{}
	for id, d := range live {
		fps[d.fp] = true
		res := indextest.MustLookup(t, ix, d.fp, kvindex.LookupOptions{K: 0})
		if !slices.ContainsFunc(res.Hits, func(h kvindex.Hit) bool { return h.ID == id }) {
			t.Errorf("live document %s (%s) not found", id, d.fp)
		}
	}
	for id, fp := range deleted {
		if _, err := ix.Get(bg, id); !errors.Is(err, kvindex.ErrNotFound) {
			t.Errorf("deleted %s: Get err %v", id, err)
		}
		res := indextest.MustLookup(t, ix, fp, kvindex.LookupOptions{K: 0})
		if slices.ContainsFunc(res.Hits, func(h kvindex.Hit) bool { return h.ID == id }) {
			t.Errorf("deleted document %s found", id)
		}
	}
	// k=3 queries near live documents match brute force over the oracle.
	for i := range 200 {
		var q fingerprint.Fingerprint
		for _, d := range live {
			q = d.fp ^ fingerprint.Fingerprint(1<<(i%64)|1<<((i*7)%64))
			break
		}
		res := indextest.MustLookup(t, ix, q, kvindex.LookupOptions{K: 3})
		var want, got []string
		for id, d := range live {
			if bits.OnesCount64(uint64(d.fp^q)) <= 3 {
				want = append(want, id)
			}
		}
		for _, h := range res.Hits {
			got = append(got, h.ID)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("query %s: got %v, want %v", q, got, want)
		}
	}
	st, err := ix.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Documents != int64(len(live)) || st.Fingerprints != int64(len(fps)) {
		t.Errorf("counters: %d documents, %d fingerprints; want %d, %d", st.Documents, st.Fingerprints, len(live), len(fps))
	}

	// Idempotent: another run writes nothing.
	before := dump(t, ix)
	again, err := comp.Run(bg)
	if err != nil {
		t.Fatal(err)
	}
	if again.RowsRewritten != 0 {
		t.Errorf("second run rewrote %d rows", again.RowsRewritten)
	}
	if after := dump(t, ix); !mapsEqual(before, after) {
		t.Error("second run changed the index content")
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) == 0 {
		t.Error("no compaction metrics registered")
	}
}

func stopped(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

// TestRetention drops buckets older than the window and the documents in
// them; lookups stay consistent (no document whose entries are gone).
func TestRetention(t *testing.T) {
	ix := openIndex(t, t.TempDir(), 0)
	r := rand.New(rand.NewPCG(3, 4))
	var docs []kvindex.Document
	for i := range 400 {
		age := time.Duration(i%20) * 24 * time.Hour // 0..19 days old
		// LSH band cells and text-key cells (the template counts) expire
		// with the document: three text keys, one shared by every document;
		// those of a document with a source also scoped to it (every
		// other document, two sources).
		bands := make(fingerprint.Bands, fingerprint.NumBands+3)
		for b := range bands {
			bands[b] = r.Uint64()
		}
		bands[fingerprint.NumBands] = 42
		d := kvindex.Document{ID: fmt.Sprintf("d%d", i), Fingerprint: fingerprint.Fingerprint(r.Uint64()), Time: now.Add(-age), Bands: bands}
		if i%2 == 0 {
			d.Attrs = map[string]string{kvindex.DefaultSourceAttr: fmt.Sprintf("site%d", i%4)}
		}
		docs = append(docs, d)
	}
	if _, errs, err := ix.InsertBatch(bg, docs, kvindex.InsertAlways, 3); err != nil || errors.Join(errs...) != nil {
		t.Fatal(err, errors.Join(errs...))
	}
	comp := newCompactor(t, ix, compaction.Config{Retention: 7 * 24 * time.Hour})
	s, err := comp.Run(bg)
	if err != nil {
		t.Fatal(err)
	}
	cutoff := ix.Buckets().Of(now.Add(-7 * 24 * time.Hour))
	kept := 0
	for _, d := range docs {
		res := indextest.MustLookup(t, ix, d.Fingerprint, kvindex.LookupOptions{K: 0})
		_, gerr := ix.Get(bg, d.ID)
		if ix.Buckets().Of(d.Time) < cutoff {
			if len(res.Hits) != 0 || !errors.Is(gerr, kvindex.ErrNotFound) {
				t.Errorf("expired %s still there (hits %v, get %v)", d.ID, res.Hits, gerr)
			}
			continue
		}
		kept++
		if len(res.Hits) != 1 || res.Hits[0].ID != d.ID || gerr != nil {
			t.Errorf("kept %s: hits %v, get %v", d.ID, res.Hits, gerr)
		}
	}
	if s.DocumentsExpired != int64(len(docs)-kept) {
		t.Errorf("expired %d documents, want %d", s.DocumentsExpired, len(docs)-kept)
	}
	st, _ := ix.Stats(bg)
	if st.Documents != int64(kept) || st.Fingerprints != int64(kept) {
		t.Errorf("counters %d/%d, want %d", st.Documents, st.Fingerprints, kept)
	}
	// Band cells: exactly those of the kept documents are left, the
	// scoped text-key cells of the kept documents with a source among them.
	live := map[string]bool{}
	keptScoped := 0
	for _, d := range docs {
		if ix.Buckets().Of(d.Time) >= cutoff {
			live[d.ID] = true
			if d.Attrs != nil {
				keptScoped += 3
			}
		}
	}
	bandCells, scopedCells := 0, 0
	err = ix.Store().Scan(bg, storage.TableBands, nil, nil, func(row storage.Row) error {
		band, _, err := kvindex.ParseBandRowKey(row.Key)
		if err != nil {
			return err
		}
		for _, c := range row.Cells {
			if !live[string(c.Qualifier)] {
				return fmt.Errorf("band row %x keeps expired document %s", row.Key, c.Qualifier)
			}
			if band == kvindex.SourceKeyBand {
				scopedCells++
			} else {
				bandCells++
			}
		}
		return nil
	})
	if err != nil || bandCells != kept*(fingerprint.NumBands+3) || scopedCells != keptScoped || keptScoped == 0 {
		t.Errorf("band and text-key cells after retention: %d and %d scoped (%v), want %d and %d", bandCells, scopedCells, err, kept*(fingerprint.NumBands+3), keptScoped)
	}
	// The shared key's count in a source is that source's kept documents.
	keptSite0 := 0
	for _, d := range docs {
		if live[d.ID] && d.Attrs[kvindex.DefaultSourceAttr] == "site0" {
			keptSite0++
		}
	}
	counts, err := ix.TextKeyCounts(bg, []kvindex.KeyQuery{{Keys: []uint64{42}, Source: "site0"}})
	if err != nil || counts[0].Docs[42] != kept || counts[0].Source[42] != keptSite0 {
		t.Errorf("counts of the shared key after retention: %+v (%v), want %d and %d in site0", counts, err, kept, keptSite0)
	}
	// No cell of an expired bucket is left.
	err = ix.Store().Scan(bg, storage.TableIndex, nil, nil, func(r storage.Row) error {
		row, err := ix.DecodeIndexRow(r)
		if err != nil {
			return err
		}
		for _, c := range row.Cells {
			if c.Kind != kvindex.TombstoneCell && c.Bucket < cutoff {
				return fmt.Errorf("row %x keeps cell %+v of expired bucket %d", row.Key, c, c.Bucket)
			}
			if c.Kind == kvindex.TombstoneCell {
				return fmt.Errorf("row %x keeps tombstone %x", row.Key, c.Residual)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// TestRechunk: a row written with a large cell limit is re-cut when the
// limit shrinks, and every fingerprint stays findable.
func TestRechunk(t *testing.T) {
	dir := t.TempDir()
	ix := openIndex(t, dir, 1<<20)
	// 3000 fingerprints sharing table 0's prefix: one big row.
	r := rand.New(rand.NewPCG(5, 6))
	var docs []kvindex.Document
	for i := range 3000 {
		fp := fingerprint.Fingerprint(0xabcd<<48 | r.Uint64()>>16)
		docs = append(docs, kvindex.Document{ID: fmt.Sprintf("r%d", i), Fingerprint: fp, Time: now})
	}
	if _, errs, err := ix.InsertBatch(bg, docs, kvindex.InsertAlways, 0); err != nil || errors.Join(errs...) != nil {
		t.Fatal(err, errors.Join(errs...))
	}
	if _, err := newCompactor(t, ix, compaction.Config{}).Run(bg); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix = openIndex(t, dir, 1024) // MaxCellBytes is not part of the meta
	s, err := newCompactor(t, ix, compaction.Config{}).Run(bg)
	if err != nil {
		t.Fatal(err)
	}
	if s.BucketsRechunked == 0 {
		t.Fatalf("nothing re-chunked: %+v", s)
	}
	err = ix.Store().Scan(bg, storage.TableIndex, nil, nil, func(row storage.Row) error {
		for _, c := range row.Cells {
			if len(c.Value) > 1024 {
				return fmt.Errorf("row %x cell %x of %d bytes", row.Key, c.Qualifier, len(c.Value))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		res, err := ix.Lookup(bg, d.Fingerprint, kvindex.LookupOptions{K: 0})
		if err != nil || len(res.Hits) != 1 {
			t.Fatalf("%s: %v %v", d.ID, res.Hits, err)
		}
	}
	if s2, _ := newCompactor(t, ix, compaction.Config{}).Run(bg); s2.RowsRewritten != 0 {
		t.Errorf("re-chunk not idempotent: %+v", s2)
	}
}

// TestStoppable: a cancelled context stops a run with the context error.
func TestStoppable(t *testing.T) {
	ix := openIndex(t, t.TempDir(), 0)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := newCompactor(t, ix, compaction.Config{}).Run(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []compaction.Config{{Retention: -time.Hour}, {BatchRows: -1}, {BatchRows: 1 << 21}} {
		if err := c.Validate(); !errors.Is(err, compaction.ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if err := (compaction.Config{}).Validate(); err != nil {
		t.Error(err)
	}
}
