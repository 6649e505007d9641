package seen

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestGoldenCells pins the persisted layout (docs/FORMAT.md, "seen
// table"): a fixed scenario's row, cell by cell, must match
// testdata/golden_cells.json byte for byte. Run with -update only for a
// deliberate, versioned format change.
func TestGoldenCells(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	st := openPebble(t)
	s := openService(t, st, Config{Now: clock.Now})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Mark(bg, "alice", []Mark{{ID: "a"}, {ID: "b", Fingerprint: 0x0123456789abcdef, HasFingerprint: true}, {ID: "c"}})
	must(err)
	_, err = s.FoldUser(bg, "alice")
	must(err)
	clock.Advance(24 * time.Hour)
	_, err = s.Mark(bg, "alice", []Mark{{ID: "d", Fingerprint: 0xfedcba9876543210, HasFingerprint: true}})
	must(err)
	must(s.Delete(bg, "alice", "c"))
	row := rowCells(t, st, "alice")
	got := map[string]any{"row_key": hex.EncodeToString(row.Key)}
	cells := map[string]string{}
	for _, c := range row.Cells {
		cells[hex.EncodeToString(c.Qualifier)] = hex.EncodeToString(c.Value)
	}
	got["cells"] = cells
	out, err := json.MarshalIndent(got, "", "  ")
	must(err)
	out = append(out, '\n')
	path := filepath.Join("testdata", "golden_cells.json")
	if *update {
		must(os.MkdirAll("testdata", 0o755))
		must(os.WriteFile(path, out, 0o644))
	}
	want, err := os.ReadFile(path)
	must(err)
	if string(want) != string(out) {
		t.Fatalf("seen cells changed (a format change needs a new FormatVersion):\ngot  %s\nwant %s", out, want)
	}
}

func TestRowKey(t *testing.T) {
	for _, u := range []string{"a", "user-1", "用户", string(make([]byte, 0))} {
		if u == "" {
			continue
		}
		k := RowKey(u)
		got, err := UserOf(k)
		if err != nil || got != u {
			t.Fatalf("UserOf(RowKey(%q)) = %q, %v", u, got, err)
		}
		k[0] ^= 1
		if _, err := UserOf(k); err == nil {
			t.Fatalf("a wrong salt for %q was accepted", u)
		}
	}
	if _, err := UserOf([]byte{1, 2}); err == nil {
		t.Fatal("a key without user was accepted")
	}
	// Users spread over the salt space.
	seen := map[byte]bool{}
	for i := range 2000 {
		seen[RowKey(string(rune('a'+i%26)) + string(rune(0x4e00+i)))[0]] = true
	}
	if len(seen) < 200 {
		t.Fatalf("2000 users used %d of 256 leading salt bytes", len(seen))
	}
}

func TestFPSetRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 100, 5000} {
		for _, maxCell := range []int{storage.MinCellBytes + 16, 4096, DefaultMaxCellBytes} {
			pairs := make([]fpPair, 0, n)
			h := uint64(0)
			for range n {
				h += 1 + rng.Uint64N(1<<20)
				pairs = append(pairs, fpPair{hash: h, fp: rng.Uint64()})
			}
			vals := encodeFPSet(pairs, maxCell)
			var got []fpPair
			for _, v := range vals {
				if len(v) > maxCell {
					t.Fatalf("n=%d: cell of %d bytes over the limit %d", n, len(v), maxCell)
				}
				var err error
				if got, err = decodeFPSet(got, v, 64); err != nil {
					t.Fatalf("n=%d: %v", n, err)
				}
			}
			if !slices.Equal(got, pairs) {
				t.Fatalf("n=%d max=%d: round trip differs", n, maxCell)
			}
		}
	}
	// Damage is detected: every single-byte change of a cell fails.
	v := encodeFPSet([]fpPair{{1, 2}, {5, 6}, {900, 7}}, 4096)[0]
	for i := range v {
		d := slices.Clone(v)
		d[i] ^= 0x40
		if _, err := decodeFPSet(nil, d, 64); err == nil {
			t.Fatalf("byte %d flipped: accepted", i)
		}
	}
	// Hash width is checked.
	if _, err := decodeFPSet(nil, encodeFPSet([]fpPair{{1 << 41, 1}}, 4096)[0], 40); err == nil {
		t.Fatal("a 42-bit hash passed as 40 bits")
	}
}

func FuzzDecodeFPSet(f *testing.F) {
	f.Add(encodeFPSet([]fpPair{{1, 2}, {5, 6}}, 4096)[0])
	f.Add(encodeFPSet([]fpPair{{0, 0}}, 4096)[0])
	f.Add([]byte{fpSetV1, 0, 0, 0, 0, 1})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		pairs, err := decodeFPSet(nil, v, 40)
		if err != nil {
			if !errors.Is(err, errCell) || len(pairs) != 0 {
				t.Fatalf("error %v with %d pairs", err, len(pairs))
			}
			return
		}
		for i := 1; i < len(pairs); i++ {
			if pairs[i].hash <= pairs[i-1].hash {
				t.Fatalf("decoded pairs out of order: %v", pairs)
			}
		}
		// A valid cell is canonical: re-encoding gives it back.
		if re := encodeFPSet(pairs, len(v)+32); len(re) != 1 || string(re[0]) != string(v) {
			t.Fatalf("re-encoding %x gave %x", v, re)
		}
	})
}

// FuzzDecodeRow feeds arbitrary cells (qualifier, value pairs cut from the
// input) to the read path and the fold: no panic, and every failure is a
// kvindex.ErrCorrupt.
func FuzzDecodeRow(f *testing.F) {
	enc := func(cells ...[]byte) []byte {
		var out []byte
		for _, c := range cells {
			out = append(out, byte(len(c)))
			out = append(out, c...)
		}
		return out
	}
	base, _ := storage.EncodeBaseSet([]uint64{3, 9, 1 << 30}, 40, 4096)
	f.Add(enc(chunkQualifier(qualBase, 10, 0), base[0], deltaQualifier(qualDelta, 10, 7), nil, tombQualifier(9), []byte{1}))
	f.Add(enc(chunkQualifier(qualFPs, 10, 0), encodeFPSet([]fpPair{{3, 1}}, 4096)[0], deltaQualifier(qualFPDel, 11, 3), []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	f.Add(enc([]byte("b"), []byte("x")))
	f.Fuzz(func(t *testing.T, in []byte) {
		var row storage.Row
		row.Key = RowKey("fuzz")
		for len(in) > 0 {
			n := int(in[0])
			in = in[1:]
			if n > len(in) {
				n = len(in)
			}
			q := in[:n]
			in = in[n:]
			var v []byte
			if len(in) > 0 {
				m := min(int(in[0]), len(in)-1)
				v, in = in[1:1+m], in[1+m:]
			}
			row.Cells = append(row.Cells, storage.Cell{Qualifier: q, Value: v})
		}
		slices.SortFunc(row.Cells, func(a, b storage.Cell) int { return slices.Compare(a.Qualifier, b.Qualifier) })
		if _, err := decodeRow(row, 5, 40, true); err != nil && !errors.Is(err, kvindex.ErrCorrupt) {
			t.Fatalf("decodeRow: %v is not ErrCorrupt", err)
		}
		if _, _, err := foldMutations(row, 5, 40, 4096, storage.Buckets{Width: time.Hour}); err != nil && !errors.Is(err, kvindex.ErrCorrupt) {
			t.Fatalf("foldMutations: %v is not ErrCorrupt", err)
		}
	})
}

// TestFoldKeepsAnswers: folding never changes what a check answers, and a
// second fold writes nothing.
func TestFoldKeepsAnswers(t *testing.T) {
	st := openPebble(t)
	s := openService(t, st, Config{MaxCellBytes: 128}) // tiny cells: several chunks
	var marks []Mark
	var ids []string
	for i := range 500 {
		id := string(rune(0x4e00 + i))
		ids = append(ids, id, id+"-absent")
		marks = append(marks, Mark{ID: id, Fingerprint: fingerprint.Fingerprint(i), HasFingerprint: i%2 == 0})
	}
	if _, err := s.Mark(bg, "u", marks); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(bg, "u", ids[0]); err != nil {
		t.Fatal(err)
	}
	before, err := s.Check(bg, "u", ids[:1000])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.FoldUser(bg, "u"); err != nil {
		t.Fatal(err)
	}
	after, err := s.Check(bg, "u", ids[:1000])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, after) || before[0] || !before[2] || before[3] {
		t.Fatalf("fold changed answers (or the data is wrong): %v", after[:4])
	}
	chunks := 0
	for _, c := range rowCells(t, st, "u").Cells {
		if c.Qualifier[0] == qualBase {
			chunks++
		}
	}
	if chunks < 2 {
		t.Fatalf("%d base chunks with 128-byte cells, want several", chunks)
	}
	sum, err := s.FoldUser(bg, "u")
	if err != nil || sum.RowsFolded != 0 {
		t.Fatalf("second fold: %+v %v", sum, err)
	}
}
