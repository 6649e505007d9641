package fingerprint

//go:generate go run ../scripts/gen/tradsimp -out tradsimp_table.go

// tradSimp maps traditional Chinese characters to their simplified form
// (OpenCC's TSCharacters, first candidate; tradsimp_table.go). Built once
// at package initialization, read-only afterwards.
var tradSimp = func() map[rune]rune {
	m := make(map[rune]rune, 4096)
	rs := []rune(tradSimpPairs)
	for i := 0; i+1 < len(rs); i += 2 {
		m[rs[i]] = rs[i+1]
	}
	return m
}()

// tradLo..tradHi is the CJK range (Extension A and the Unified Ideographs)
// where tradBits marks, one bit per character, the keys of tradSimp: most
// characters of simplified text are not keys, and a bit test is far cheaper
// than a map lookup on the hot path. Built with tradSimp, read-only.
const tradLo, tradHi = 0x3400, 0xA000

var tradBits = func() *[(tradHi - tradLo) / 64]uint64 {
	var b [(tradHi - tradLo) / 64]uint64
	for r := range tradSimp {
		if r >= tradLo && r < tradHi {
			b[(r-tradLo)/64] |= 1 << ((r - tradLo) % 64)
		}
	}
	return &b
}()

// foldTrad returns the simplified form of a traditional character, or r.
// Folding (recipe 3) makes a page converted between the two scripts
// segment into the same words: gse's IDF table and most of its dictionary
// are simplified, so unfolded traditional text shares almost no features
// with its simplified original.
func foldTrad(r rune) rune {
	switch {
	case r < 0x2E80: // below the CJK radicals: never a key
		return r
	case r >= tradLo && r < tradHi && tradBits[(r-tradLo)/64]&(1<<((r-tradLo)%64)) == 0:
		return r
	}
	if s, ok := tradSimp[r]; ok {
		return s
	}
	return r
}
