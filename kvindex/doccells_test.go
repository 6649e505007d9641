package kvindex_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// TestAppendDocCellsMatchesDocCells checks the allocation-free encoder
// against DocCells, the path online inserts and text loads use: the
// same fp and docs cell bytes, the same validation errors, and
// ErrHasBandCells exactly when DocCells would put band cells.
func TestAppendDocCellsMatchesDocCells(t *testing.T) {
	bands := make(fingerprint.Bands, fingerprint.NumBands)
	for i := range bands {
		bands[i] = uint64(i)*0x9e3779b97f4a7c15 + 1
	}
	cases := []struct {
		name string
		d    kvindex.Document
	}{
		{"precomputed", kvindex.Document{ID: "d1", Fingerprint: 0x84e904d9dcf35153, Time: t0.Add(3 * time.Second)}},
		{"non-UTC time", kvindex.Document{ID: "d2", Fingerprint: 1, Time: t0.In(time.FixedZone("x", 3600))}},
		{"exact hash and title", kvindex.Document{ID: "d3", Fingerprint: 2, TitleFingerprint: 7, ExactHash: 99, Time: t0}},
		{"one attribute", kvindex.Document{ID: "d4", Fingerprint: 3, Time: t0, Attrs: map[string]string{"src": "wire"}}},
		{"three attributes", kvindex.Document{ID: "d5", Fingerprint: 4, Time: t0, Attrs: map[string]string{"z": "1", "a": "2", "m": ""}}},
		{"sketch and chars", kvindex.Document{ID: "d6", Fingerprint: 5, Time: t0, Sketch: fingerprint.Sketch{1, 5, 9}, Chars: 300}},
		{"text", kvindex.Document{ID: "d7", Fingerprint: 6, Time: t0, Chars: 10, Text: "short text"}},
		{"bands", kvindex.Document{ID: "d8", Fingerprint: 7, Time: t0, Chars: 900, Bands: bands}},
		{"bad id", kvindex.Document{ID: "", Fingerprint: 8, Time: t0}},
		{"bad time", kvindex.Document{ID: "d9", Fingerprint: 9, Time: time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	for _, mode := range []kvindex.BandsMode{kvindex.BandsOff, kvindex.BandsOn} {
		ix := openAt(t, t.TempDir(), kvindex.Config{Bands: mode}, true)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				muts, werr := ix.BulkWriter().DocCells(tc.d)
				prefix := []byte("keep")
				out, fpLen, err := ix.BulkWriter().AppendDocCells(prefix, &tc.d)
				if werr != nil {
					if err == nil || err.Error() != werr.Error() {
						t.Fatalf("error %v, DocCells: %v", err, werr)
					}
					return
				}
				var fpCell, docCell *storage.Mutation
				bandCells := 0
				for i, m := range muts {
					switch m.Table {
					case storage.TableFP:
						fpCell = &muts[i]
					case storage.TableDocs:
						docCell = &muts[i]
					case storage.TableBands:
						bandCells++
					}
				}
				if bandCells > 0 {
					if !errors.Is(err, kvindex.ErrHasBandCells) {
						t.Fatalf("%d band cells: error %v, want ErrHasBandCells", bandCells, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(out, prefix) {
					t.Fatalf("dst's bytes not kept: %q", out)
				}
				vals := out[len(prefix):]
				if !bytes.Equal(vals[:fpLen], fpCell.Value) || !bytes.Equal(vals[fpLen:], docCell.Value) {
					t.Fatalf("cells\n fp %x docs %x\nwant\n fp %x docs %x", vals[:fpLen], vals[fpLen:], fpCell.Value, docCell.Value)
				}
				if string(docCell.Qualifier) != kvindex.DocQualifier || string(docCell.Row) != tc.d.ID || string(fpCell.Qualifier) != tc.d.ID ||
					!bytes.Equal(fpCell.Row, kvindex.FPRowKey(uint64(tc.d.Fingerprint))) {
					t.Fatalf("keys differ from DocCells': fp %x/%q docs %q/%q", fpCell.Row, fpCell.Qualifier, docCell.Row, docCell.Qualifier)
				}
			})
		}
	}
}

// TestAppendDocCellsDoesNotAllocate pins what the bulk loader relies on: a
// precomputed fingerprint's cells encode into a reused buffer for free.
func TestAppendDocCellsDoesNotAllocate(t *testing.T) {
	ix := openAt(t, t.TempDir(), kvindex.Config{}, true)
	d := kvindex.Document{ID: "doc-1", Fingerprint: 42, Time: t0, Attrs: map[string]string{"a": "b"}}
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() {
		var err error
		if buf, _, err = ix.BulkWriter().AppendDocCells(buf[:0], &d); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per document, want 0", n)
	}
}

// TestValidateID: ids are 1..MaxIDBytes bytes of UTF-8 without control
// characters (C0, DEL and C1), on the ASCII fast path and off it.
func TestValidateID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"d1", true}, {"doc 42/a-b_c.d~", true}, {"文档-1", true}, {"é", true},
		{strings.Repeat("x", kvindex.MaxIDBytes), true}, {strings.Repeat("é", kvindex.MaxIDBytes/2), true},
		{"", false}, {strings.Repeat("x", kvindex.MaxIDBytes+1), false}, {strings.Repeat("é", kvindex.MaxIDBytes/2) + "x", false},
		{"a\x00b", false}, {"tab\there", false}, {"del\x7f", false}, {"c1\u0085", false}, {"\xff\xfe", false}, {"ok\xc3", false},
	} {
		err := kvindex.ValidateID(tc.id)
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, kvindex.ErrBadID) {
			t.Errorf("ValidateID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
		}
	}
}
