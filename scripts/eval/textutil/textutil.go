// Package textutil holds the small text helpers the benchmark's corpus
// builder and pair generator share: sentence and word splitting for
// English and Chinese, and character n-gram overlap.
package textutil

import (
	"strings"

	"github.com/cespare/xxhash/v2"
	"unicode"
	"unicode/utf8"
)

// Sentences splits a paragraph into sentences, keeping each sentence's
// closing punctuation. English sentences end at . ! ? followed by space
// and then an upper-case letter, a digit or a quote; Chinese ones at 。！？
// (and ；) wherever they are. Leading and trailing space is trimmed and
// empty sentences are dropped; joining the result with Join gives back
// the paragraph up to whitespace.
func Sentences(p string) []string {
	var out []string
	rs := []rune(p)
	start := 0
	emit := func(end int) {
		s := strings.TrimSpace(string(rs[start:end]))
		if s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '。', '！', '？', '；':
			j := i + 1
			for j < len(rs) && (rs[j] == '」' || rs[j] == '”' || rs[j] == '）') {
				j++
			}
			emit(j)
			i = j - 1
		case '.', '!', '?':
			j := i + 1
			for j < len(rs) && (rs[j] == '"' || rs[j] == '\'' || rs[j] == ')' || rs[j] == '”' || rs[j] == '’') {
				j++
			}
			if j < len(rs) && unicode.IsSpace(rs[j]) {
				k := j
				for k < len(rs) && unicode.IsSpace(rs[k]) {
					k++
				}
				if k < len(rs) && (unicode.IsUpper(rs[k]) || unicode.IsDigit(rs[k]) || rs[k] == '"' || rs[k] == '“' || isHan(rs[k])) && !abbrev(rs[start:i]) {
					emit(j)
					i = j - 1
				}
			}
		}
	}
	emit(len(rs))
	return out
}

// abbrev reports whether the text before a period ends in a common
// abbreviation (Mr. Dr. St. U.S.), which does not end a sentence.
func abbrev(before []rune) bool {
	i := len(before)
	for i > 0 && !unicode.IsSpace(before[i-1]) {
		i--
	}
	w := string(before[i:])
	switch w {
	case "Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Sr", "Gen", "Gov", "Sen", "Rep", "Col", "Lt", "No", "vs", "Mt", "Ft", "Inc", "Co", "Corp":
		return true
	}
	// Single capitals and dotted initialisms: "U.S", "J".
	if n := utf8.RuneCountInString(w); n == 1 || (n > 1 && strings.Contains(w, ".")) {
		return true
	}
	return false
}

// Join joins sentences of one language: with a space for English, with
// nothing for Chinese.
func Join(lang string, sents []string) string {
	if lang == "zh" {
		return strings.Join(sents, "")
	}
	return strings.Join(sents, " ")
}

// Paragraphs splits text at blank lines (or single newlines, for text that
// has no blank lines) into trimmed, non-empty paragraphs.
func Paragraphs(text string) []string {
	sep := "\n\n"
	if !strings.Contains(text, sep) {
		sep = "\n"
	}
	var out []string
	for _, p := range strings.Split(text, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// isHan reports whether r is a Han ideograph.
func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

// HasHan reports whether s contains a Han ideograph.
func HasHan(s string) bool {
	for _, r := range s {
		if isHan(r) {
			return true
		}
	}
	return false
}

// Words returns the maximal runs of letters and digits in s (Latin
// words; a run of Han characters is one "word", use Runs to split it).
func Words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' })
}

// Shingles returns the set of character n-grams of s after dropping
// whitespace and punctuation and folding case: a language-neutral way to
// measure how much text two documents share.
func Shingles(s string, n int) map[string]struct{} {
	var rs []rune
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			rs = append(rs, unicode.ToLower(r))
		}
	}
	set := make(map[string]struct{}, len(rs))
	for i := 0; i+n <= len(rs); i++ {
		set[string(rs[i:i+n])] = struct{}{}
	}
	if len(set) == 0 && len(rs) > 0 {
		set[string(rs)] = struct{}{}
	}
	return set
}

// Jaccard is |a ∩ b| / |a ∪ b|; 1 for two empty sets.
func Jaccard(a, b map[string]struct{}) float64 { return jaccard(a, b) }

// jaccard is Jaccard for sets of any key (Shingles and HashedShingles).
func jaccard[K comparable](a, b map[K]struct{}) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	if len(a) > len(b) { // probe the larger set with the smaller one
		a, b = b, a
	}
	in := 0
	for k := range a {
		if _, ok := b[k]; ok {
			in++
		}
	}
	return float64(in) / float64(len(a)+len(b)-in)
}

// Overlap is the Jaccard similarity of the character 5-gram sets of a and
// b: about 1 for copies, near 0 for unrelated texts.
func Overlap(a, b string) float64 {
	return HashedJaccard(HashedShingles(a, 5), HashedShingles(b, 5))
}

// HanShare is the fraction of the letters of s that are Han ideographs.
func HanShare(s string) float64 {
	han, letters := 0, 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters++
			if isHan(r) {
				han++
			}
		}
	}
	if letters == 0 {
		return 0
	}
	return float64(han) / float64(letters)
}

// HashedShingles is Shingles with each n-gram replaced by its xxhash64: the
// same sets up to (vanishingly rare) collisions, cheaper to keep and
// compare many times.
func HashedShingles(s string, n int) map[uint64]struct{} {
	// Fold to the letters and digits, then hash each window of n runes
	// as a substring (no allocation per n-gram).
	var b strings.Builder
	b.Grow(len(s))
	var offs []int // byte offset of every rune in the folded text
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			offs = append(offs, b.Len())
			b.WriteRune(unicode.ToLower(r))
		}
	}
	t := b.String()
	offs = append(offs, len(t))
	runes := len(offs) - 1
	set := make(map[uint64]struct{}, runes)
	for i := 0; i+n <= runes; i++ {
		set[xxhash.Sum64String(t[offs[i]:offs[i+n]])] = struct{}{}
	}
	if len(set) == 0 && runes > 0 {
		set[xxhash.Sum64String(t)] = struct{}{}
	}
	return set
}

// HashedJaccard is Jaccard for HashedShingles sets.
func HashedJaccard(a, b map[uint64]struct{}) float64 { return jaccard(a, b) }
