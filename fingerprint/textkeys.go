package fingerprint

import (
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// Text keys: the containment candidate stage for short texts. The LSH
// bands find a near-copy when the two feature sets overlap as wholes
// (Jaccard >= ~0.5); a short text cut short, or quoted inside a longer page
// (a scraper's copy with its own header, dateline and footer), shares most
// of its sentences with its original but little of its feature set:
// Jaccard 0.25-0.5, where the bands find the pair with probability
// 0.12-0.87. Text keys do not depend on the overlap of whole sets: a text's
// keys are the hashes of its sentences, each read on its own, and of its
// lead, so two texts that share one whole sentence share a key, whatever
// else either holds. The decision rule then judges such candidates by
// aligning the texts (internal/decide): a copy cut short or inside a
// longer page is the same text; two texts that share one boilerplate
// sentence are not.
//
// What a sentence is: the normalized text (Normalize: NFKC, lower case,
// traditional Chinese folded to simplified) is cut at line ends and at the
// sentence ends . ! ? ; … and 。 (NFKC has already folded the full-width
// ！？； to ASCII); a '.' between digits ("3.5") does not end a sentence.
// Inside a sentence a token is a run of letters and digits (Latin, Cyrillic
// ...; an inner apostrophe belongs to the word) or a single CJK character
// (Han, kana, hangul: Chinese has no spaces, and a character is the unit a
// Chinese editor changes); every other character (commas, quotes,
// brackets, dashes) is formatting and dropped. A token with a digit is a
// number and reads as "#": counters, dates and prices change between copies
// of the same text. A sentence is keyed when it weighs at least
// TextKeyMinWeight: a Latin word weighs 2, a CJK character 1, so five
// words or ten Chinese characters ("read more", "阅读全文", "share this"
// never link texts). The lead key hashes the text's first TextKeyLeadWeight
// (eight words, sixteen characters) across sentence ends, so a copy cut
// inside its first sentence still meets its original; a lighter text has
// no lead key.
//
// Keys are 64-bit xxhash values of the tokens (with a kind tag, so a
// sentence key never equals a lead key), deduplicated, lead first and then
// sentences in text order, at most max of them.
const (
	// TextKeyBand is the band index of every text key in the bands table
	// (kvindex.BandRowKey): one past the LSH bands, so a text key row never
	// collides with a band row, and the same for every key of a text (a
	// sentence is found wherever it stands in either text).
	TextKeyBand = NumBands
	// TextKeyChars: a document under this many normalized characters gets
	// text keys in Result.Bands (stored). It equals the decision rule's
	// default TextChars, the documents that keep their text for the
	// alignment that judges the candidates a key finds.
	TextKeyChars = 400
	// MaxTextKeys caps the text keys of a stored document (a text under
	// TextKeyChars has at most ~6 English or ~12 Chinese sentences).
	MaxTextKeys = 12
	// MaxQueryTextKeys caps the text keys a longer query looks up
	// (QueryTextKeys): its first sentences, where a copied short text
	// most often stands.
	MaxQueryTextKeys = 32
	// TextKeyMinWeight is the least weight of a keyed sentence.
	TextKeyMinWeight = 10
	// TextKeyLeadWeight is the weight of the lead key's tokens.
	TextKeyLeadWeight = 16
	// TextKeysVersion names the text-key recipe (what a sentence is, the
	// weights, the hash, TextKeyChars and MaxTextKeys) for index metadata:
	// an index records it, and one recorded with another version is
	// refused.
	TextKeysVersion = "sent10-lead16-max12-v1"
)

// Key kinds, hashed first so a sentence key and a lead key of the same
// tokens differ.
const (
	keySentence = 's'
	keyLead     = 'l'
)

// TextKeys returns the text keys of normalized text (see TextKeyBand):
// lead first, then sentences in order, distinct, at most max.
func TextKeys(text string, max int) []uint64 {
	if max <= 0 {
		return nil
	}
	var (
		keys   []uint64
		sent   []byte // the current sentence's tokens, NUL-separated
		sw     int    // its weight
		lead   []byte // the lead's tokens
		lw     int    // its weight
		leadOK bool
	)
	add := func(h uint64) {
		for _, k := range keys {
			if k == h {
				return
			}
		}
		keys = append(keys, h)
	}
	var sents []uint64
	endSentence := func() {
		if sw >= TextKeyMinWeight {
			sents = append(sents, hashKey(keySentence, sent))
		}
		sent, sw = sent[:0], 0
	}
	token := func(tok string, w int) {
		sent = append(append(sent, tok...), 0)
		sw += w
		if !leadOK {
			lead = append(append(lead, tok...), 0)
			lw += w
			if lw >= TextKeyLeadWeight {
				leadOK = true
			}
		}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case keyCJK(r):
			token(text[i:i+size], 1)
			i += size
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j, num := i, false
			for j < len(text) {
				c, n := utf8.DecodeRuneInString(text[j:])
				switch {
				case unicode.IsDigit(c):
					num = true
				case unicode.IsLetter(c) && !keyCJK(c):
				case num && (c == '.' || c == ',' || c == ':' || c == '/' || c == '-') && j+1 < len(text) && text[j+1] >= '0' && text[j+1] <= '9':
					// "3.5", "1,200", "10:30", "2024-01-02": one number.
				case c == '\'' && j > i && j+1 < len(text) && keyLetter(text[j+1:]):
					// "don't": one word.
				default:
					goto done
				}
				j += n
			}
		done:
			if num {
				token("#", 2)
			} else {
				token(text[i:j], 2)
			}
			i = j
		default:
			if keyBreak(r) {
				endSentence()
			}
			i += size
		}
	}
	endSentence()
	if leadOK {
		add(hashKey(keyLead, lead))
	}
	for _, h := range sents {
		if len(keys) >= max {
			break
		}
		add(h)
	}
	if len(keys) > max {
		keys = keys[:max]
	}
	return keys
}

// QueryBands returns what a query looks up in the bands table: its band
// signature b (the Result.Bands of a text of chars normalized characters)
// as stored for a text under TextKeyChars, and for a longer text the LSH
// bands followed by up to MaxQueryTextKeys keys of its text, so a short
// original is found from a longer page that holds it (a copy with its own
// header, dateline and footer). Nil when b has no LSH bands.
func QueryBands(b Bands, chars int, text string) Bands {
	if len(b) < NumBands {
		return nil
	}
	if chars < TextKeyChars {
		return b
	}
	keys := TextKeys(text, MaxQueryTextKeys)
	out := make(Bands, 0, NumBands+len(keys))
	return append(append(out, b.LSH()...), keys...)
}

func hashKey(kind byte, toks []byte) uint64 {
	d := xxhash.New()
	_, _ = d.Write([]byte{kind})
	_, _ = d.Write(toks)
	return d.Sum64()
}

func keyLetter(s string) bool {
	c, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(c) && !keyCJK(c)
}

// keyCJK reports a character that is a token on its own.
func keyCJK(r rune) bool {
	if r >= 0x4E00 && r <= 0x9FFF {
		// CJK Unified Ideographs, all Han: most Chinese text, without
		// the range-table search below.
		return true
	}
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// keyBreak reports a sentence end or a line end.
func keyBreak(r rune) bool {
	switch r {
	case '\n', '.', '!', '?', ';', '。', '…':
		return true
	}
	return false
}
