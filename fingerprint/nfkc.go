package fingerprint

import (
	"encoding/binary"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/simdex/simdex/internal/swar"
)

// nfkcString returns norm.NFKC.String(s), byte for byte, faster for the text
// simdex sees most: Chinese with full-width punctuation, and English.
//
// norm's quick check stops at the first rune that NFKC changes (every
// full-width comma of a Chinese text is one) and normalizes the rest of the
// text through its general path, which costs ~10% of fingerprinting a
// Chinese document. Here each rune of the Basic Multilingual Plane that
// starts a normalization segment (norm's BoundaryBefore: nothing on its
// left can combine with it) is looked up in a table of its NFKC form. When
// every rune of the text starts a segment, every rune is a segment of its
// own and NFKC of the text is the concatenation of NFKC of its runes. Any
// other rune (combining marks, Hangul jamo, runes outside the BMP, invalid
// UTF-8) sends the whole text to norm, so the result never differs
// (TestNFKCStringEveryRune, FuzzNFKCString).
func nfkcString(s string) string {
	t := nfkcTables()
	i := 0
scan:
	for i < len(s) {
		// Eight ASCII bytes at a time: every ASCII rune is nfkcSame.
		for i+8 <= len(s) && binary.LittleEndian.Uint64([]byte(s[i:i+8]))&swar.MSB == 0 {
			i += 8
		}
		if i == len(s) {
			break
		}
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
			if r >= 1<<16 || r == utf8.RuneError && size == 1 {
				return norm.NFKC.String(s)
			}
		}
		switch t.class[r] {
		case nfkcSame:
			i += size
		case nfkcSlow:
			return norm.NFKC.String(s)
		default:
			break scan
		}
	}
	if i == len(s) {
		return s // already NFKC: no allocation, as with norm
	}
	out := make([]byte, i, len(s)+16)
	copy(out, s[:i])
	for i < len(s) {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
			if r >= 1<<16 || r == utf8.RuneError && size == 1 {
				return norm.NFKC.String(s)
			}
		}
		switch k := t.class[r]; k {
		case nfkcSame:
			out = append(out, s[i:i+size]...)
		case nfkcSlow:
			return norm.NFKC.String(s)
		default:
			out = append(out, t.repl[k-nfkcMapped]...)
		}
		i += size
	}
	return string(out)
}

// Classes of a BMP rune in nfkcTables.class; from nfkcMapped on, the class
// is nfkcMapped + the index of the rune's NFKC form in repl.
const (
	nfkcSlow   = 0 // does not start a segment: normalize the text with norm
	nfkcSame   = 1 // starts a segment and NFKC leaves it unchanged
	nfkcMapped = 2
)

type nfkcTable struct {
	class []uint16 // by rune, for the 1<<16 BMP runes
	repl  []string // NFKC forms of the mapped runes
}

// nfkcTables builds the table once, on first use (~25 ms): derived from
// the norm package itself, so it follows the Unicode version norm carries.
var nfkcTables = sync.OnceValue(func() *nfkcTable {
	t := &nfkcTable{class: make([]uint16, 1<<16)}
	index := map[string]uint16{}
	for r := rune(0); r < 1<<16; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue // surrogates are not runes: slow
		}
		in := string(r)
		if !norm.NFKC.PropertiesString(in).BoundaryBefore() {
			continue
		}
		out := norm.NFKC.String(in)
		if out == in {
			t.class[r] = nfkcSame
			continue
		}
		k, ok := index[out]
		if !ok {
			if len(t.repl) >= 1<<16-nfkcMapped {
				continue // cannot happen with Unicode's few thousand; stay exact
			}
			k = uint16(nfkcMapped + len(t.repl))
			index[out] = k
			t.repl = append(t.repl, out)
		}
		t.class[r] = k
	}
	return t
})
