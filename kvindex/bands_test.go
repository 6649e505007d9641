package kvindex_test

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// bandsFrom is a band signature whose hashes are seed*1000 + band; shared
// bands give two signatures equal hashes at those band indexes.
func bandsFrom(seed uint64, shared map[int]uint64) fingerprint.Bands {
	b := make(fingerprint.Bands, fingerprint.NumBands)
	for i := range b {
		b[i] = seed*1000 + uint64(i)
		if h, ok := shared[i]; ok {
			b[i] = h
		}
	}
	return b
}

// replaceThenDelete inserts d2 over the stored document of its id, which it
// must replace, then deletes it: the band cells are d2's after the one and
// none are left after the other.
func replaceThenDelete(t *testing.T, ix *kvindex.Index, d2 kvindex.Document) {
	t.Helper()
	if r := mustInsert(t, ix, d2, kvindex.InsertAlways); !r.Replaced {
		t.Fatal("re-insert did not replace")
	}
	if got := bandCells(t, ix); !equalSets(got, wantBandCells(d2)) {
		t.Fatalf("band cells after replace: %v", got)
	}
	if err := ix.Delete(bg, d2.ID); err != nil {
		t.Fatal(err)
	}
	if got := bandCells(t, ix); len(got) != 0 {
		t.Fatalf("band cells after delete: %v", got)
	}
}

// jaccardConfirm is a decision rule over sketches (like package decide's
// long-document clause): a stored document counts when the sketches are
// similar, at any distance.
func jaccardConfirm(newDoc, stored kvindex.Document, distance int) bool {
	if len(newDoc.Sketch) == 0 || len(stored.Sketch) == 0 {
		return distance <= 3
	}
	return fingerprint.Jaccard(newDoc.Sketch, stored.Sketch) >= 0.6
}

var nearSketch = fingerprint.Sketch{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}

// bandCells returns every (row, qualifier) of the bands table.
func bandCells(t *testing.T, ix *kvindex.Index) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := ix.Store().Scan(bg, storage.TableBands, nil, nil, func(r storage.Row) error {
		for _, c := range r.Cells {
			out[fmt.Sprintf("%x/%s", r.Key, c.Qualifier)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func wantBandCells(d kvindex.Document) map[string]bool {
	out := map[string]bool{}
	for i, h := range d.Bands {
		out[fmt.Sprintf("%x/%s", kvindex.BandRowKey(fingerprint.BandOf(i), h), d.ID)] = true
	}
	return out
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// A document sharing one band row with the query is found by
// LookupDocuments at any simhash distance (and not by the pigeonhole
// lookup); its band cells follow insert, replace and delete.
func TestBandsFindBeyondKAndFollowWrites(t *testing.T) {
	ix := openAt(t, t.TempDir(), kvindex.Config{Confirm: kvindex.ConfirmEach(jaccardConfirm)}, false)
	if !ix.HasBands() {
		t.Fatal("a new index has no bands by default")
	}
	a := kvindex.Document{ID: "a", Fingerprint: 0x0123456789abcdef, Time: t0, Sketch: nearSketch, Chars: 900, Bands: bandsFrom(1, nil)}
	mustInsert(t, ix, a, kvindex.InsertAlways)
	if got := bandCells(t, ix); !equalSets(got, wantBandCells(a)) {
		t.Fatalf("band cells after insert: %d, want the document's %d", len(got), fingerprint.NumBands)
	}
	far := a.Fingerprint ^ 0xFFFFF00000 // 20 bits away
	q := kvindex.Query{Fingerprint: far, Bands: bandsFrom(2, map[int]uint64{17: a.Bands[17]})}
	res, err := ix.LookupDocuments(bg, []kvindex.Query{q, {Fingerprint: far, Bands: bandsFrom(3, nil)}, {Fingerprint: a.Fingerprint}}, kvindex.LookupOptions{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res[0].Hits) != 1 || res[0].Hits[0].ID != "a" || res[0].Hits[0].Distance != 20 || res[0].BandCandidates != 1 {
		t.Fatalf("shared band: hits %+v (band candidates %d), want a at distance 20", res[0].Hits, res[0].BandCandidates)
	}
	if d := res[0].Docs["a"]; !slices.Equal(d.Sketch, a.Sketch) || !slices.Equal(d.Bands, a.Bands) {
		t.Errorf("stored document came back as %+v", d)
	}
	if len(res[1].Hits) != 0 {
		t.Errorf("no shared band, far away: hits %+v", res[1].Hits)
	}
	if len(res[2].Hits) != 1 || res[2].Hits[0].Distance != 0 {
		t.Errorf("by fingerprint, no bands: hits %+v", res[2].Hits)
	}
	old, err := ix.Lookup(bg, far, kvindex.LookupOptions{K: 3})
	if err != nil || len(old.Hits) != 0 {
		t.Fatalf("pigeonhole lookup found %+v (%v): the test query must be beyond K", old.Hits, err)
	}

	// Replace: the old version's band cells go, the new ones come.
	a2 := a
	a2.Bands = bandsFrom(4, map[int]uint64{0: a.Bands[0]})
	replaceThenDelete(t, ix, a2)
	res, err = ix.LookupDocuments(bg, []kvindex.Query{{Fingerprint: far, Bands: a2.Bands}}, kvindex.LookupOptions{K: 3})
	if err != nil || len(res[0].Hits) != 0 {
		t.Fatalf("after delete: %+v, %v", res, err)
	}
	if _, err := ix.LookupDocuments(bg, []kvindex.Query{{Fingerprint: 1, Bands: fingerprint.Bands{1}}}, kvindex.LookupOptions{K: 3}); !errors.Is(err, kvindex.ErrBadOptions) {
		t.Errorf("a malformed band signature: %v, want ErrBadOptions", err)
	}
}

// Text keys (fingerprint.TextKeys: whole sentences of short texts) are
// band rows of their own (band fingerprint.TextKeyBand): a query sharing
// one key with a stored document finds it wherever the key stands among
// either's keys, with no LSH band in common and at any distance; the key
// cells follow replace and delete; a key row holding more than
// TextKeyMaxDocs documents (boilerplate) gives no candidates.
func TestTextKeysFindContainedAndFollowWrites(t *testing.T) {
	ix := openAt(t, t.TempDir(), kvindex.Config{Confirm: kvindex.ConfirmEach(jaccardConfirm)}, false)
	if !ix.TextKeys() {
		t.Fatal("a new index with bands has no text keys")
	}
	a := kvindex.Document{ID: "a", Fingerprint: 0x0123456789abcdef, Time: t0, Sketch: nearSketch, Chars: 90, Bands: append(bandsFrom(1, nil), 501, 502, 503)}
	mustInsert(t, ix, a, kvindex.InsertAlways)
	if got := bandCells(t, ix); !equalSets(got, wantBandCells(a)) {
		t.Fatalf("band cells after insert: %d, want %d", len(got), len(a.Bands))
	}
	far := a.Fingerprint ^ 0xFFFFF00000 // 20 bits away
	// The query's keys: more than a document stores (a longer page), the
	// shared one in another position.
	qkeys := []uint64{900, 901, 902, 903, 904, 905, 906, 907, 908, 909, 910, 911, 912, 503}
	res, err := ix.LookupDocuments(bg, []kvindex.Query{
		{Fingerprint: far, Bands: append(bandsFrom(2, nil), qkeys...)},
		{Fingerprint: far, Bands: append(bandsFrom(3, nil), 999)},
		// The hash of a's key as an LSH band hash at some band: another row.
		{Fingerprint: far, Bands: bandsFrom(4, map[int]uint64{5: 501})},
	}, kvindex.LookupOptions{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res[0].Hits) != 1 || res[0].Hits[0].ID != "a" || res[0].Hits[0].Distance != 20 {
		t.Fatalf("shared text key: hits %+v, want a at distance 20", res[0].Hits)
	}
	if len(res[1].Hits) != 0 || len(res[2].Hits) != 0 {
		t.Fatalf("no shared key: hits %+v, %+v", res[1].Hits, res[2].Hits)
	}
	// Replace: keys that stay keep their cells, the others go.
	a2 := a
	a2.Bands = append(bandsFrom(1, nil), 503, 504)
	replaceThenDelete(t, ix, a2)

	// Boilerplate: a key in more than TextKeyMaxDocs documents gives no
	// candidates; a key in TextKeyMaxDocs does.
	for i := range kvindex.TextKeyMaxDocs + 1 {
		d := kvindex.Document{ID: fmt.Sprintf("b%02d", i), Fingerprint: fingerprint.Fingerprint(0x1111 * uint64(i+1)), Time: t0, Sketch: nearSketch, Chars: 90,
			Bands: append(bandsFrom(uint64(10+i), nil), 700)}
		if i < kvindex.TextKeyMaxDocs {
			d.Bands = append(d.Bands, 701)
		}
		mustInsert(t, ix, d, kvindex.InsertAlways)
	}
	res, err = ix.LookupDocuments(bg, []kvindex.Query{
		{Fingerprint: far, Bands: append(bandsFrom(2, nil), 700)},
		{Fingerprint: far, Bands: append(bandsFrom(2, nil), 701)},
	}, kvindex.LookupOptions{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].BandCandidates != 0 || len(res[1].Hits) != kvindex.TextKeyMaxDocs {
		t.Fatalf("boilerplate key: %d candidates (want 0); key in %d documents: %d hits (want all)", res[0].BandCandidates, kvindex.TextKeyMaxDocs, len(res[1].Hits))
	}
	// A query may look up at most MaxQueryTextKeys keys.
	tooMany := append(bandsFrom(2, nil), make([]uint64, fingerprint.MaxQueryTextKeys+1)...)
	if _, err := ix.LookupDocuments(bg, []kvindex.Query{{Fingerprint: far, Bands: tooMany}}, kvindex.LookupOptions{K: 3}); !errors.Is(err, kvindex.ErrBadOptions) {
		t.Errorf("%d query text keys: %v, want ErrBadOptions", fingerprint.MaxQueryTextKeys+1, err)
	}
}

// Insert-if-unique decides near-copies found only through a band (Confirm
// says duplicate): the second is not stored and names the first; a
// far document whose sketch differs is stored even though it shares a band.
func TestInsertIfUniqueThroughBands(t *testing.T) {
	ix := openAt(t, t.TempDir(), kvindex.Config{Confirm: kvindex.ConfirmEach(jaccardConfirm)}, false)
	a := kvindex.Document{ID: "a", Fingerprint: 0xAAAA0000FFFF0000, Time: t0, Sketch: nearSketch, Chars: 900, Bands: bandsFrom(1, nil)}
	mustInsert(t, ix, a, kvindex.InsertIfUnique)
	b := kvindex.Document{ID: "b", Fingerprint: ^a.Fingerprint, Time: t0.Add(time.Second), Sketch: nearSketch, Chars: 900, Bands: bandsFrom(2, map[int]uint64{5: a.Bands[5]})}
	r := mustInsert(t, ix, b, kvindex.InsertIfUnique)
	if r.Stored || r.Original == nil || r.Original.ID != "a" || r.Original.Distance != 64 {
		t.Fatalf("near-copy beyond K through a band: %+v, want not stored, original a at distance 64", r)
	}
	c := b
	c.ID, c.Sketch = "c", fingerprint.Sketch{100, 200, 300}
	if r := mustInsert(t, ix, c, kvindex.InsertIfUnique); !r.Stored {
		t.Fatalf("a dissimilar document sharing a band was refused: %+v", r)
	}
	// Within one batch, in (time, id) order, the same holds.
	d1 := kvindex.Document{ID: "d1", Fingerprint: 0x1111, Time: t0, Sketch: fingerprint.Sketch{50, 60, 70}, Chars: 900, Bands: bandsFrom(7, nil)}
	d2 := kvindex.Document{ID: "d2", Fingerprint: ^fingerprint.Fingerprint(0x1111), Time: t0.Add(time.Minute), Sketch: d1.Sketch, Chars: 900, Bands: bandsFrom(8, map[int]uint64{30: d1.Bands[30]})}
	res, errs, err := ix.InsertBatch(bg, []kvindex.Document{d2, d1}, kvindex.InsertIfUnique, 3)
	if err != nil || errs[0] != nil || errs[1] != nil {
		t.Fatal(err, errs)
	}
	if !res[1].Stored || res[0].Stored || res[0].Original == nil || res[0].Original.ID != "d1" {
		t.Fatalf("batch: d2 %+v, d1 %+v; want d1 stored and d2 its duplicate", res[0], res[1])
	}
}

// Near-copies beyond distance K that share a band, inserted at once with
// insert-if-unique: exactly one is stored in every round (they lock the
// shared band row).
func TestRacingBandNearCopiesExactlyOneOriginal(t *testing.T) {
	ix := openAt(t, t.TempDir(), kvindex.Config{Confirm: kvindex.ConfirmEach(jaccardConfirm)}, false)
	raceRounds(t, ix, 100, 30, rand.New(rand.NewPCG(5, 6)), func(r *rand.Rand, round int, base fingerprint.Fingerprint) []kvindex.Document {
		shared := r.IntN(fingerprint.NumBands)
		seedA, seedB := uint64(round*2+10), uint64(round*2+11)
		ba := bandsFrom(seedA, nil)
		docs := []kvindex.Document{
			{ID: fmt.Sprintf("r%d-a", round), Fingerprint: base, Time: t0, Sketch: nearSketch, Chars: 900, Bands: ba},
			{ID: fmt.Sprintf("r%d-b", round), Fingerprint: flip(r, base, 10+r.IntN(20)), Time: t0.Add(time.Duration(r.IntN(3)-1) * time.Second), Sketch: nearSketch, Chars: 900,
				Bands: bandsFrom(seedB, map[int]uint64{shared: ba[shared]})},
		}
		if d := bits.OnesCount64(uint64(docs[0].Fingerprint ^ docs[1].Fingerprint)); d <= 3 {
			t.Fatalf("distance %d: the pair must be beyond K", d)
		}
		return docs
	}, nil)
}

// Whether an index has bands is fixed when it is created and recorded in
// its meta row; a process that disagrees is refused, one that adopts the
// index's choice is not; an index without bands stores no band cells and
// keeps docs cells of format 0x02.
func TestBandsMeta(t *testing.T) {
	dir := t.TempDir()
	ix := openAt(t, dir, kvindex.Config{Bands: kvindex.BandsOff, Confirm: kvindex.ConfirmEach(jaccardConfirm)}, false)
	if ix.HasBands() {
		t.Fatal("BandsOff index has bands")
	}
	a := kvindex.Document{ID: "a", Fingerprint: 7, Time: t0, Sketch: nearSketch, Chars: 900, Bands: bandsFrom(1, nil)}
	mustInsert(t, ix, a, kvindex.InsertAlways)
	if got := bandCells(t, ix); len(got) != 0 {
		t.Fatalf("index without bands wrote %d band cells", len(got))
	}
	if d, err := ix.Get(bg, "a"); err != nil || d.Bands != nil || !slices.Equal(d.Sketch, a.Sketch) {
		t.Fatalf("stored %+v (%v): want the sketch and no bands", d, err)
	}
	res, err := ix.LookupDocuments(bg, []kvindex.Query{{Fingerprint: ^a.Fingerprint, Bands: a.Bands}}, kvindex.LookupOptions{K: 3})
	if err != nil || len(res[0].Hits) != 0 {
		t.Fatalf("index without bands answered by bands: %+v %v", res, err)
	}
	m, ok, err := kvindex.ReadMeta(bg, ix.Store())
	if err != nil || !ok || m.Format != kvindex.FormatVersion || m.Bands != "" {
		t.Fatalf("meta of an index without bands: %+v %v %v", m, ok, err)
	}
	ix.Close()

	// Adopted by auto; refused by on.
	ix = openAt(t, dir, kvindex.Config{}, false)
	if ix.HasBands() {
		t.Error("auto turned bands on for an index created without them")
	}
	ix.Close()
	if _, err := openErr(dir, kvindex.Config{Bands: kvindex.BandsOn}); !errors.Is(err, kvindex.ErrMetaMismatch) {
		t.Errorf("BandsOn on an index without bands: %v, want ErrMetaMismatch", err)
	}

	// An index with bands records the format and the band recipe, and
	// refuses a process configured without them.
	dir2 := t.TempDir()
	ix2 := openAt(t, dir2, kvindex.Config{}, false)
	m, ok, err = kvindex.ReadMeta(bg, ix2.Store())
	if err != nil || !ok || m.Format != kvindex.FormatVersion || m.Bands != fingerprint.BandsVersion {
		t.Fatalf("meta of an index with bands: %+v %v %v", m, ok, err)
	}
	ix2.Close()
	if _, err := openErr(dir2, kvindex.Config{Bands: kvindex.BandsOff}); !errors.Is(err, kvindex.ErrMetaMismatch) {
		t.Errorf("BandsOff on an index with bands: %v, want ErrMetaMismatch", err)
	}
	if err := (kvindex.Config{RecipeVersion: 1, Bands: 9}).Validate(); !errors.Is(err, kvindex.ErrConfig) {
		t.Errorf("Bands 9 validated: %v", err)
	}
}

// openErr opens the index in dir, closing it on success, and returns
// Open's error.
func openErr(dir string, cfg kvindex.Config) (struct{}, error) {
	st, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		return struct{}{}, err
	}
	if cfg.RecipeVersion == 0 {
		cfg.RecipeVersion = testRecipe
	}
	ix, err := kvindex.Open(bg, st, cfg)
	if err != nil {
		return struct{}{}, errors.Join(err, st.Close())
	}
	return struct{}{}, ix.Close()
}

// TestFormatsBeforeText: indexes created before format 3 (meta format 1
// without bands, 2 with) open, keep their format and get no text in their
// docs cells, so the binaries that wrote them still read every cell; a
// format this code does not know is refused.
func TestFormatsBeforeText(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		format, bands string
		ok            bool
	}{
		{"1", "", true},
		{"2", fingerprint.BandsVersion, true},
		{"3", fingerprint.BandsVersion, true},
		{"3", "", true},
		{"4", fingerprint.BandsVersion, true},
		{"4", "", true},
		{"5", fingerprint.BandsVersion, true},
		{"5", "", true},
		{"6", fingerprint.BandsVersion, true},
		{"6", "", true},
		{"7", fingerprint.BandsVersion, true},
		{"7", "", true},
		{"8", fingerprint.BandsVersion, true},
		{"8", "", true},
		{"9", fingerprint.BandsVersion, true},
		{"9", "", true},
		{"10", fingerprint.BandsVersion, true},
		{"10", "", true},
		{"11", fingerprint.BandsVersion, false},
		{"11", "", false},
		{"2", "", false}, // format 2 always had bands
	} {
		t.Run(tc.format+"/"+tc.bands, func(t *testing.T) {
			f, err := strconv.Atoi(tc.format)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			ix := openAt(t, dir, kvindex.Config{}, false)
			st := ix.Store()
			muts := []storage.Mutation{{Kind: storage.Put, Table: storage.TableMeta, Row: []byte("simdex"), Qualifier: []byte("format"), Value: []byte(tc.format)}}
			if tc.bands == "" {
				muts = append(muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableMeta, Row: []byte("simdex"), Qualifier: []byte("bands")})
			}
			if tc.bands == "" || f < 4 {
				muts = append(muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableMeta, Row: []byte("simdex"), Qualifier: []byte("textkeys")})
			} else if f < 6 {
				// Formats 4 and 5 keep the text keys of short documents only.
				muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableMeta, Row: []byte("simdex"), Qualifier: []byte("textkeys"), Value: []byte("sent10-lead16-max12-v1")})
			}
			if tc.bands == "" || f < 7 {
				// Source-scoped rows come with format 7 and bands.
				muts = append(muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableMeta, Row: []byte("simdex"), Qualifier: []byte("sources")})
			}
			if err := st.Mutate(bg, muts); err != nil {
				t.Fatal(err)
			}
			ix.Close()
			if !tc.ok {
				if _, err := openErr(dir, kvindex.Config{}); !errors.Is(err, kvindex.ErrMetaMismatch) {
					t.Fatalf("format %s bands %q opened: %v, want ErrMetaMismatch", tc.format, tc.bands, err)
				}
				return
			}
			ix = openAt(t, dir, kvindex.Config{}, false)
			defer ix.Close()
			wantText := f >= 3
			wantKeys := f >= 4 && tc.bands != ""
			wantSources := map[bool]string{true: kvindex.DefaultSourceAttr}[f >= 7 && tc.bands != ""]
			if ix.KeepsText() != wantText || ix.HasBands() != (tc.bands != "") || ix.TextKeys() != wantKeys || ix.SourceAttr() != wantSources {
				t.Fatalf("format %s: KeepsText %v HasBands %v TextKeys %v SourceAttr %q", tc.format, ix.KeepsText(), ix.HasBands(), ix.TextKeys(), ix.SourceAttr())
			}
			// Older formats keep their documents' LSH bands only: the text
			// keys are cut, never half written.
			bands := append(bandsFrom(1, nil), 77, 78)
			d := kvindex.Document{ID: "s", Fingerprint: 7, Time: t0, Sketch: nearSketch, Chars: 12, Bands: bands, Text: "short text 1"}
			mustInsert(t, ix, d, kvindex.InsertAlways)
			got, err := ix.Get(bg, "s")
			if err != nil || (got.Text != "") != wantText {
				t.Fatalf("format %s: stored text %q (%v), want kept %v", tc.format, got.Text, err, wantText)
			}
			wantBands := map[bool]int{true: fingerprint.NumBands + 2, false: fingerprint.NumBands}[wantKeys]
			if tc.bands == "" {
				wantBands = 0
			}
			if len(got.Bands) != wantBands {
				t.Fatalf("format %s: %d band hashes stored, want %d", tc.format, len(got.Bands), wantBands)
			}
			// A longer document keeps its text keys from format 6 on.
			long := kvindex.Document{ID: "l", Fingerprint: 11, Time: t0, Sketch: nearSketch, Chars: fingerprint.TextKeyChars, Bands: bands}
			mustInsert(t, ix, long, kvindex.InsertAlways)
			if got, err = ix.Get(bg, "l"); err != nil {
				t.Fatal(err)
			}
			if tc.bands != "" && f < 6 {
				wantBands = fingerprint.NumBands
			}
			if len(got.Bands) != wantBands {
				t.Fatalf("format %s: %d band hashes stored for a long document, want %d", tc.format, len(got.Bands), wantBands)
			}
			if m, ok, err := kvindex.ReadMeta(bg, ix.Store()); err != nil || !ok || strconv.Itoa(m.Format) != tc.format {
				t.Fatalf("format %s became %+v (%v %v)", tc.format, m, ok, err)
			}
			// A bare fingerprint gets compact cells from format 5 on, the
			// 0x01 cells before (which older binaries read).
			bare := kvindex.Document{ID: "b", Fingerprint: 9, Time: t0, Attrs: map[string]string{"k": "v"}}
			mustInsert(t, ix, bare, kvindex.InsertAlways)
			wantFP, wantDoc := byte(0x01), byte(0x01)
			if f >= 5 {
				wantFP, wantDoc = 0x02, 0x05
			}
			rows, err := ix.Store().Get(bg, []storage.RowKey{{Table: storage.TableFP, Key: kvindex.FPRowKey(9)}, {Table: storage.TableDocs, Key: []byte("b")}})
			if err != nil || len(rows[0].Cells) != 1 || len(rows[1].Cells) != 1 {
				t.Fatalf("format %s: bare document's cells %+v (%v)", tc.format, rows, err)
			}
			if f, d := rows[0].Cells[0].Value[0], rows[1].Cells[0].Value[0]; f != wantFP || d != wantDoc {
				t.Fatalf("format %s: bare document's fp cell %#x, docs cell %#x; want %#x, %#x", tc.format, f, d, wantFP, wantDoc)
			}
			got, err = ix.Get(bg, "b")
			if err != nil || got.Fingerprint != 9 || !got.Time.Equal(t0) || got.Attrs["k"] != "v" {
				t.Fatalf("format %s: bare document read back as %+v (%v)", tc.format, got, err)
			}
			res, err := ix.Lookup(bg, 9, kvindex.LookupOptions{ExactHash: 1})
			if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != "b" || !res.Hits[0].Time.Equal(t0) || res.Hits[0].Exact {
				t.Fatalf("format %s: lookup of the bare fingerprint: %+v (%v)", tc.format, res, err)
			}
			checkCounterRows(t, ix, f >= 8)
		})
	}
}

// checkCounterRows inserts and deletes documents one by one (more than
// kvindex.CounterShards of them, so the shards wrap) and checks the
// counters: their sum is right, and the additions went to the counter
// shard rows when sharded (format 8), to the row counters alone
// otherwise, where the binaries that wrote an older index read them.
func checkCounterRows(t *testing.T, ix *kvindex.Index, sharded bool) {
	t.Helper()
	before, err := ix.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)
	const n, deleted = kvindex.CounterShards + 6, 4
	for i := range n {
		mustInsert(t, ix, kvindex.Document{ID: fmt.Sprintf("c%d", i), Fingerprint: fingerprint.Fingerprint(1000 + i*7919), Time: t0}, kvindex.InsertAlways)
	}
	for i := range deleted {
		if err := ix.Delete(bg, fmt.Sprintf("c%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	after, err := ix.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Documents - before.Documents; d != n-deleted || after.Fingerprints-before.Fingerprints != n-deleted {
		t.Fatalf("counters grew by %d documents and %d fingerprints, want %d each", d, after.Fingerprints-before.Fingerprints, n-deleted)
	}
	keys := []storage.RowKey{{Table: storage.TableMeta, Key: []byte("counters")}}
	for s := range kvindex.CounterShards {
		keys = append(keys, storage.RowKey{Table: storage.TableMeta, Key: kvindex.CounterShardRow(s)})
	}
	rows, err := ix.Store().Get(bg, keys)
	if err != nil {
		t.Fatal(err)
	}
	shards := 0
	for _, r := range rows[1:] {
		if len(r.Cells) > 0 {
			shards++
		}
	}
	base := len(rows[0].Cells) > 0
	if sharded && (shards != kvindex.CounterShards || base) || !sharded && (shards != 0 || !base) {
		t.Fatalf("sharded %v: %d counter shard rows written, row counters written %v", sharded, shards, base)
	}
}
