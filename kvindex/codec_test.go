package kvindex

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"hash/crc32"
	"maps"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
)

var update = flag.Bool("update", false, "rewrite testdata/golden_cells.json")

func TestBaseSetRoundTripAndChunking(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		name  string
		n     int
		bits  int
		limit int
	}{
		{"one", 1, 48, 64 << 10},
		{"dense small", 1000, 16, 64 << 10},
		{"random 48-bit, many chunks", 20000, 48, 4096},
		{"64-bit", 500, 64, 256},
		{"tiny limit", 300, 40, MinCellBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := map[uint64]bool{}
			for len(set) < tc.n {
				v := r.Uint64()
				if tc.bits < 64 {
					v >>= 64 - tc.bits
				}
				set[v] = true
			}
			var rs []uint64
			for v := range set {
				rs = append(rs, v)
			}
			slices.Sort(rs)
			cells, err := EncodeBaseSet(rs, tc.bits, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for i, c := range cells {
				if len(c) > tc.limit {
					t.Fatalf("chunk %d is %d bytes > limit %d", i, len(c), tc.limit)
				}
				if got, err = DecodeBaseSet(got, c, tc.bits); err != nil {
					t.Fatalf("chunk %d: %v", i, err)
				}
			}
			if !slices.Equal(got, rs) {
				t.Fatalf("round trip lost data: %d in, %d out", len(rs), len(got))
			}
		})
	}
}

// Random residuals (what a row holds) cost about log2(mean gap) + 2 bits
// each with the Rice code, under the varint's whole 7-bit groups.
func TestRiceBeatsVarintOnRandomRows(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{15, 150, 1500} { // rows at 10^6, 10^7, 10^8 fingerprints (B=4)
		rs := make([]uint64, n)
		for i := range rs {
			rs[i] = r.Uint64() >> 16
		}
		slices.Sort(rs)
		rs = slices.Compact(rs)
		cells, err := EncodeBaseSet(rs, 48, 1<<20)
		if err != nil || len(cells) != 1 {
			t.Fatal(err)
		}
		perResidual := float64(len(cells[0])) / float64(len(rs))
		bound := (float64(bits.Len64(1<<48/uint64(len(rs)))) + 2.5) / 8 // L+2 bits, plus slack for the header
		t.Logf("%d residuals: %.2f bytes each (encoding %#x)", len(rs), perResidual, cells[0][0])
		if cells[0][0] != baseRice || perResidual > bound+float64(16)/float64(len(rs)) {
			t.Errorf("%d random residuals: %.2f bytes each with encoding %#x, want Rice under %.2f", len(rs), perResidual, cells[0][0], bound)
		}
	}
}

func TestBaseSetBuilderRejects(t *testing.T) {
	b, _ := NewBaseSetBuilder(16, 1024)
	if err := b.Add(1 << 16); err == nil {
		t.Error("residual wider than 16 bits accepted")
	}
	b.Add(5)
	if err := b.Add(5); err == nil {
		t.Error("repeated residual accepted")
	}
	if err := b.Add(4); err == nil {
		t.Error("decreasing residual accepted")
	}
	if _, err := NewBaseSetBuilder(48, 10); err == nil {
		t.Error("tiny cell limit accepted")
	}
	cells, err := EncodeBaseSet(nil, 48, 1024)
	if err != nil || len(cells) != 0 {
		t.Errorf("empty set gives %d cells, %v", len(cells), err)
	}
}

func TestDecodeBaseSetRejectsDamage(t *testing.T) {
	cells, _ := EncodeBaseSet([]uint64{1, 5, 900, 1 << 40}, 48, 1024)
	good := cells[0]
	flipByte := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 0x40; return b }
	cases := map[string][]byte{
		"empty":         nil,
		"short":         good[:3],
		"bad encoding":  append([]byte{9}, good[1:]...),
		"checksum":      flipByte(len(good) - 1),
		"truncated":     good[:len(good)-1],
		"header only":   good[:baseHeaderLen],
		"wider residue": good, // decoded with 16 bits below
	}
	for name, v := range cases {
		bitsW := 48
		if name == "wider residue" {
			bitsW = 16
		}
		out, err := DecodeBaseSet([]uint64{7}, v, bitsW)
		if !errors.Is(err, errBaseSet) {
			t.Errorf("%s: err = %v", name, err)
		}
		if !slices.Equal(out, []uint64{7}) {
			t.Errorf("%s: damaged cell appended %v", name, out)
		}
	}
	// Unsorted or repeated residuals inside a well-formed cell.
	for _, payload := range [][]byte{{3, 5, 0, 1}, {2, 5, 0}, {0}, {2, 1}} {
		if _, err := DecodeBaseSet(nil, sealBaseSet(payload), 48); !errors.Is(err, errBaseSet) {
			t.Errorf("payload %x accepted", payload)
		}
	}
}

// FuzzBaseSetRoundTrip: any set of residuals survives encode + decode.
func FuzzBaseSetRoundTrip(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint8(48), uint16(100))
	f.Add(bytes.Repeat([]byte{0xff}, 64), uint8(64), uint16(64))
	f.Fuzz(func(t *testing.T, raw []byte, bitsIn uint8, limit uint16) {
		bits := int(bitsIn%64) + 1
		var rs []uint64
		for i := 0; i+8 <= len(raw); i += 8 {
			v := uint64(raw[i])<<56 | uint64(raw[i+1])<<48 | uint64(raw[i+2])<<40 | uint64(raw[i+3])<<32 | uint64(raw[i+4])<<24 | uint64(raw[i+5])<<16 | uint64(raw[i+6])<<8 | uint64(raw[i+7])
			if bits < 64 {
				v >>= 64 - bits
			}
			rs = append(rs, v)
		}
		slices.Sort(rs)
		rs = slices.Compact(rs)
		cells, err := EncodeBaseSet(rs, bits, MinCellBytes+int(limit))
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, c := range cells {
			if len(c) > MinCellBytes+int(limit) {
				t.Fatalf("cell of %d bytes over limit", len(c))
			}
			if got, err = DecodeBaseSet(got, c, bits); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, rs) && !(len(got) == 0 && len(rs) == 0) {
			t.Fatalf("round trip: %v -> %v", rs, got)
		}
	})
}

// FuzzDecodeBaseSet: arbitrary bytes never panic; whatever decodes is a
// strictly increasing set within the width that re-encodes to itself.
func FuzzDecodeBaseSet(f *testing.F) {
	cells, _ := EncodeBaseSet([]uint64{1, 2, 3, 1000, 1 << 30}, 32, 1024)
	f.Add(cells[0], uint8(32))
	f.Add(sealBaseSet([]byte{2, 1, 1}), uint8(8))
	f.Add([]byte{1, 0, 0, 0, 0}, uint8(48))
	rr := rand.New(rand.NewPCG(1, 1))
	rs := make([]uint64, 64)
	for i := range rs {
		rs[i] = rr.Uint64() >> 16
	}
	slices.Sort(rs)
	rice, _ := EncodeBaseSet(rs, 48, 4096)
	f.Add(rice[0], uint8(48))
	f.Fuzz(func(t *testing.T, v []byte, bitsIn uint8) {
		bits := int(bitsIn%64) + 1
		got, err := DecodeBaseSet(nil, v, bits)
		if err != nil {
			return
		}
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Fatalf("decoded unsorted set %v", got)
			}
		}
		again, err := EncodeBaseSet(got, bits, 1<<20)
		if err != nil {
			t.Fatalf("decoded set does not re-encode: %v", err)
		}
		back, _ := DecodeBaseSet(nil, again[0], bits)
		if !slices.Equal(back, got) {
			t.Fatal("re-encoded set differs")
		}
	})
}

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
		if iq, err := ParseIndexQualifier(q); err == nil {
			var back []byte
			switch iq.Kind {
			case BaseCell:
				back = BaseQualifier(iq.Bucket, iq.Chunk)
			case DeltaCell:
				back = DeltaQualifier(iq.Bucket, iq.Residual)
			case TombstoneCell:
				back = TombstoneQualifier(iq.Residual)
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
	base, err := EncodeBaseSet([]uint64{1, 2, 3, 300, 1 << 40, 1<<48 - 1}, 48, 1024)
	if err != nil {
		t.Fatal(err)
	}
	dense := make([]uint64, 200)
	for i := range dense {
		dense[i] = uint64(i * 3)
	}
	denseCells, _ := EncodeBaseSet(dense, 48, 1024)
	rr := rand.New(rand.NewPCG(11, 12))
	random := make([]uint64, 40)
	for i := range random {
		random[i] = rr.Uint64() >> 16
	}
	slices.Sort(random)
	riceCells, _ := EncodeBaseSet(random, 48, 1024)
	got := map[string]string{
		"base set rice (40 random 48-bit residuals)":       hex.EncodeToString(riceCells[0]),
		"index row key (B=4 table 2, fp 0123456789abcdef)": hex.EncodeToString(IndexRowKey(nil, 2, b4[2].Prefix(v), b4[2].PrefixBits)),
		"index row key (26-bit prefix)":                    hex.EncodeToString(IndexRowKey(nil, 9, 0x2ABCDEF, 26)),
		"base qualifier bucket 20513 chunk 1":              hex.EncodeToString(BaseQualifier(20513, 1)),
		"delta qualifier":                                  hex.EncodeToString(DeltaQualifier(20513, 0xABCDEF012345)),
		"tombstone qualifier":                              hex.EncodeToString(TombstoneQualifier(0xABCDEF012345)),
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
		"band row key (band 5, hash 0123456789abcdef)": hex.EncodeToString(BandRowKey(5, 0x0123456789abcdef)),
		"band row key (text key 0123456789abcdef)":     hex.EncodeToString(BandRowKey(fingerprint.TextKeyBand, 0x0123456789abcdef)),
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
	if denseCells[0][0] != baseSnappy || base[0][0] != baseRaw || riceCells[0][0] != baseRice {
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

// refChunk is the chunk encoder as it was before the Snappy trial was
// skipped for wide gaps: Snappy (or raw) and a bit-by-bit Rice encoding,
// the smaller one. It is the oracle of TestChunkChoiceMatchesFullTrial.
func refChunk(rs []uint64) []byte {
	var payload []byte
	payload = binary.AppendUvarint(payload, uint64(len(rs)))
	var gaps []uint64
	for i, r := range rs {
		if i == 0 {
			payload = binary.AppendUvarint(payload, r)
			continue
		}
		payload = binary.AppendUvarint(payload, r-rs[i-1])
		gaps = append(gaps, r-rs[i-1])
	}
	cell := sealBaseSet(payload)
	var sum float64
	for _, g := range gaps {
		sum += float64(g - 1)
	}
	L := 0
	if len(gaps) > 0 {
		if mean := sum / float64(len(gaps)); mean >= 2 {
			L = bits.Len64(uint64(mean)) - 1
		}
	}
	var bitsOut []bool
	for _, g := range gaps {
		g--
		q := g >> L
		if q > maxRiceQ {
			return cell
		}
		for ; q > 0; q-- {
			bitsOut = append(bitsOut, true)
		}
		bitsOut = append(bitsOut, false)
		for i := L - 1; i >= 0; i-- {
			bitsOut = append(bitsOut, g>>i&1 == 1)
		}
	}
	rice := make([]byte, baseHeaderLen)
	rice = binary.AppendUvarint(rice, uint64(len(rs)))
	rice = binary.AppendUvarint(rice, rs[0])
	rice = append(rice, byte(L))
	for i := 0; i < len(bitsOut); i += 8 {
		var b byte
		for j := range 8 {
			b <<= 1
			if i+j < len(bitsOut) && bitsOut[i+j] {
				b |= 1
			}
		}
		rice = append(rice, b)
	}
	rice[0] = baseRice
	binary.BigEndian.PutUint32(rice[1:], crc32.Checksum(rice[baseHeaderLen:], castagnoli))
	if len(rice) < len(cell) {
		return rice
	}
	return cell
}

// The encoder skips the Snappy trial for chunks with wide gaps; on rows of
// random fingerprints (what loads write), of every size and residual width
// a layout makes, and on dense and clustered rows, its cells must be
// byte for byte what the full trial picks.
func TestChunkChoiceMatchesFullTrial(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	gen := map[string]func(n, width int) []uint64{
		"random": func(n, width int) []uint64 {
			set := map[uint64]bool{}
			for len(set) < n {
				set[r.Uint64()>>(64-width)] = true
			}
			return slices.Sorted(maps.Keys(set))
		},
		"clustered": func(n, width int) []uint64 {
			set := map[uint64]bool{}
			base := r.Uint64() >> (64 - width)
			for len(set) < n {
				set[(base+r.Uint64()%uint64(4*n))&(1<<width-1)] = true
			}
			return slices.Sorted(maps.Keys(set))
		},
		"strided": func(n, width int) []uint64 {
			rs := make([]uint64, n)
			stride := uint64(1) << (width / 2)
			for i := range rs {
				rs[i] = uint64(i) * stride
			}
			return rs
		},
	}
	cases := 0
	for name, g := range gen {
		for _, width := range []int{24, 32, 38, 48, 52} {
			for _, n := range []int{1, 2, 3, 5, 12, 40, 150, 1500} {
				for rep := range 20 {
					rs := g(n, width)
					cells, err := EncodeBaseSet(rs, width, 1<<20)
					if err != nil {
						t.Fatal(err)
					}
					if len(cells) != 1 {
						t.Fatalf("%s: %d chunks", name, len(cells))
					}
					if want := refChunk(rs); !bytes.Equal(cells[0], want) {
						t.Fatalf("%s width %d n %d rep %d: cell %x, the full trial gives %x", name, width, n, rep, cells[0], want)
					}
					cases++
				}
			}
		}
	}
	t.Logf("%d chunks identical", cases)
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

// TestRepeats4 checks repeats4 against a map of every 4-byte window, over
// payloads with and without repeats, of growing and shrinking sizes (the
// table is reused at its largest size).
func TestRepeats4(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	var b BaseSetBuilder
	for i := range 3000 {
		p := make([]byte, r.IntN(2000))
		for k := range p {
			p[k] = byte(r.Uint32())
		}
		switch {
		case i%3 == 0 && len(p) > 12: // a planted repeat
			a, c := r.IntN(len(p)-4), r.IntN(len(p)-4)
			if a != c {
				copy(p[c:c+4], p[a:a+4])
			}
		case i%7 == 0:
			clear(p) // zeros: repeats once 5 bytes long
		}
		if got, want := b.repeats4(p), repeats4Oracle(p); got != want {
			t.Fatalf("payload %d, %d bytes: repeats4 = %v, want %v", i, len(p), got, want)
		}
	}
}

// TestRepeats4GenerationWrap: after the table's generation counter wraps,
// entries left by a call before the wrap under the generation number that
// comes round again do not count as seen.
func TestRepeats4GenerationWrap(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	noRepeats := func(n int) []byte {
		for {
			p := make([]byte, n)
			for k := range p {
				p[k] = byte(r.Uint32())
			}
			if !repeats4Oracle(p) {
				return p
			}
		}
	}
	var b BaseSetBuilder
	p := noRepeats(100)
	if b.repeats4(p) { // generation 1
		t.Fatal("repeats4 found a repeat in a payload without one")
	}
	b.seenGen = 1<<32 - 1
	b.repeats4([]byte{1, 2, 3, 4, 5}) // wraps
	q := noRepeats(100)
	copy(q, p[:4]) // p's first window: a repeat only across calls
	if repeats4Oracle(q) {
		t.Skip("the random payload repeats a window")
	}
	if b.repeats4(q) {
		t.Fatal("after the generation wrapped, a window of a call before the wrap counted as seen")
	}
}

func repeats4Oracle(p []byte) bool {
	seen := map[uint32]bool{}
	for i := 0; i+4 <= len(p); i++ {
		v := binary.LittleEndian.Uint32(p[i:])
		if seen[v] {
			return true
		}
		seen[v] = true
	}
	return false
}
