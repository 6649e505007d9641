package kvindex_test

import (
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// The sketch and length of a document survive storage, and Documents reads
// several documents in one call (missing ids are absent, not errors).
func TestSketchStoredAndDocumentsBatch(t *testing.T) {
	ix := openIndex(t, fingerprint.DefaultLayout)
	a := kvindex.Document{ID: "a", Fingerprint: 0xF0F0, Time: t0, Sketch: fingerprint.Sketch{3, 9, 400}, Chars: 150}
	b := doc("b", 0xFFFF0000, t0) // a bare fingerprint: no sketch
	mustInsert(t, ix, a, kvindex.InsertAlways)
	mustInsert(t, ix, b, kvindex.InsertAlways)
	got, err := ix.Documents(bg, []string{"a", "b", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("Documents returned %d documents, want 2 (missing ids absent)", len(got))
	}
	if g := got["a"]; !slices.Equal(g.Sketch, a.Sketch) || g.Chars != 150 || g.Fingerprint != a.Fingerprint {
		t.Errorf("a read back as %+v", g)
	}
	if g := got["b"]; g.Sketch != nil || g.Chars != 0 {
		t.Errorf("b read back with sketch %v chars %d, want none", g.Sketch, g.Chars)
	}
	if _, err := ix.Documents(bg, []string{""}); err == nil {
		t.Error("Documents accepted an empty id")
	}
	bad := a
	bad.ID, bad.Sketch = "bad", fingerprint.Sketch{5, 5}
	if _, err := ix.Insert(bg, bad, kvindex.InsertAlways, 3); err == nil {
		t.Error("Insert accepted an unsorted sketch")
	}
}

// With Config.Confirm, insert-if-unique counts only the candidates Confirm
// accepts: a rejected near-fingerprint is stored as unique, an accepted one
// is reported as the duplicate, for stored documents and for earlier
// documents of the same batch alike.
func TestConfirmDecidesInsertIfUnique(t *testing.T) {
	var calls int
	cfg := kvindex.Config{Confirm: kvindex.ConfirmEach(func(n, s kvindex.Document, d int) bool {
		calls++
		// Accept when the two sketches share their first value; a stored
		// document without a sketch falls back to distance <= 1.
		if len(s.Sketch) == 0 || len(n.Sketch) == 0 {
			return d <= 1
		}
		return n.Sketch[0] == s.Sketch[0]
	})}
	ix := openAt(t, t.TempDir(), cfg, false)
	orig := kvindex.Document{ID: "orig", Fingerprint: 0xABCD, Time: t0, Sketch: fingerprint.Sketch{1, 2}, Chars: 100}
	mustInsert(t, ix, orig, kvindex.InsertAlways)

	other := kvindex.Document{ID: "other", Fingerprint: 0xABCD ^ 0b11, Time: t0.Add(time.Minute), Sketch: fingerprint.Sketch{7, 8}, Chars: 100}
	if r := mustInsert(t, ix, other, kvindex.InsertIfUnique); !r.Stored || len(r.Duplicates) != 0 {
		t.Fatalf("rejected candidate: stored %v, duplicates %v; want stored, none", r.Stored, ids(r.Duplicates))
	}
	copyDoc := kvindex.Document{ID: "copy", Fingerprint: 0xABCD ^ 0b100, Time: t0.Add(2 * time.Minute), Sketch: fingerprint.Sketch{1, 5}, Chars: 100}
	r := mustInsert(t, ix, copyDoc, kvindex.InsertIfUnique)
	if r.Stored || r.Original == nil || r.Original.ID != "orig" || !slices.Equal(ids(r.Duplicates), []string{"orig"}) {
		t.Fatalf("accepted candidate: stored %v, original %v, duplicates %v; want not stored, orig", r.Stored, r.Original, ids(r.Duplicates))
	}
	if calls == 0 {
		t.Fatal("Confirm was never called")
	}

	// Within one batch: x2 confirms against x1 (stored earlier in the
	// batch), y does not.
	batch := []kvindex.Document{
		{ID: "x2", Fingerprint: 0x5000_0000_0000 ^ 1, Time: t0.Add(5 * time.Minute), Sketch: fingerprint.Sketch{42}, Chars: 10},
		{ID: "x1", Fingerprint: 0x5000_0000_0000, Time: t0.Add(4 * time.Minute), Sketch: fingerprint.Sketch{42, 43}, Chars: 10},
		{ID: "y", Fingerprint: 0x5000_0000_0000 ^ 2, Time: t0.Add(6 * time.Minute), Sketch: fingerprint.Sketch{99}, Chars: 10},
	}
	res, errs, err := ix.InsertBatch(bg, batch, kvindex.InsertIfUnique, 3)
	if err != nil || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatal(err, errs)
	}
	if !res[1].Stored || res[0].Stored || res[0].Original == nil || res[0].Original.ID != "x1" || !res[2].Stored {
		t.Fatalf("batch: x2 stored %v (orig %v), x1 stored %v, y stored %v; want x1 and y stored, x2 a duplicate of x1",
			res[0].Stored, res[0].Original, res[1].Stored, res[2].Stored)
	}

	// A bare-fingerprint document falls back to the stored rule (d <= 1).
	bare := doc("bare", 0xABCD^0b1000_0000, t0.Add(time.Hour))
	if r := mustInsert(t, ix, bare, kvindex.InsertIfUnique); r.Stored {
		t.Fatalf("bare fingerprint 1 bit from orig: stored, want a duplicate (fallback rule)")
	}
}
