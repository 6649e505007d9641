package sparkjob

import (
	"encoding/binary"
	"maps"
	"slices"
	"testing"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/kvindex"
)

// uint64s cuts b into big-endian 8-byte values (a shorter tail is left
// out).
func uint64s(b []byte) []uint64 {
	out := make([]uint64, 0, len(b)/8)
	for ; len(b) >= 8; b = b[8:] {
		out = append(out, binary.BigEndian.Uint64(b))
	}
	return out
}

func sameDocFrame(a, b docFrame) bool {
	return a.order == b.order && a.fp == b.fp && slices.Equal(a.keys, b.keys) && slices.Equal(a.bands, b.bands) &&
		slices.Equal(a.textKeys, b.textKeys) && slices.Equal(a.scoped, b.scoped) && a.id == b.id && string(a.cell) == string(b.cell)
}

func appendParsedDocFrame(b []byte, f docFrame) []byte {
	return appendDocFrame(b, DedupDoc{ID: f.id, Order: f.order, Doc: kvindex.Document{Fingerprint: f.fp}, Cell: f.cell}, f.keys, f.bands, f.textKeys, f.scoped)
}

// FuzzDocFrame: a document frame reads back as written, its scoped keys
// included (one per text key, or none), a frame whose scoped keys are not
// one per text key is refused, and any bytes that read as a frame write
// back to bytes that read the same.
func FuzzDocFrame(f *testing.F) {
	vals := make([]byte, 8*12)
	for i := range vals {
		vals[i] = byte(i * 37)
	}
	f.Add(uint64(1), uint64(0x0123456789abcdef), vals, uint8(4), uint8(2), uint8(3), "builders.example.org", "doc-1", []byte("cell"))
	f.Add(uint64(7), uint64(0), vals, uint8(4), uint8(0), uint8(5), "", "d", []byte{})
	f.Add(uint64(1<<40|3), uint64(1), []byte{}, uint8(0), uint8(0), uint8(0), "s", "", []byte{0})
	f.Fuzz(func(t *testing.T, order, fp uint64, vals []byte, nk, nb, nt uint8, source, id string, cell []byte) {
		vs := uint64s(vals)
		take := func(n uint8) []uint64 {
			m := min(int(n), len(vs))
			out := vs[:m:m]
			vs = vs[m:]
			return out
		}
		keys, bands, textKeys := take(nk), take(nb), take(nt)
		scoped := ScopedKeys(source, textKeys)
		if source != "" && len(scoped) != len(textKeys) {
			t.Fatalf("%d scoped keys of %d text keys", len(scoped), len(textKeys))
		}
		want := docFrame{order: order, fp: fingerprint.Fingerprint(fp), keys: keys, bands: bands, textKeys: textKeys, scoped: scoped, id: id, cell: cell}
		b := appendParsedDocFrame(nil, want)
		got, err := parseDocFrame(b)
		if err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		if !sameDocFrame(got, want) {
			t.Fatalf("read back %+v, wrote %+v", got, want)
		}
		// Scoped keys that are not one per text key are no frame.
		if full := ScopedKeys(source+"!", textKeys); len(full) > 0 {
			for _, sc := range [][]uint64{full[:len(full)-1], append(slices.Clone(full), full[0])} {
				if len(sc) == 0 || len(sc) > 255 {
					continue
				}
				bad := want
				bad.scoped = sc
				if _, err := parseDocFrame(appendParsedDocFrame(nil, bad)); err == nil {
					t.Fatalf("a frame of %d text keys and %d scoped keys was read", len(textKeys), len(sc))
				}
			}
		}
		// Any bytes: no panic, and what reads writes back the same.
		if g, err := parseDocFrame(vals); err == nil {
			again, err := parseDocFrame(appendParsedDocFrame(nil, g))
			if err != nil || !sameDocFrame(again, g) {
				t.Fatalf("%x read as %+v, written back and read as %+v (%v)", vals, g, again, err)
			}
		}
	})
}

// pairFrameAsSpark is a pair frame as spark/simdex_dedup.py writes it:
// the four counts sections always, a side without a source with n = 0.
func pairFrameAsSpark(x, y PairSide) []byte {
	var b []byte
	for _, f := range [][]byte{[]byte(x.ID), x.Cell, []byte(y.ID), y.Cell} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	for _, kd := range []map[uint64]int{x.KeyDocs, y.KeyDocs, x.SourceDocs, y.SourceDocs} {
		b = binary.AppendUvarint(b, uint64(len(kd)))
		for k, n := range kd { // any order: the job collects them unordered
			b = binary.BigEndian.AppendUint64(b, k)
			b = binary.AppendUvarint(b, uint64(n))
		}
	}
	return b
}

// FuzzPairFrame: a pair frame reads back as written, both sides' counts
// overall and in their sources included, whether written by
// AppendPairFrame (the source sections only when a side has a source) or
// as the Spark job writes it (always); any bytes after the two documents
// read as counts that write back the same, or are refused.
func FuzzPairFrame(f *testing.F) {
	e, err := newDedupEncoder(bg, DedupConfig{Layout: fingerprint.DefaultLayout, K: 3, Format: bulkload.FormatFingerprints})
	if err != nil {
		f.Fatal(err)
	}
	docQ, err := docsQualifier(e.ix)
	if err != nil {
		f.Fatal(err)
	}
	var cells [2]DedupDoc
	for i, line := range []string{"a,00000000000000ff,1767225600", "b,00000000000001ff,1767225601"} {
		if cells[i], err = e.encode([]byte(line), uint64(i)); err != nil {
			f.Fatal(err)
		}
	}
	vals := make([]byte, 12*10)
	for i := range vals {
		vals[i] = byte(i*53 + 1)
	}
	f.Add(vals, uint8(3), uint8(2), uint8(3), uint8(0))
	f.Add(vals, uint8(3), uint8(3), uint8(0), uint8(0))
	f.Add(vals, uint8(0), uint8(2), uint8(0), uint8(2))
	f.Add([]byte{}, uint8(0), uint8(0), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, vals []byte, na, nb, sa, sb uint8) {
		rest := vals
		counts := func(n uint8) map[uint64]int {
			if n == 0 {
				return nil
			}
			m := map[uint64]int{}
			for ; n > 0 && len(rest) >= 12; n-- {
				m[binary.BigEndian.Uint64(rest)] = int(binary.BigEndian.Uint32(rest[8:]) & 0x7fffffff)
				rest = rest[12:]
			}
			return m
		}
		x := PairSide{ID: cells[0].ID, Cell: cells[0].Cell, KeyDocs: counts(na), SourceDocs: counts(sa)}
		y := PairSide{ID: cells[1].ID, Cell: cells[1].Cell, KeyDocs: counts(nb), SourceDocs: counts(sb)}
		check := func(how string, p []byte) {
			a, b, err := decodePair(e.ix, docQ, p)
			if err != nil {
				t.Fatalf("%s: %v", how, err)
			}
			if a.doc.ID != x.ID || b.doc.ID != y.ID || a.doc.Fingerprint != cells[0].Doc.Fingerprint || b.doc.Fingerprint != cells[1].Doc.Fingerprint {
				t.Fatalf("%s: documents %+v %+v", how, a.doc, b.doc)
			}
			for _, c := range []struct {
				name      string
				got, want map[uint64]int
			}{
				{"a's counts", a.counts.Docs, x.KeyDocs}, {"b's counts", b.counts.Docs, y.KeyDocs},
				{"a's source counts", a.counts.Source, x.SourceDocs}, {"b's source counts", b.counts.Source, y.SourceDocs},
			} {
				// An empty section reads as none: no counts, or no source.
				if !maps.Equal(c.got, c.want) || (c.got != nil) != (len(c.want) > 0) {
					t.Fatalf("%s: %s read back as %v, written %v", how, c.name, c.got, c.want)
				}
			}
		}
		check("AppendPairFrame", AppendPairFrame(nil, x, y))
		check("as the Spark job writes it", pairFrameAsSpark(x, y))

		// The two documents, then any bytes.
		p := AppendPairFrame(nil, PairSide{ID: x.ID, Cell: x.Cell}, PairSide{ID: y.ID, Cell: y.Cell})
		a, b, err := decodePair(e.ix, docQ, append(p, vals...))
		if err != nil {
			return
		}
		x = PairSide{ID: x.ID, Cell: x.Cell, KeyDocs: a.counts.Docs, SourceDocs: a.counts.Source}
		y = PairSide{ID: y.ID, Cell: y.Cell, KeyDocs: b.counts.Docs, SourceDocs: b.counts.Source}
		check("written back", AppendPairFrame(nil, x, y))
	})
}
