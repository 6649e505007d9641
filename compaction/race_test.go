package compaction_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/compaction"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/indextest"
	"github.com/simdex/simdex/kvindex"
)

// TestWriteBetweenReadAndRewrite is the deterministic form of the
// compaction-vs-insert race: a hook runs inside compaction after a row was
// read and its fold planned, before the rewrite is written, and starts an
// online write on that very row (an insert of a new fingerprint in the row,
// a delete of a document in it, or the re-insert of a deleted fingerprint,
// which must lift its tombstone). The row lock must hold the write back
// until the rewrite is done (checked: the write does not finish while the
// hook waits), and afterwards, and after a further compaction, every
// acknowledged write is in effect: inserted documents are found, deleted
// ones are not.
func TestWriteBetweenReadAndRewrite(t *testing.T) {
	ix := openIndex(t, t.TempDir(), 0)
	perms := ix.Layout().Permuters()
	var bits []int
	for _, p := range perms {
		bits = append(bits, p.PrefixBits)
	}
	r := rand.New(rand.NewPCG(11, 12))
	at := now.Add(-time.Hour)

	var mu sync.Mutex // protects live, deleted and byRow
	live := map[string]fingerprint.Fingerprint{}
	deleted := map[string]fingerprint.Fingerprint{}
	byRow := map[string][]string{} // index row key -> ids of documents in it
	rowsOf := func(fp fingerprint.Fingerprint) []string {
		var out []string
		for t, p := range perms {
			v := p.Permute(fp)
			out = append(out, string(kvindex.IndexRowKey(nil, t, p.Prefix(v), p.PrefixBits)))
		}
		return out
	}
	insert := func(id string, fp fingerprint.Fingerprint) error {
		if _, err := ix.Insert(bg, kvindex.Document{ID: id, Fingerprint: fp, Time: at}, kvindex.InsertAlways, 0); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		live[id] = fp
		delete(deleted, id)
		for _, row := range rowsOf(fp) {
			byRow[row] = append(byRow[row], id)
		}
		return nil
	}
	// Preload deltas (no base sets yet: every row needs work), then
	// delete a few, leaving tombstones.
	for i := range 300 {
		if err := insert(fmt.Sprintf("pre-%d", i), fingerprint.Fingerprint(r.Uint64())); err != nil {
			t.Fatal(err)
		}
	}
	var tombstoned []fingerprint.Fingerprint
	for i := 0; i < 300; i += 10 {
		id := fmt.Sprintf("pre-%d", i)
		if err := ix.Delete(bg, id); err != nil {
			t.Fatal(err)
		}
		deleted[id] = live[id]
		tombstoned = append(tombstoned, live[id])
		delete(live, id)
	}

	var wg sync.WaitGroup
	var hookErrs []error
	hooked := 0
	cfg := compaction.Config{Now: func() time.Time { return now }, BatchRows: 64}
	compaction.SetBeforeWriteHook(&cfg, func(row []byte) {
		if hooked >= 30 {
			return
		}
		kind := hooked % 3
		hooked++
		tb, prefix, err := kvindex.ParseIndexRowKey(row, bits)
		if err != nil {
			t.Error(err)
			return
		}
		p := perms[tb]
		var op func() error
		var what string
		switch kind {
		case 0: // a new fingerprint in this row
			fp := p.Unpermute(p.Join(prefix, r.Uint64()>>p.PrefixBits))
			id := fmt.Sprintf("new-%d", hooked)
			what = "insert " + id
			op = func() error { return insert(id, fp) }
		case 1: // delete a live document of this row
			mu.Lock()
			var id string
			for _, cand := range byRow[string(row)] {
				if _, ok := live[cand]; ok {
					id = cand
					break
				}
			}
			mu.Unlock()
			if id == "" {
				return
			}
			what = "delete " + id
			op = func() error {
				if err := ix.Delete(bg, id); err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				deleted[id] = live[id]
				delete(live, id)
				return nil
			}
		case 2: // re-insert a tombstoned fingerprint (any row: it needs this row's lock only if it lives here)
			if len(tombstoned) == 0 {
				return
			}
			fp := tombstoned[0]
			tombstoned = tombstoned[1:]
			id := fmt.Sprintf("again-%d", hooked)
			what = "re-insert " + id
			op = func() error { return insert(id, fp) }
			if !slices.Contains(rowsOf(fp), string(row)) {
				// Not this row: run it, it must not be blocked.
				if err := op(); err != nil {
					t.Error(err)
				}
				return
			}
		}
		done := make(chan error, 1)
		wg.Go(func() { done <- op() })
		select {
		case err := <-done:
			// The write finished while compaction held the row between its
			// read and its write: the lock did not exclude it.
			hookErrs = append(hookErrs, fmt.Errorf("%s on row %x finished inside the compaction's read-modify-write (%v)", what, row, err))
		case <-time.After(30 * time.Millisecond):
			wg.Go(func() {
				if err := <-done; err != nil {
					t.Errorf("%s: %v", what, err)
				}
			})
		}
	})
	c, err := compaction.New(ix, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(bg); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, err := range hookErrs {
		t.Error(err)
	}
	if hooked < 30 {
		t.Fatalf("hook ran for %d rows, want 30", hooked)
	}

	check := func(stage string) {
		t.Helper()
		for id, fp := range live {
			res := indextest.MustLookup(t, ix, fp, kvindex.LookupOptions{K: 0})
			if !slices.ContainsFunc(res.Hits, func(h kvindex.Hit) bool { return h.ID == id }) {
				t.Errorf("%s: acknowledged document %s (%s) not found", stage, id, fp)
			}
		}
		for id, fp := range deleted {
			res := indextest.MustLookup(t, ix, fp, kvindex.LookupOptions{K: 0})
			if slices.ContainsFunc(res.Hits, func(h kvindex.Hit) bool { return h.ID == id }) {
				t.Errorf("%s: deleted document %s still found", stage, id)
			}
		}
	}
	check("after the hooked compaction")
	// The writes that waited left deltas and tombstones; a second run
	// folds them, and the index still answers the same.
	c2 := newCompactor(t, ix, compaction.Config{})
	if _, err := c2.Run(bg); err != nil {
		t.Fatal(err)
	}
	check("after a second compaction")
	if _, deltas, _ := cellKinds(t, ix); deltas != 0 {
		t.Errorf("%d deltas left after the second compaction", deltas)
	}
}
