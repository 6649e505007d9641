package fingerprint

import (
	"slices"
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
// aligning the texts (package decide): a copy cut short or inside a
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
	// TextKeyChars: a document under this many normalized characters is
	// short to the text keys: it keys its sentences from the first
	// (TextKeys); a longer one its first and last (DocTextKeys).
	TextKeyChars = 400
	// MaxShortTextKeys caps the text keys of a document under
	// TextKeyChars (it has at most ~6 English or ~12 Chinese sentences).
	MaxShortTextKeys = 12
	// MaxTextKeys caps the text keys of any stored document
	// (DocTextKeys: a longer one keeps its lead, first and last
	// sentences).
	MaxTextKeys = 64
	// LongHeadKeys is how many of its first sentences a longer document
	// keys before its last ones.
	LongHeadKeys = 32
	// MaxQueryTextKeys caps the text keys a query may look up
	// (Bands.ValidateQuery).
	MaxQueryTextKeys = 64
	// TextKeyMinWeight is the least weight of a keyed sentence.
	TextKeyMinWeight = 10
	// TextKeyLeadWeight is the weight of the lead key's tokens.
	TextKeyLeadWeight = 16
	// TextKeysVersion names the text-key recipe (what a sentence is, the
	// weights, the hash, TextKeyChars and MaxTextKeys) for index metadata:
	// an index records it, and one recorded with another version is
	// refused.
	TextKeysVersion = "sent10-lead16-max12-long64h32-v2"
)

// Key kinds, hashed first so a sentence key and a lead key of the same
// tokens differ.
const (
	keySentence = 's'
	keyLead     = 'l'
)

// Sentence is one keyed sentence of a normalized text: its key and where
// it stands (byte offsets; Text[Start:End] runs from its first token to the
// end of its last one).
type Sentence struct {
	Key        uint64
	Start, End int
}

// Sentences returns the lead key of normalized text (0 when the text is
// lighter than TextKeyLeadWeight) and every keyed sentence, in text order
// (a sentence that repeats is listed each time). TextKeys and the
// decision rule's template detection both read texts through it, so a
// sentence has one key everywhere.
func Sentences(text string) (lead uint64, sents []Sentence) {
	var (
		sent   []byte // the current sentence's tokens, NUL-separated
		sw     int    // its weight
		s0, s1 int    // its first token's start, its last token's end
		lbuf   []byte // the lead's tokens
		lw     int    // its weight
		leadOK bool
	)
	endSentence := func() {
		if sw >= TextKeyMinWeight {
			sents = append(sents, Sentence{Key: hashKey(keySentence, sent), Start: s0, End: s1})
		}
		sent, sw = sent[:0], 0
	}
	token := func(tok string, w, at, end int) {
		if sw == 0 && len(sent) == 0 {
			s0 = at
		}
		s1 = end
		sent = append(append(sent, tok...), 0)
		sw += w
		if !leadOK {
			lbuf = append(append(lbuf, tok...), 0)
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
			token(text[i:i+size], 1, i, i+size)
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
				token("#", 2, i, j)
			} else {
				token(text[i:j], 2, i, j)
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
		lead = hashKey(keyLead, lbuf)
	}
	return lead, sents
}

// TextKeys returns the text keys of normalized text (see TextKeyBand):
// lead first, then sentences in order, distinct, at most max.
func TextKeys(text string, max int) []uint64 {
	if max <= 0 {
		return nil
	}
	lead, sents := Sentences(text)
	var keys []uint64
	if lead != 0 {
		keys = append(keys, lead)
	}
	for _, s := range sents {
		if len(keys) >= max {
			break
		}
		if !slices.Contains(keys, s.Key) {
			keys = append(keys, s.Key)
		}
	}
	return keys
}

// DocTextKeys returns the text keys a document stores (and a query looks
// up): for a text under TextKeyChars characters its TextKeys (at most
// MaxShortTextKeys); for a longer one its lead, its first LongHeadKeys
// sentences, then its last ones (last first), at most MaxTextKeys
// distinct keys in all: every sentence of a text of up to ~60 sentences.
// The first sentences hold a copied short text most often; the last ones
// what a site, an author or a list appends to every text (signatures,
// footers, licence and "reporting bugs" sections). The rows of these keys
// are how the decision rule learns what is template, so a sentence left
// unkeyed is one whose sharing goes unseen.
func DocTextKeys(text string, chars int) []uint64 {
	if chars < TextKeyChars {
		return TextKeys(text, MaxShortTextKeys)
	}
	lead, sents := Sentences(text)
	keys := make([]uint64, 0, min(MaxTextKeys, len(sents)+1))
	add := func(k uint64) {
		if len(keys) < MaxTextKeys && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if lead != 0 {
		add(lead)
	}
	n := len(sents)
	for i := 0; i < n && i < LongHeadKeys; i++ {
		add(sents[i].Key)
	}
	for i := n - 1; i >= LongHeadKeys && len(keys) < MaxTextKeys; i-- {
		add(sents[i].Key)
	}
	return keys
}

// QueryBands returns what a query looks up in the bands table: its band
// signature b (the Result.Bands of a text of chars normalized characters)
// as a document stores it (LSH bands and DocTextKeys), or, when b carries
// only the LSH bands of a longer text, those followed by the text's
// DocTextKeys, so a short original is found from a longer page that holds
// it and the rows of its sentences tell which of them are template. Nil
// when b has no LSH bands.
func QueryBands(b Bands, chars int, text string) Bands {
	if len(b) < NumBands {
		return nil
	}
	if chars < TextKeyChars || len(b) > NumBands {
		return b
	}
	keys := DocTextKeys(text, chars)
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
