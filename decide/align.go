package decide

import (
	"unicode"
	"unicode/utf8"
)

// The alignment check of short texts (see the package comment): two
// normalized texts are split into tokens, aligned by a longest common
// subsequence, and every difference between them is classified the way an
// editor would read it.

// tokKind is what a token is to the alignment.
type tokKind uint8

const (
	tokWord  tokKind = iota // a run of letters (and digits) without a digit-only reading
	tokNum                  // a run with a digit: a number, date, counter, time
	tokHan                  // one CJK character (Han, kana, hangul): a Chinese typo is one wrong character
	tokBreak                // a sentence end or a line break
)

type token struct {
	s    string
	kind tokKind
}

// maxAlignTokens bounds the texts the alignment reads: a text with more
// tokens is not compared by alignment. It covers TextChars of Chinese (a
// token per character).
const maxAlignTokens = 16384

// maxAlignCells bounds the alignment's work: the table of n x m cells it
// fills for the middle of the texts, between their common head and tail.
// Two long texts that differ in a few places (a sibling page: another
// name in the first lines) have a small middle; two that differ
// throughout are not compared.
const maxAlignCells = 1 << 20

// tokenize splits normalized text into alignment tokens. Punctuation other
// than sentence ends is dropped: quotes, commas, dashes and brackets are
// formatting to an editor (and the punctuation edits of the benchmark).
func tokenize(s string, buf []token) []token {
	out := buf[:0]
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isCJK(r):
			out = append(out, token{s[i : i+size], tokHan})
			i += size
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j, num := i, false
			for j < len(s) {
				c, n := utf8.DecodeRuneInString(s[j:])
				if unicode.IsDigit(c) {
					num = true
				} else if !unicode.IsLetter(c) || isCJK(c) {
					// A decimal point or a thousands separator between
					// digits stays inside the number ("3.5", "1,200").
					if (c == '.' || c == ',' || c == ':' || c == '/' || c == '-') && num && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9' {
						j += n
						continue
					}
					// An apostrophe inside a word ("don't") stays.
					if c == '\'' && j+1 < len(s) && j > i {
						if c2, _ := utf8.DecodeRuneInString(s[j+1:]); unicode.IsLetter(c2) && !isCJK(c2) {
							j += n
							continue
						}
					}
					break
				}
				j += n
			}
			k := tokWord
			if num {
				k = tokNum
			}
			out = append(out, token{s[i:j], k})
			i = j
		default:
			if isBreak(r) && (len(out) == 0 || out[len(out)-1].kind != tokBreak) {
				out = append(out, token{"", tokBreak})
			}
			i += size
		}
	}
	return out
}

func isCJK(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// isBreak reports a sentence end or a line break (NFKC has already folded
// full-width marks to ASCII; 。 has no half-width form).
func isBreak(r rune) bool {
	switch r {
	case '\n', '.', '!', '?', ';', '。', '…':
		return true
	}
	return false
}

// negations are the words that turn a statement into its opposite: an
// edit that adds, drops or replaces one is never a typo or boilerplate.
// Hand-made and small on purpose (function words, not a vocabulary).
var negations = map[string]bool{
	"not": true, "no": true, "never": true, "none": true, "nor": true, "without": true, "cannot": true,
	"isn't": true, "aren't": true, "wasn't": true, "weren't": true, "don't": true, "doesn't": true,
	"didn't": true, "won't": true, "can't": true, "couldn't": true, "shouldn't": true, "wouldn't": true,
	"hasn't": true, "haven't": true, "hadn't": true,
	"不": true, "没": true, "未": true, "非": true, "无": true, "别": true, "勿": true, "否": true,
}

// Alignment is the classified difference between two texts.
type Alignment struct {
	// WordsA and WordsB are the texts' token counts (words, numbers and
	// CJK characters; sentence ends not counted).
	WordsA, WordsB int
	// WeightA and WeightB weigh the same tokens as text: a word or number
	// 2, a CJK character 1 (a Chinese word is about two characters), so
	// one bound on how much text there is reads the same in both
	// languages.
	WeightA, WeightB int
	// Common is the number of aligned equal tokens (sentence ends excluded).
	Common int
	// Numbers, Typos and Sentences count the benign differences: a number
	// replaced by a number, a word replaced by a word one or two letter
	// edits away (or a Han character by another), and whole sentences or
	// edge lines inserted or dropped.
	Numbers, Typos, Sentences int
	// Changed counts content differences: words replaced by different
	// words, words inserted into or dropped from a sentence, negations.
	Changed int
	// ChangedSentences counts the sentences of the first text holding a
	// content difference: a reworded sentence is one, a term swapped
	// throughout a text is many.
	ChangedSentences int
	// Moved counts stretches of two or more words moved, unchanged, within
	// their sentence (clauses reordered): benign, as a reader reads the
	// same statement.
	Moved int
	// Inserted is the number of word tokens in inserted or dropped
	// sentences (both directions).
	Inserted int
	// OnlyA and OnlyB split Inserted by side: the tokens of whole
	// sentences, lines, heads or tails that only text a (b) has. A text
	// whose own tokens are almost all aligned (OnlyA small against WordsA)
	// is contained in the other: a copy cut short, or quoted inside a
	// longer page.
	OnlyA, OnlyB int
}

// Align aligns normalized texts a and b; ok is false when either text has
// more than maxAlignTokens tokens, or their differing middle would take
// more than maxAlignCells (the check does not apply). It is
// symmetric: Align(b, a) is Align(a, b) with the sides' counts swapped
// (the texts are aligned in one canonical order, since where a tie puts an
// edit can change how it reads).
func Align(a, b string) (al Alignment, ok bool) {
	if b < a {
		al, ok = Align(b, a)
		al.WordsA, al.WordsB = al.WordsB, al.WordsA
		al.WeightA, al.WeightB = al.WeightB, al.WeightA
		al.OnlyA, al.OnlyB = al.OnlyB, al.OnlyA
		return al, ok
	}
	ta := tokenize(a, nil)
	tb := tokenize(b, nil)
	if len(ta) > maxAlignTokens || len(tb) > maxAlignTokens {
		return Alignment{}, false
	}
	return align(ta, tb)
}

func align(ta, tb []token) (Alignment, bool) {
	al := Alignment{WordsA: len(content(ta)), WordsB: len(content(tb)), WeightA: weight(ta), WeightB: weight(tb)}
	// Hunks are collected first: a stretch dropped in one place and the
	// same stretch inserted in another is one edit (a move), judged as a
	// pair before the rest are classified one by one.
	hunks, ok := alignHunks(ta, tb)
	if !ok {
		return Alignment{}, false
	}
	// Every token of a outside the hunks is aligned with an equal one.
	al.Common = al.WordsA
	for _, h := range hunks {
		al.Common -= words(ta[h[0]:h[1]])
	}
	moved := al.moves(ta, tb, hunks)
	var swaps [][2]string // the single Han characters replaced, in order
	var swapSent []int    // the sentence of a each swap stands in
	changed := map[int]bool{}
	for k, h := range hunks {
		if moved[k] {
			continue
		}
		before, n := al.Changed, len(swaps)
		swaps = al.hunk(ta, tb, h[0], h[1], h[2], h[3], swaps)
		s := sentenceOf(ta, h[0])
		for range swaps[n:] {
			swapSent = append(swapSent, s)
		}
		if al.Changed > before {
			changed[s] = true
		}
	}
	// A wrong character from the input method is a slip, and slips do not
	// repeat: the same character replaced by the same other one twice
	// (余割 for 余弦, and again) is a word changed throughout, and every
	// sentence it stands in is changed.
	repeated := false
	first := make(map[[2]string]int, len(swaps)) // swap -> its first index
	for x, sw := range swaps {
		if f, ok := first[sw]; ok {
			repeated = true
			changed[swapSent[f]], changed[swapSent[x]] = true, true
		} else {
			first[sw] = x
		}
	}
	if repeated {
		al.Typos--
		al.Changed++
	}
	al.ChangedSentences = len(changed)
	return al, true
}

// minMoveTokens is the shortest stretch a move may carry: a clause, not a
// single word (one word moved is a different sentence as often as not).
const minMoveTokens = 2

// moves pairs a drop with an insertion of the same tokens inside the same
// sentence of the other text (its clauses reordered: "yesterday, the
// council met" / "the council met yesterday"), counts each pair as Moved
// and reports which hunks it took. Words that trade places one by one
// ("the dog bit the man" / "the man bit the dog") are replacements, never
// a move: a move carries an identical stretch of minMoveTokens or more.
func (al *Alignment) moves(a, b []token, hunks [][4]int) []bool {
	moved := make([]bool, len(hunks))
	for x, hx := range hunks {
		if moved[x] || hx[0] == hx[1] || hx[2] != hx[3] { // hx: a drop from a
			continue
		}
		da := a[hx[0]:hx[1]]
		if len(content(da)) < minMoveTokens || len(content(da)) != len(da) {
			continue
		}
		for y, hy := range hunks {
			if moved[y] || hy[0] != hy[1] || hy[2] == hy[3] { // hy: an insertion into b
				continue
			}
			if db := b[hy[2]:hy[3]]; tokensEqual(da, db) && sameSentence(b, hx[2], hy[2]) {
				moved[x], moved[y] = true, true
				al.Moved++
				al.Common += len(da)
				break
			}
		}
	}
	return moved
}

func tokensEqual(a, b []token) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameSentence reports whether positions p and q of ts lie in one
// sentence (no sentence end or line break between them).
func sameSentence(ts []token, p, q int) bool {
	if p > q {
		p, q = q, p
	}
	for _, t := range ts[p:min(q, len(ts))] {
		if t.kind == tokBreak {
			return false
		}
	}
	return true
}

// hunk classifies the difference a[i0:i1] -> b[j0:j1] between two aligned
// stretches, and appends a single Han character replaced (a slip, unless
// it repeats) to swaps.
func (al *Alignment) hunk(a, b []token, i0, i1, j0, j1 int, swaps [][2]string) [][2]string {
	da, db := content(a[i0:i1]), content(b[j0:j1])
	if len(da) == 0 && len(db) == 0 {
		return swaps // sentence ends or line breaks only: formatting
	}
	if len(da) == 0 || len(db) == 0 {
		// An insertion (or a drop): benign when it is whole sentences or
		// lines (it starts at a sentence boundary and ends at one), or a
		// head or tail added to the text (a dateline, a label, a
		// sign-off) without a negation; not words slipped into a sentence.
		ts, t0, t1, d := b, j0, j1, db
		if len(db) == 0 {
			ts, t0, t1, d = a, i0, i1, da
		}
		switch {
		case slidSentence(ts, t0, t1), (t0 == 0 || t1 == len(ts)) && !negated(d):
			al.Sentences++
			al.Inserted += len(d)
			if len(db) == 0 {
				al.OnlyA += len(d)
			} else {
				al.OnlyB += len(d)
			}
		case allKind(d, tokNum):
			al.Numbers++
		default:
			al.Changed++
		}
		return swaps
	}
	if negated(da) || negated(db) {
		al.Changed++
		return swaps
	}
	switch {
	case allKind(da, tokNum) && allKind(db, tokNum):
		al.Numbers++
		return swaps
	case len(da) <= 2 && len(db) <= 2 && allKind(da, tokWord) && allKind(db, tokWord) && typo(join(da), join(db)):
		// A slip that also split or joined words ("a lot" / "alot").
		al.Typos++
		return swaps
	case len(da) != len(db):
		al.Changed++
		return swaps
	}
	// As many tokens on each side: each pair must be benign on its own,
	// and at most one Han character may change (one wrong character is a
	// slip of the input method; two or more together are another word).
	han := 0
	numbers, typos := 0, 0
	for k := range da {
		x, y := da[k], db[k]
		switch {
		case x.kind == tokNum && y.kind == tokNum:
			numbers++
		case x.kind == tokHan && y.kind == tokHan:
			han++
			typos++
		case x.kind == tokWord && y.kind == tokWord && typo(x.s, y.s):
			typos++
		default:
			al.Changed++
			return swaps
		}
	}
	if han > 1 {
		al.Changed++
		return swaps
	}
	al.Numbers += numbers
	al.Typos += typos
	if han == 1 {
		for k := range da {
			if da[k].kind == tokHan && da[k] != db[k] {
				swaps = append(swaps, [2]string{da[k].s, db[k].s})
			}
		}
	}
	return swaps
}

// sentenceOf returns the index of the sentence token i stands in (the
// sentence ends and line breaks before it).
func sentenceOf(ts []token, i int) int {
	n := 0
	for _, t := range ts[:min(i, len(ts))] {
		if t.kind == tokBreak {
			n++
		}
	}
	return n
}

// weight is the text weight of ts (Alignment.WeightA).
func weight(ts []token) int {
	w := 0
	for _, t := range ts {
		switch t.kind {
		case tokWord, tokNum:
			w += 2
		case tokHan:
			w++
		}
	}
	return w
}

// negated reports whether ts holds a negation.
func negated(ts []token) bool {
	for _, t := range ts {
		if negations[t.s] {
			return true
		}
	}
	return false
}

// content drops sentence ends.
// words counts the tokens of ts that are not sentence ends.
func words(ts []token) int {
	n := 0
	for _, t := range ts {
		if t.kind != tokBreak {
			n++
		}
	}
	return n
}

func content(ts []token) []token {
	out := ts[:0:0]
	for _, t := range ts {
		if t.kind != tokBreak {
			out = append(out, t)
		}
	}
	return out
}

func allKind(ts []token, k tokKind) bool {
	for _, t := range ts {
		if t.kind != k {
			return false
		}
	}
	return true
}

// sentence reports whether ts[i0:i1] is whole sentences or lines: it
// begins at the text's start or after a sentence end, and ends at the
// text's end or with (or before) a sentence end.
func sentence(ts []token, i0, i1 int) bool {
	startOK := i0 == 0 || ts[i0-1].kind == tokBreak || ts[i0].kind == tokBreak
	endOK := i1 == len(ts) || ts[i1-1].kind == tokBreak || ts[i1].kind == tokBreak
	return startOK && endOK
}

// slidSentence is sentence for an inserted stretch ts[i0:i1], at the place
// an alignment chose or at any place it can slide to (an insertion whose
// first token equals the token after it can move one to the right, and
// likewise to the left): "a. b. c." + "b." is the same edit as "a." + "b."
// wherever the tie put it.
func slidSentence(ts []token, i0, i1 int) bool {
	if sentence(ts, i0, i1) {
		return true
	}
	for l, r := i0, i1; l > 0 && ts[l-1] == ts[r-1]; {
		l, r = l-1, r-1
		if sentence(ts, l, r) {
			return true
		}
	}
	for l, r := i0, i1; r < len(ts) && ts[l] == ts[r]; {
		l, r = l+1, r+1
		if sentence(ts, l, r) {
			return true
		}
	}
	return false
}

func join(ts []token) string {
	if len(ts) == 1 {
		return ts[0].s
	}
	s := ""
	for _, t := range ts {
		s += t.s
	}
	return s
}

// typo reports whether two different words are one slip apart: one letter
// inserted, dropped, replaced or two neighbours swapped (two slips for
// words of eight letters or more), in words of at least four letters (a
// short word one letter off is usually another word: "cat", "car").
func typo(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if max(len(ra), len(rb)) < 4 {
		return false
	}
	limit := 1
	if min(len(ra), len(rb)) >= 8 {
		limit = 2
	}
	return osa(ra, rb, limit) <= limit
}

// osa is the optimal-string-alignment distance (Levenshtein with adjacent
// transpositions) of a and b, or limit+1 when it exceeds limit.
func osa(a, b []rune, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			best = min(best, v)
		}
		if best > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
