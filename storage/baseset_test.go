package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"maps"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

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
