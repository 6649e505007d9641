package fingerprint

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestLayoutShapes(t *testing.T) {
	tests := []struct {
		l          Layout
		tables     int
		widths     []int
		prefixBits []int // of each table, when all equal give one value
	}{
		{Layout{4, 3}, 4, []int{16, 16, 16, 16}, []int{16}},
		{Layout{5, 3}, 10, []int{13, 13, 13, 13, 12}, []int{26, 26, 26, 25, 26, 26, 25, 26, 25, 25}},
		{Layout{6, 3}, 20, []int{11, 11, 11, 11, 10, 10}, nil},
		{Layout{4, 2}, 6, []int{16, 16, 16, 16}, []int{32}},
		{Layout{2, 0}, 1, []int{32, 32}, []int{64}},
	}
	for _, tc := range tests {
		if err := tc.l.Validate(); err != nil {
			t.Fatalf("%v: %v", tc.l, err)
		}
		if got := tc.l.NumTables(); got != tc.tables || len(tc.l.Tables()) != tc.tables {
			t.Errorf("%v: %d tables, want %d", tc.l, got, tc.tables)
		}
		next := 0
		for i, w := range tc.widths {
			start, width := tc.l.Block(i)
			if start != next || width != w {
				t.Errorf("%v block %d = (%d,%d), want (%d,%d)", tc.l, i, start, width, next, w)
			}
			next += width
		}
		if next != 64 {
			t.Errorf("%v: blocks cover %d bits", tc.l, next)
		}
		for ti := range tc.l.NumTables() {
			pb := tc.l.PrefixBits(ti)
			switch {
			case len(tc.prefixBits) == 1 && pb != tc.prefixBits[0]:
				t.Errorf("%v table %d: %d prefix bits, want %d", tc.l, ti, pb, tc.prefixBits[0])
			case len(tc.prefixBits) > 1 && pb != tc.prefixBits[ti]:
				t.Errorf("%v table %d: %d prefix bits, want %d", tc.l, ti, pb, tc.prefixBits[ti])
			}
		}
	}
}

func TestLayoutValidate(t *testing.T) {
	for _, l := range []Layout{{1, 0}, {4, 4}, {4, -1}, {17, 3}, {16, 8}} {
		if err := l.Validate(); !errors.Is(err, ErrBadLayout) {
			t.Errorf("%v: err = %v, want ErrBadLayout", l, err)
		}
	}
}

// TestPermuterProperties checks the facts the index relies on: Permute is a
// bijection, prefix+residual rebuild it, and two fingerprints within distance
// K share the prefix of at least one table.
func TestPermuterProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, l := range []Layout{{4, 3}, {5, 3}, {6, 3}, {4, 1}, {8, 4}} {
		ps := l.Permuters()
		for i := 0; i < 2000; i++ {
			f := Fingerprint(r.Uint64())
			for ti, p := range ps {
				v := p.Permute(f)
				if p.Unpermute(v) != f {
					t.Fatalf("%v table %d: Unpermute(Permute(%v)) != f", l, ti, f)
				}
				if p.Join(p.Prefix(v), p.Residual(v)) != v {
					t.Fatalf("%v table %d: Join broken", l, ti)
				}
				g := Fingerprint(r.Uint64())
				if Distance(f, g) != Distance(Fingerprint(p.Permute(f)), Fingerprint(p.Permute(g))) {
					t.Fatalf("%v: Permute changes distances", l)
				}
			}
			// Flip up to K random bits: some table must keep the prefix.
			g := f
			for n := r.IntN(l.K + 1); n > 0; n-- {
				g ^= 1 << r.IntN(64)
			}
			shared := false
			for _, p := range ps {
				if p.Prefix(p.Permute(f)) == p.Prefix(p.Permute(g)) {
					shared = true
				}
			}
			if !shared {
				t.Fatalf("%v: %v and %v (distance %d) share no prefix", l, f, g, Distance(f, g))
			}
		}
	}
}

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in   string
		want Fingerprint
		ok   bool
	}{
		{"00000000000000ff", 255, true},
		{"FFFFFFFFFFFFFFFF", ^Fingerprint(0), true},
		{"0xff", 255, true},
		{"0X1", 1, true},
		{"12345", 12345, true},
		{"18446744073709551615", ^Fingerprint(0), true},
		{"d:1234567890123456", 1234567890123456, true},
		{" 42 ", 42, true},
		{"", 0, false},
		{"0x", 0, false},
		{"0x10000000000000000", 0, false},
		{"18446744073709551616", 0, false},
		{"-1", 0, false},
		{"12ab", 0, false},
		{"zzzzzzzzzzzzzzzz", 0, false},
		{"d:12a", 0, false},
	}
	for _, tc := range tests {
		got, err := Parse(tc.in)
		if tc.ok != (err == nil) || (tc.ok && got != tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if !tc.ok && !errors.Is(err, ErrBadFingerprint) {
			t.Errorf("Parse(%q) error %v does not wrap ErrBadFingerprint", tc.in, err)
		}
	}
	for _, f := range []Fingerprint{0, 1, 0xdeadbeefcafef00d, ^Fingerprint(0)} {
		s := f.String()
		if len(s) != 16 {
			t.Errorf("%d formats as %q", uint64(f), s)
		}
		if g, err := Parse(s); err != nil || g != f {
			t.Errorf("round trip %q -> %v, %v", s, g, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0xff", "00000000000000ff", "123", "d:5", "", "0x", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrBadFingerprint) {
				t.Fatalf("error %v does not wrap ErrBadFingerprint", err)
			}
			return
		}
		if w, err := Parse(v.String()); err != nil || w != v {
			t.Fatalf("round trip of %v: %v %v", v, w, err)
		}
	})
}

func TestDistance(t *testing.T) {
	if d := Distance(0, ^Fingerprint(0)); d != 64 {
		t.Fatal(d)
	}
	if d := Distance(0b1011, 0b0001); d != 2 {
		t.Fatal(d)
	}
}
