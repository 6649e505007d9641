package kvindex

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
)

var update = flag.Bool("update", false, "rewrite testdata/golden_cells.json")

func FuzzDecodeCells(f *testing.F) {
	d := Document{ID: "x", Fingerprint: 1, Time: time.Unix(5, 0), Attrs: map[string]string{"a": "b"}}
	f.Add(encodeDoc(d, false), []byte("d\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02"))
	f.Add(encodeDoc(d, true), []byte("d\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02"))
	f.Add(encodeFPCell(time.Unix(9, 0), 3, true), []byte("x12345678"))
	f.Add(encodeFPCell(time.Unix(9, 0), 0, true), []byte("x12345678"))
	d.Sketch, d.Chars = fingerprint.Sketch{1, 5, 1 << 31}, 180
	f.Add(encodeDoc(d, true), []byte("b\x00\x00\x50\x21\x00\x01"))
	d.Bands = testBands(7)
	f.Add(encodeDoc(d, true), BandRowKey(31, 0xfeedface))
	d.Text = "one short text."
	f.Add(encodeDoc(d, true), []byte("d"))
	d.Bands = nil
	f.Add(encodeDoc(d, true), []byte("d"))
	f.Fuzz(func(t *testing.T, v, q []byte) {
		if doc, err := decodeDoc("id", v); err == nil {
			for _, compact := range []bool{false, true} {
				if again, err := decodeDoc("id", encodeDoc(doc, compact)); err != nil || again.Fingerprint != doc.Fingerprint || len(again.Attrs) != len(doc.Attrs) ||
					again.TitleFingerprint != doc.TitleFingerprint || again.ExactHash != doc.ExactHash || !again.Time.Equal(doc.Time) ||
					!slices.Equal(again.Sketch, doc.Sketch) || again.Chars != doc.Chars || !slices.Equal(again.Bands, doc.Bands) || again.Text != doc.Text {
					t.Fatalf("doc round trip (compact %v): %v", compact, err)
				}
			}
		}
		if tm, ex, err := decodeFPCell(v); err == nil {
			// Each format re-encodes to its own bytes.
			if !bytes.Equal(encodeFPCell(tm, ex, v[0] == fpFormatNoExact), v) {
				t.Fatal("fp cell round trip")
			}
		}
		if iq, err := parseIndexQualifier(q); err == nil {
			var back []byte
			switch iq.Kind {
			case BaseCell:
				back = baseQualifier(iq.Bucket, iq.Chunk)
			case DeltaCell:
				back = deltaQualifier(iq.Bucket, iq.Residual)
			case TombstoneCell:
				back = tombstoneQualifier(iq.Residual)
			}
			if !bytes.Equal(back, q) {
				t.Fatalf("qualifier round trip %x -> %x", q, back)
			}
		}
		if band, h, err := ParseBandRowKey(q); err == nil && !bytes.Equal(BandRowKey(band, h), q) {
			t.Fatal("band row key round trip")
		}
		bitsPer := []int{16, 16, 16, 16}
		if tb, p, err := ParseIndexRowKey(q, bitsPer); err == nil {
			if !bytes.Equal(IndexRowKey(nil, tb, p, 16), q) {
				t.Fatal("row key round trip")
			}
		}
	})
}

// A document with a sketch survives the docs cell, and one without keeps
// the format 0x01 bytes (fingerprint-only documents did not change) in an
// index before format 5, and is written as 0x05 in one of format 5 when
// it is a bare fingerprint.
func FuzzDocCellRoundTrip(f *testing.F) {
	f.Add(uint64(1), int64(5), 180, []byte{0, 0, 0, 1, 0, 0, 0, 9}, "src", "wire", uint64(0), "")
	f.Add(uint64(0), int64(-5), 0, []byte{}, "", "", uint64(0), "")
	f.Add(uint64(3), int64(5), 900, []byte{0, 0, 0, 1}, "", "", uint64(12345), "")
	f.Add(uint64(3), int64(5), 24, []byte{0, 0, 0, 1}, "", "", uint64(12345), "a short text.\n第二行。")
	f.Add(uint64(4), int64(5), 12, []byte{0, 0, 0, 1}, "k", "v", uint64(0), "no bands here")
	f.Add(uint64(5), int64(5), 60, []byte{0, 0, 0, 1}, "", "", uint64(13), "bands, no text keys")
	f.Add(uint64(5), int64(5), 60, []byte{0, 0, 0, 1}, "", "", uint64(12), "bands and twelve text keys")
	f.Add(uint64(6), int64(7), 0, []byte{}, "k", "v", uint64(0), "")
	f.Fuzz(func(t *testing.T, fp uint64, ns int64, chars int, raw []byte, k, v string, bandSeed uint64, text string) {
		for _, compact := range []bool{false, true} {
			testDocCellRoundTrip(t, compact, fp, ns, chars, raw, k, v, bandSeed, text)
		}
	})
}

func testDocCellRoundTrip(t *testing.T, compact bool, fp uint64, ns int64, chars int, raw []byte, k, v string, bandSeed uint64, text string) {
	{
		var sk fingerprint.Sketch
		for i := 0; i+4 <= len(raw) && len(sk) < fingerprint.SketchSize; i += 4 {
			x := binary.BigEndian.Uint32(raw[i:])
			if len(sk) == 0 || x > sk[len(sk)-1] {
				sk = append(sk, x)
			}
		}
		d := Document{ID: "id", Fingerprint: fingerprint.Fingerprint(fp), Time: time.Unix(0, ns).UTC(), Sketch: sk, Chars: chars, Text: text}
		if bandSeed != 0 {
			// bandSeed mod 13 text keys after the LSH bands (format 4).
			d.Bands = testBands(bandSeed)
			for i := range bandSeed % (fingerprint.MaxTextKeys + 1) {
				d.Bands = append(d.Bands, bandSeed*31+i)
			}
		}
		if k != "" {
			d.Attrs = map[string]string{k: v}
		}
		if d.validate() != nil {
			return
		}
		cell := encodeDoc(d, compact)
		if want := byte(docFormat); !compact && len(sk) == 0 && chars == 0 && len(d.Bands) == 0 && text == "" && cell[0] != want {
			t.Fatalf("no sketch: format %#x, want %#x", cell[0], want)
		}
		if want := byte(docFormatCompact); compact && len(sk) == 0 && chars == 0 && len(d.Bands) == 0 && text == "" && cell[0] != want {
			t.Fatalf("bare fingerprint in a compact index: format %#x, want %#x", cell[0], want)
		}
		if want := byte(docFormatSketch); (len(sk) > 0 || chars > 0) && len(d.Bands) == 0 && text == "" && cell[0] != want {
			t.Fatalf("sketch without bands: format %#x, want %#x", cell[0], want)
		}
		if want := byte(docFormatText); text != "" && cell[0] != want {
			t.Fatalf("text: format %#x, want %#x", cell[0], want)
		}
		if want := byte(docFormatBands); text == "" && len(d.Bands) > 0 && cell[0] != want {
			t.Fatalf("bands without text: format %#x, want %#x", cell[0], want)
		}
		got, err := decodeDoc("id", cell)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if got.Fingerprint != d.Fingerprint || !got.Time.Equal(d.Time) || got.Chars != d.Chars || !slices.Equal(got.Sketch, d.Sketch) || len(got.Attrs) != len(d.Attrs) ||
			!slices.Equal(got.Bands, d.Bands) || got.Text != d.Text {
			t.Fatalf("round trip: got %+v, want %+v", got, d)
		}
		for i := range len(cell) - 1 { // every strict prefix is rejected, never a panic
			if _, err := decodeDoc("id", cell[:i]); err == nil {
				t.Fatalf("prefix of %d bytes decoded", i)
			}
		}
	}
}

// TestGoldenCells pins the persisted layout (docs/FORMAT.md): any change to
// these bytes is a format change and must bump FormatVersion.
func TestGoldenCells(t *testing.T) {
	when := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)
	b4 := fingerprint.DefaultLayout.Permuters()
	v := b4[2].Permute(0x0123456789abcdef)
	base, err := storage.EncodeBaseSet([]uint64{1, 2, 3, 300, 1 << 40, 1<<48 - 1}, 48, 1024)
	if err != nil {
		t.Fatal(err)
	}
	dense := make([]uint64, 200)
	for i := range dense {
		dense[i] = uint64(i * 3)
	}
	denseCells, _ := storage.EncodeBaseSet(dense, 48, 1024)
	rr := rand.New(rand.NewPCG(11, 12))
	random := make([]uint64, 40)
	for i := range random {
		random[i] = rr.Uint64() >> 16
	}
	slices.Sort(random)
	riceCells, _ := storage.EncodeBaseSet(random, 48, 1024)
	got := map[string]string{
		"base set rice (40 random 48-bit residuals)":       hex.EncodeToString(riceCells[0]),
		"index row key (B=4 table 2, fp 0123456789abcdef)": hex.EncodeToString(IndexRowKey(nil, 2, b4[2].Prefix(v), b4[2].PrefixBits)),
		"index row key (26-bit prefix)":                    hex.EncodeToString(IndexRowKey(nil, 9, 0x2ABCDEF, 26)),
		"base qualifier bucket 20513 chunk 1":              hex.EncodeToString(baseQualifier(20513, 1)),
		"delta qualifier":                                  hex.EncodeToString(deltaQualifier(20513, 0xABCDEF012345)),
		"tombstone qualifier":                              hex.EncodeToString(tombstoneQualifier(0xABCDEF012345)),
		"base set raw (sparse)":                            hex.EncodeToString(base[0]),
		"base set snappy (dense)":                          hex.EncodeToString(denseCells[0]),
		"fp cell":                                          hex.EncodeToString(encodeFPCell(when, 0xFEEDFACE, true)),
		"fp cell v2 (no exact hash)":                       hex.EncodeToString(encodeFPCell(when, 0, true)),
		"fp cell before format 5 (no exact hash)":          hex.EncodeToString(encodeFPCell(when, 0, false)),
		"docs cell":                                        hex.EncodeToString(encodeDoc(Document{ID: "a", Fingerprint: 0x0123456789abcdef, TitleFingerprint: 2, ExactHash: 3, Time: when, Attrs: map[string]string{"source": "wire", "lang": "zh"}}, true)),
		"docs cell v5 (bare fingerprint)":                  hex.EncodeToString(encodeDoc(Document{ID: "a", Fingerprint: 0x0123456789abcdef, Time: when, Attrs: map[string]string{"source": "wire", "lang": "zh"}}, true)),
		"docs cell before format 5 (bare fingerprint)":     hex.EncodeToString(encodeDoc(Document{ID: "a", Fingerprint: 0x0123456789abcdef, Time: when}, false)),
		"docs cell v2 (sketch)": hex.EncodeToString(encodeDoc(Document{ID: "a", Fingerprint: 0x0123456789abcdef, TitleFingerprint: 2, ExactHash: 3, Time: when, Attrs: map[string]string{"lang": "en"},
			Sketch: fingerprint.Sketch{0x00000007, 0x0000ff00, 0x12345678, 0xfffffffe}, Chars: 300}, true)),
		"docs cell v3 (sketch and bands)": hex.EncodeToString(encodeDoc(Document{ID: "a", Fingerprint: 0x0123456789abcdef, TitleFingerprint: 2, ExactHash: 3, Time: when,
			Sketch: fingerprint.Sketch{0x00000007, 0x12345678}, Chars: 300, Bands: testBands(1)}, true)),
		"docs cell v4 (sketch, bands and text)": hex.EncodeToString(encodeDoc(Document{ID: "a", Fingerprint: 0x0123456789abcdef, TitleFingerprint: 2, ExactHash: 3, Time: when,
			Sketch: fingerprint.Sketch{0x00000007, 0x12345678}, Chars: 12, Bands: testBands(1), Text: "short text.\n"}, true)),
		"docs cell v4 (sketch and text, no bands)": hex.EncodeToString(encodeDoc(Document{ID: "a", Fingerprint: 0x0123456789abcdef, TitleFingerprint: 2, ExactHash: 3, Time: when,
			Sketch: fingerprint.Sketch{0x00000007}, Chars: 3, Text: "短文本", Attrs: map[string]string{"lang": "zh"}}, true)),
		"band row key (band 5, hash 0123456789abcdef)":                          hex.EncodeToString(BandRowKey(5, 0x0123456789abcdef)),
		"band row key (text key 0123456789abcdef)":                              hex.EncodeToString(BandRowKey(fingerprint.TextKeyBand, 0x0123456789abcdef)),
		"band row key (text key 0123456789abcdef scoped to source example.com)": hex.EncodeToString(BandRowKey(SourceKeyBand, SourceTextKey("example.com", 0x0123456789abcdef))),
		"docs cell v4 (sketch, bands, two text keys and text)": hex.EncodeToString(encodeDoc(Document{ID: "a", Fingerprint: 0x0123456789abcdef, TitleFingerprint: 2, ExactHash: 3, Time: when,
			Sketch: fingerprint.Sketch{0x00000007, 0x12345678}, Chars: 12, Bands: append(testBands(1), 0xAAAA, 0xBBBB), Text: "short text.\n"}, true)),
		"fp row key": hex.EncodeToString(FPRowKey(0x0123456789abcdef)),
	}
	path := filepath.Join("testdata", "golden_cells.json")
	if *update {
		b, _ := json.MarshalIndent(got, "", "  ")
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to create it)", err)
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got  %s\n want %s\nthe persisted format changed: bump FormatVersion and update docs/FORMAT.md", k, got[k], w)
		}
	}
	if len(want) != len(got) {
		t.Errorf("golden file has %d entries, test makes %d", len(want), len(got))
	}
	// The base-set encoding bytes (docs/FORMAT.md, "Base set"): 0x01
	// Snappy, 0x02 raw, 0x03 Rice.
	if denseCells[0][0] != 0x01 || base[0][0] != 0x02 || riceCells[0][0] != 0x03 {
		t.Errorf("expected the dense set Snappy-compressed, the sparse one raw and the random one Rice-coded")
	}
}

func TestCoverTables(t *testing.T) {
	for _, l := range []fingerprint.Layout{{B: 4, K: 3}, {B: 5, K: 3}, {B: 6, K: 3}, {B: 6, K: 2}} {
		c := coverTables(l)
		if len(c[l.K]) != l.NumTables() {
			t.Errorf("%s: k=K reads %d tables, want all %d", l, len(c[l.K]), l.NumTables())
		}
		if len(c[0]) != 1 {
			t.Errorf("%s: k=0 reads %d tables, want 1", l, len(c[0]))
		}
		for k := 1; k < l.K; k++ {
			if len(c[k]) > len(c[k+1]) {
				t.Errorf("%s: k=%d reads more tables than k=%d", l, k, k+1)
			}
		}
	}
}

// testBands is a valid band signature: NumBands hashes seed, seed+1, ...
func testBands(seed uint64) fingerprint.Bands {
	b := make(fingerprint.Bands, fingerprint.NumBands)
	for i := range b {
		b[i] = seed + uint64(i)
	}
	return b
}

// BenchmarkDecodeDocCell is the read cost of one docs cell with bands,
// without (0x03) and with (0x04) a short document's text.
func BenchmarkDecodeDocCell(b *testing.B) {
	d := Document{ID: "a", Fingerprint: 1, Time: time.Unix(5, 0), Sketch: fingerprint.Sketch{1, 2, 3}, Chars: 95, Bands: testBands(3)}
	for i := range 61 {
		d.Sketch = append(d.Sketch, uint32(10+i))
	}
	v3 := encodeDoc(d, true)
	d.Text = "the city council approved the new budget of 4.5 million dollars on monday. the vote was close."
	v4 := encodeDoc(d, true)
	for _, bc := range []struct {
		name string
		cell []byte
	}{{"0x03", v3}, {"0x04 text", v4}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.cell)))
			for b.Loop() {
				if _, err := decodeDoc("a", bc.cell); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
