// Package fingerprint turns documents into the numbers the simdex index stores:
// a 64-bit weighted simhash of the body, a title simhash and an exact-content
// hash, together with the helpers the index needs to work with fingerprints
// (Hamming distance, parsing and formatting, and the block-permutation layout
// that the pigeonhole index is built on).
//
// # Recipe (RecipeVersion 4)
//
// A Fingerprinter (New; about 4-5 s and 200 MiB on a 2-core machine, see
// BENCHMARKS) computes, for the body and separately for the title:
//
//  1. Normalize: strip markup (tags, comments, entities; the content of
//     script, style, nav, head, header, footer, aside, form...), Unicode
//     NFKC (folds full-width forms), lower case, traditional Chinese
//     characters folded to simplified (recipe 3: OpenCC's TSCharacters,
//     tradsimp_table.go), ’ to ', whitespace
//     collapsed per line. Then, per line: a trailing "read more"/"阅读全文"
//     link is cut off (the teaser stays); empty lines, short (<= 60
//     characters) boilerplate lines (copyright, 版权所有, 责任编辑,
//     上一篇/下一篇, share, ads...), navigation bars and breadcrumbs (three
//     or more very short entries split by "|", ">"... or, in Chinese, by
//     spaces), datelines and counters (short lines at least 30% digits) and
//     "related articles" blocks (a list heading and the short unpunctuated
//     lines after it) are dropped; a short line that recurs inside a
//     dropped boilerplate line (a masthead named again in the copyright)
//     is dropped too. Then short (<= 24 characters) lines without sentence
//     punctuation or a colon at the head and tail of the text, before the
//     first and after the last longer or punctuated line, are dropped
//     (recipe 3: mastheads, section labels, footer links of any site). For
//     the body, lines repeating the title (a page's headline: the title as
//     a whole word, with at most a short site name and no sentence around
//     it; recipe 4, where recipe 2 also dropped short sentences using the
//     title's words) are dropped as well. ExactHash is xxhash64 of
//     this text; Chars its length in characters.
//  2. Tokenize: runs of Han characters go to gse's dictionary segmenter
//     (simplified and traditional dictionaries, shortest path, never HMM;
//     runs are cut at 2,000 characters to bound memory); runs of other
//     letters and digits are words (an inner apostrophe belongs to the word,
//     a trailing 's is dropped). Everything else separates.
//  3. Filter: Han words keep content parts of speech only (n*, v*, a*, i, l,
//     j, eng) and are dropped when in gse's stop list or the project's extra
//     list (stopwords_zh_extra.txt); Latin words are dropped when one
//     character long, starting with a digit (numbers, "10km") or in the
//     project's English list (stopwords_en.txt, which includes number
//     words). One-character Han pseudo-words gse invents for characters
//     its dictionary lacks are dropped.
//  4. Features: every kept word (unigram), plus every pair of consecutive
//     kept words (bigram, Config.BigramWeight). Bigrams span removed stop
//     words and punctuation, so edits to those change no feature; they make
//     word order count, so documents sharing a vocabulary but not sentences
//     stay apart.
//  5. Weight: (1 + ln tf) x IDF. Han IDF is jieba's table (gse.ZhIdf,
//     parsed once), unknown words get its mean (~11.7). Latin words get that
//     mean IDF as a constant: no English IDF table ships, so within English
//     text term frequency alone ranks words. A bigram's IDF is the mean of
//     its words' times BigramWeight. Features in the lead (the first
//     Config.LeadChars characters of kept words) are multiplied by
//     LeadBoost; body features also found in the title by TitleBoost
//     (default 1, i.e. off, since recipe 2).
//  6. Hash each feature with xxhash64 (a bigram as "a\x1fb"), add its
//     weight to the 64 bit counters where its hash has a 1 and subtract it
//     where it has a 0, in document order; bit i of the simhash is 1 where
//     counter i is positive.
//  7. Sketch (recipe 3): the SketchSize smallest 32-bit hashes (the high
//     half of each feature's xxhash64) of the distinct body features, a
//     bottom-k MinHash sketch for the second check on candidates (Jaccard).
//
// A body with fewer than Config.MinFeatures distinct kept words is a
// low-information document (Result.LowInformation): its fingerprint
// stands for its exact text; an empty one is ErrEmpty. Never a zero
// fingerprint.
package fingerprint

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// ErrBadFingerprint is returned (wrapped) when a textual fingerprint cannot be parsed.
var ErrBadFingerprint = errors.New("fingerprint: bad fingerprint")

// Fingerprint is a 64-bit simhash. Two fingerprints of near-identical text
// differ in few bits; Distance counts them.
type Fingerprint uint64

// Distance returns the Hamming distance between a and b (0..64).
func Distance(a, b Fingerprint) int {
	return bits.OnesCount64(uint64(a ^ b))
}

// String formats f as 16 lower-case hexadecimal digits, the canonical form
// simdex uses in JSON, logs and tools.
func (f Fingerprint) String() string {
	var buf [16]byte
	const hexdigits = "0123456789abcdef"
	v := uint64(f)
	for i := 15; i >= 0; i-- {
		buf[i] = hexdigits[v&0xf]
		v >>= 4
	}
	return string(buf[:])
}

// MarshalText implements encoding.TextMarshaler (the canonical hex form), so a
// Fingerprint is a JSON string: JSON numbers lose precision above 2^53.
func (f Fingerprint) MarshalText() ([]byte, error) {
	return []byte(f.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with the rules of Parse.
func (f *Fingerprint) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// Parse reads a fingerprint written as exactly 16 hexadecimal digits
// (optionally with a 0x prefix, either case) or as an unsigned decimal number
// (optionally with a "d:" prefix to force decimal for 16-digit numbers).
// Anything else is an error wrapping ErrBadFingerprint.
func Parse(s string) (Fingerprint, error) {
	orig := s
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return 0, fmt.Errorf("%w: empty", ErrBadFingerprint)
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		h := s[2:]
		if len(h) == 0 || len(h) > 16 {
			return 0, fmt.Errorf("%w: %q: want 1-16 hex digits after 0x", ErrBadFingerprint, orig)
		}
		v, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not hexadecimal", ErrBadFingerprint, orig)
		}
		return Fingerprint(v), nil
	case strings.HasPrefix(s, "d:"):
		v, err := strconv.ParseUint(s[2:], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not an unsigned 64-bit decimal", ErrBadFingerprint, orig)
		}
		return Fingerprint(v), nil
	case len(s) == 16:
		v, err := strconv.ParseUint(s, 16, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not 16 hexadecimal digits", ErrBadFingerprint, orig)
		}
		return Fingerprint(v), nil
	default:
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q: want 16 hex digits, 0x-prefixed hex or an unsigned decimal", ErrBadFingerprint, orig)
		}
		return Fingerprint(v), nil
	}
}
