package kvindex_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// Scoping is a function of the source and the key alone, distinct per
// source (a source that is a prefix of another included) and per key, and
// never the key itself (a scoped row is not the overall row).
func TestSourceTextKey(t *testing.T) {
	const k = 0x0123456789abcdef
	seen := map[uint64]string{k: "unscoped"}
	for _, src := range []string{"a", "ab", "a\x00", "b", "example.com", "example.co", "m", ""} {
		for _, key := range []uint64{k, k + 1, 0} {
			h := kvindex.SourceTextKey(src, key)
			if h != kvindex.SourceTextKey(src, key) {
				t.Fatalf("%q/%x: not deterministic", src, key)
			}
			name := fmt.Sprintf("%q/%x", src, key)
			if prev, dup := seen[h]; dup {
				t.Errorf("%s scopes to %x, as %s does", name, h, prev)
			}
			seen[h] = name
		}
	}
	// The length prefix keeps a source and the first bytes of a key apart:
	// ("a", k) and ("", k') never hash the same input bytes.
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], k)
	if kvindex.SourceTextKey("a"+string(b[:1]), k) == kvindex.SourceTextKey("a", k) {
		t.Error("a source's bytes run into the key's")
	}
}

// sourceDoc is a text document with the given text keys and source.
func sourceDoc(id string, fp fingerprint.Fingerprint, source string, keys ...uint64) kvindex.Document {
	d := kvindex.Document{ID: id, Fingerprint: fp, Time: t0, Sketch: nearSketch, Chars: 500,
		Bands: append(bandsFrom(uint64(fp), nil), keys...)}
	if source != "" {
		d.Attrs = map[string]string{kvindex.DefaultSourceAttr: source, "lang": "en"}
	}
	return d
}

// scopedCells counts the cells of each scoped row (by source and key).
func scopedCells(t *testing.T, ix *kvindex.Index, sources []string, keys []uint64) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := ix.Store().Scan(bg, storage.TableBands, nil, nil, func(r storage.Row) error {
		band, h, err := kvindex.ParseBandRowKey(r.Key)
		if err != nil || band != kvindex.SourceKeyBand {
			return err
		}
		for _, s := range sources {
			for _, k := range keys {
				if kvindex.SourceTextKey(s, k) == h {
					out[fmt.Sprintf("%s/%x", s, k)] += len(r.Cells)
					return nil
				}
			}
		}
		return fmt.Errorf("scoped row %x of no known source and key", r.Key)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A document whose attributes name a source keys its text keys scoped to
// it too; lookups and TextKeyCounts read the counts for a named source;
// a replace that changes the source or the keys moves the scoped cells,
// and a delete removes them, so the counts stay those of the live
// documents.
func TestSourceScopedKeyRows(t *testing.T) {
	ix := openAt(t, t.TempDir(), kvindex.Config{Confirm: kvindex.ConfirmEach(func(_, _ kvindex.Document, _ int) bool { return false })}, false)
	if ix.SourceAttr() != kvindex.DefaultSourceAttr {
		t.Fatalf("new index's source attribute %q", ix.SourceAttr())
	}
	const footer, body1, body2, body3 = 0xF00, 0xB1, 0xB2, 0xB3
	docs := []kvindex.Document{
		sourceDoc("s1", 0x1000, "site", footer, body1),
		sourceDoc("s2", 0x2000_0000, "site", footer, body2),
		sourceDoc("s3", 0x3000_0000_0000, "site", footer, body3),
		sourceDoc("o1", 0x4000_0000_0000_0000, "other", footer, body1),
		sourceDoc("n1", 0x5000_0000_0000_0001, "", footer, body2),
	}
	for _, d := range docs {
		mustInsert(t, ix, d, kvindex.InsertAlways)
	}
	sources, keys := []string{"site", "other"}, []uint64{footer, body1, body2, body3}
	want := map[string]int{"site/f00": 3, "site/b1": 1, "site/b2": 1, "site/b3": 1, "other/f00": 1, "other/b1": 1}
	if got := scopedCells(t, ix, sources, keys); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("scoped cells %v, want %v", got, want)
	}
	// A key no document holds has no scoped cells either (its count is 0
	// without a read).
	const unheld = 0xDEAD
	q := sourceDoc("q", 0x7777_7777_7777_7777, "", footer, body1, unheld)
	res, err := ix.LookupDocuments(bg, []kvindex.Query{{Fingerprint: q.Fingerprint, Bands: q.Bands, Source: "site"}, {Fingerprint: q.Fingerprint, Bands: q.Bands}}, kvindex.LookupOptions{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := res[0].SourceKeyDocs[unheld]; res[0].KeyDocs[footer] != 5 || res[0].KeyDocs[body1] != 2 || res[0].SourceKeyDocs[footer] != 3 || res[0].SourceKeyDocs[body1] != 1 || !ok || n != 0 {
		t.Errorf("lookup with source: KeyDocs %v, SourceKeyDocs %v", res[0].KeyDocs, res[0].SourceKeyDocs)
	}
	if res[1].SourceKeyDocs != nil || res[1].KeyDocs[footer] != 5 {
		t.Errorf("lookup without source: KeyDocs %v, SourceKeyDocs %v", res[1].KeyDocs, res[1].SourceKeyDocs)
	}
	// The scoped rows name no candidates of their own: the same documents
	// are found with and without a source.
	if fmt.Sprint(ids(res[0].Hits)) != fmt.Sprint(ids(res[1].Hits)) {
		t.Errorf("hits with source %v, without %v", ids(res[0].Hits), ids(res[1].Hits))
	}
	counts, err := ix.TextKeyCounts(bg, []kvindex.KeyQuery{{Keys: []uint64{footer, body2}, Source: ix.SourceOf(docs[1].Attrs)}, {Keys: []uint64{footer}}, {}})
	if err != nil {
		t.Fatal(err)
	}
	if counts[0].Docs[footer] != 5 || counts[0].Docs[body2] != 2 || counts[0].Source[footer] != 3 || counts[0].Source[body2] != 1 ||
		counts[1].Docs[footer] != 5 || counts[1].Source != nil || counts[2].Docs != nil {
		t.Errorf("TextKeyCounts %+v", counts)
	}

	// Replace s1: another source and body; s2: same source, body dropped.
	mustInsert(t, ix, sourceDoc("s1", 0x1000, "other", footer, body3), kvindex.InsertAlways)
	mustInsert(t, ix, sourceDoc("s2", 0x2000_0000, "site", footer), kvindex.InsertAlways)
	want = map[string]int{"site/f00": 2, "site/b3": 1, "other/f00": 2, "other/b1": 1, "other/b3": 1}
	if got := scopedCells(t, ix, sources, keys); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after replaces: scoped cells %v, want %v", got, want)
	}
	// Insert-if-unique hands the new document's scoped counts to Confirm.
	var seen kvindex.KeyCounts
	ix2 := openAt(t, t.TempDir(), kvindex.Config{Confirm: func(_ kvindex.Document, keys kvindex.KeyCounts, _ int) func(kvindex.Document, int) bool {
		seen = keys
		return func(kvindex.Document, int) bool { return false }
	}}, false)
	for _, d := range docs {
		mustInsert(t, ix2, d, kvindex.InsertAlways)
	}
	mustInsert(t, ix2, sourceDoc("new", 0x7777_7777_7777_7777, "site", footer, body1), kvindex.InsertIfUnique)
	if seen.Docs[footer] != 5 || seen.Source[footer] != 3 || seen.Source[body1] != 1 {
		t.Errorf("Confirm saw %+v", seen)
	}

	for _, d := range docs {
		if err := ix.Delete(bg, d.ID); err != nil {
			t.Fatal(err)
		}
	}
	if got := scopedCells(t, ix, sources, keys); len(got) != 0 {
		t.Fatalf("after deletes: scoped cells %v", got)
	}
}

// The index decides its source attribute: a new one records the configured
// attribute (or none), a process configured with another is refused, and
// one that names none adopts the index's.
func TestSourceAttrMeta(t *testing.T) {
	dir := t.TempDir()
	ix := openAt(t, dir, kvindex.Config{SourceAttr: "site"}, false)
	mustInsert(t, ix, sourceDoc("a", 1, "", 0xF00), kvindex.InsertAlways)
	ix.Close()
	if _, err := openErr(dir, kvindex.Config{SourceAttr: "source"}); !errors.Is(err, kvindex.ErrMetaMismatch) {
		t.Fatalf("another source attribute opened: %v", err)
	}
	ix = openAt(t, dir, kvindex.Config{}, false)
	if m, ok, err := kvindex.ReadMeta(bg, ix.Store()); err != nil || !ok || m.Sources != "site" || ix.SourceAttr() != "site" || ix.SourceOf(map[string]string{"site": "x", "source": "y"}) != "x" {
		t.Fatalf("meta %+v (%v %v), SourceAttr %q", m, ok, err, ix.SourceAttr())
	}
	ix.Close()

	none := openAt(t, t.TempDir(), kvindex.Config{SourceAttr: kvindex.NoSourceAttr}, false)
	d := sourceDoc("a", 1, "site", 0xF00)
	mustInsert(t, none, d, kvindex.InsertAlways)
	if none.SourceAttr() != "" || none.SourceOf(d.Attrs) != "" || len(scopedCells(t, none, []string{"site"}, []uint64{0xF00})) != 0 {
		t.Fatalf("an index without source rows keyed %v", scopedCells(t, none, []string{"site"}, []uint64{0xF00}))
	}
}

// With SourceKeyMinDocs (the rule's TemplateMinDocs), a lookup naming a
// source reads the scoped rows that can matter only: of the keys that many
// documents hold when some key is held by none, of every key when all are
// held, and none when no key is held by that many.
func TestSourceKeyMinDocs(t *testing.T) {
	ix := openAt(t, t.TempDir(), kvindex.Config{SourceKeyMinDocs: 3}, false)
	const footer, body1, body2, unheld = 0xF00, 0xB1, 0xB2, 0xDEAD
	for _, d := range []kvindex.Document{
		sourceDoc("s1", 0x1000, "site", footer, body1),
		sourceDoc("s2", 0x2000_0000, "site", footer, body2),
		sourceDoc("s3", 0x3000_0000_0000, "site", footer),
		sourceDoc("o1", 0x4000_0000_0000_0000, "other", footer, body1, body2),
	} {
		mustInsert(t, ix, d, kvindex.InsertAlways)
	}
	lookup := func(keys ...uint64) map[uint64]int {
		t.Helper()
		q := sourceDoc("q", 0x7777_7777_7777_7777, "", keys...)
		res, err := ix.LookupDocuments(bg, []kvindex.Query{{Fingerprint: q.Fingerprint, Bands: q.Bands, Source: "site"}}, kvindex.LookupOptions{K: 3})
		if err != nil {
			t.Fatal(err)
		}
		return res[0].SourceKeyDocs
	}
	for _, tc := range []struct {
		name string
		keys []uint64
		want map[uint64]int
	}{
		{"a key held by none: the frequent keys only", []uint64{footer, body1, unheld}, map[uint64]int{footer: 3, unheld: 0}},
		{"every key held: all", []uint64{footer, body1}, map[uint64]int{footer: 3, body1: 1}},
		{"no key held by 3: none", []uint64{body1, body2}, map[uint64]int{}},
	} {
		if got := lookup(tc.keys...); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
