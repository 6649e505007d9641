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

// foldTrad returns the simplified form of a traditional character, or r.
// Folding (recipe 3) makes a page converted between the two scripts
// segment into the same words: gse's IDF table and most of its dictionary
// are simplified, so unfolded traditional text shares almost no features
// with its simplified original.
func foldTrad(r rune) rune {
	if s, ok := tradSimp[r]; ok {
		return s
	}
	return r
}
