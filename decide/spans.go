package decide

import "strings"

// SpanKind says how a stretch of one text stands in the alignment of two
// texts (AlignSpans).
type SpanKind string

// The span kinds.
const (
	// SpanSame: aligned with equal tokens of the other text.
	SpanSame SpanKind = "same"
	// SpanChanged: aligned with other tokens of the other text (a word,
	// number or stretch replaced).
	SpanChanged SpanKind = "changed"
	// SpanOnlyA and SpanOnlyB: tokens that only text a (b) has (dropped
	// from, or inserted into, the other).
	SpanOnlyA SpanKind = "only_a"
	SpanOnlyB SpanKind = "only_b"
	// SpanTemplate: the text's template (TemplateSpans), left out before
	// the texts were aligned.
	SpanTemplate SpanKind = "template"
)

// How the rule reads a difference (Span.Class), as Align counts it.
const (
	DiffNumber    = "number"    // numbers replaced by numbers (Alignment.Numbers)
	DiffTypo      = "typo"      // a slip: a letter or two, one wrong Han character (Alignment.Typos)
	DiffSentences = "sentences" // whole sentences or lines, a head or a tail (Alignment.Sentences)
	DiffMoved     = "moved"     // a clause moved within its sentence (Alignment.Moved)
	DiffContent   = "content"   // a content difference (Alignment.Changed)
)

// Span is a stretch of one text of an alignment: the bytes
// text[Start:End], from the first token of the stretch to the end of its
// last one (the punctuation and spaces between spans belong to none).
type Span struct {
	Start, End int
	Kind       SpanKind
	// Class is how the rule reads a difference (a Diff constant); "" for
	// same and template spans.
	Class string
	// Step numbers the alignment's steps in text order (a run of equal
	// tokens, or one difference): a same or changed span of text a and
	// the span of text b with the same Step are aligned with each other.
	// -1 for template spans.
	Step int
}

// Spans is the alignment of two texts shown on the texts themselves.
type Spans struct {
	// A and B are the spans of each text, in text order, not
	// overlapping.
	A, B []Span
	// Alignment is what Align counts for the pair (the texts without
	// their template).
	Alignment Alignment
}

// AlignSpans aligns normalized texts a and b as the rule does (Align on
// both texts without the template sentences of keys, sorted; see
// TemplateSpans) and returns where each text is the same as the other,
// changed, or alone, and where it is template, in byte offsets of a and
// b. ok is false when Align does not align the pair (texts too long or
// too different).
func AlignSpans(a, b string, keys []uint64) (Spans, bool) {
	sa, sb := newStripped(a, keys), newStripped(b, keys)
	al, ok := Align(sa.text, sb.text)
	if !ok {
		return Spans{}, false
	}
	// Align compares the texts in one canonical order (the smaller
	// first); the spans come from the same walk in the same order.
	swap := sb.text < sa.text
	x, y := sa, sb
	if swap {
		x, y = sb, sa
	}
	sx, sy, ok := alignedSpans(x, y)
	if !ok {
		return Spans{}, false
	}
	if swap {
		sx, sy = sy, sx
		for _, ss := range [][]Span{sx, sy} {
			for i := range ss {
				switch ss[i].Kind {
				case SpanOnlyA:
					ss[i].Kind = SpanOnlyB
				case SpanOnlyB:
					ss[i].Kind = SpanOnlyA
				}
			}
		}
	}
	return Spans{A: sa.withTemplate(sx), B: sb.withTemplate(sy), Alignment: al}, true
}

// alignedSpans walks the alignment of the stripped texts of a and b (in
// Align's canonical order) as align does, and returns the spans of each,
// in offsets of the original texts.
func alignedSpans(a, b stripped) (sa, sb []Span, ok bool) {
	ta, tb := tokenize(a.text, nil), tokenize(b.text, nil)
	oa, ok1 := tokenOffsets(a.text, ta)
	ob, ok2 := tokenOffsets(b.text, tb)
	if !ok1 || !ok2 || len(ta) > maxAlignTokens || len(tb) > maxAlignTokens {
		return nil, nil, false
	}
	hunks, ok := alignHunks(ta, tb)
	if !ok {
		return nil, nil, false
	}
	var scratch Alignment
	moved := scratch.moves(ta, tb, hunks)
	classes := make([]string, len(hunks))
	var swaps [][2]string // the single Han characters replaced, in order
	var swapHunk []int    // the hunk of each swap
	for k, h := range hunks {
		if moved[k] {
			classes[k] = DiffMoved
			continue
		}
		var c Alignment
		n := len(swaps)
		swaps = c.hunk(ta, tb, h[0], h[1], h[2], h[3], swaps)
		for range swaps[n:] {
			swapHunk = append(swapHunk, k)
		}
		switch {
		case c.Changed > 0:
			classes[k] = DiffContent
		case c.Sentences > 0:
			classes[k] = DiffSentences
		case c.Typos > 0:
			classes[k] = DiffTypo
		case c.Numbers > 0:
			classes[k] = DiffNumber
		}
	}
	// As in align: the same Han character replaced by the same other one
	// twice is a word changed throughout, not a slip.
	first := make(map[[2]string]int, len(swaps))
	for x, sw := range swaps {
		if f, ok := first[sw]; ok {
			classes[swapHunk[f]], classes[swapHunk[x]] = DiffContent, DiffContent
		} else {
			first[sw] = x
		}
	}
	step := 0
	// add appends the spans of tokens ts[i0:i1] of text s: one span, or
	// one per kept part of s when the tokens stand on both sides of a
	// template span.
	add := func(dst []Span, s stripped, ts []token, off []int, i0, i1 int, kind SpanKind, class string) []Span {
		part, start, end := -1, 0, 0
		for i := i0; i < i1; i++ {
			if ts[i].kind == tokBreak {
				continue
			}
			p := s.partOf(off[i])
			o := s.orig[p] + off[i] - s.from[p]
			if p != part {
				if part >= 0 {
					dst = append(dst, Span{Start: start, End: end, Kind: kind, Class: class, Step: step})
				}
				part, start = p, o
			}
			end = o + len(ts[i].s)
		}
		if part >= 0 {
			dst = append(dst, Span{Start: start, End: end, Kind: kind, Class: class, Step: step})
		}
		return dst
	}
	ia, ib := 0, 0 // the end of the previous hunk
	for k, h := range hunks {
		// Between two hunks every token is aligned with an equal one.
		if h[0] > ia {
			sa = add(sa, a, ta, oa, ia, h[0], SpanSame, "")
			sb = add(sb, b, tb, ob, ib, h[2], SpanSame, "")
			step++
		}
		kindA, kindB := SpanChanged, SpanChanged
		if h[2] == h[3] {
			kindA = SpanOnlyA
		}
		if h[0] == h[1] {
			kindB = SpanOnlyB
		}
		if classes[k] != "" {
			sa = add(sa, a, ta, oa, h[0], h[1], kindA, classes[k])
			sb = add(sb, b, tb, ob, h[2], h[3], kindB, classes[k])
			step++
		}
		ia, ib = h[1], h[3]
	}
	if ia < len(ta) {
		sa = add(sa, a, ta, oa, ia, len(ta), SpanSame, "")
		sb = add(sb, b, tb, ob, ib, len(tb), SpanSame, "")
	}
	return sa, sb, true
}

// alignHunks is the walk of align: the differing stretches of ta and tb
// ({a from, a to, b from, b to}, in token indexes) between the tokens the
// longest common subsequence of their middle aligns, in text order; ok is
// false when the middle is over maxAlignCells.
func alignHunks(ta, tb []token) (hunks [][4]int, ok bool) {
	lo := 0
	for lo < len(ta) && lo < len(tb) && ta[lo] == tb[lo] {
		lo++
	}
	hiA, hiB := len(ta), len(tb)
	for hiA > lo && hiB > lo && ta[hiA-1] == tb[hiB-1] {
		hiA--
		hiB--
	}
	ma, mb := ta[lo:hiA], tb[lo:hiB]
	n, m := len(ma), len(mb)
	if (n+1)*(m+1) > maxAlignCells {
		return nil, false
	}
	w := m + 1
	lcs := make([]uint16, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	hi, hj := 0, 0
	flush := func() {
		if hi < i || hj < j {
			hunks = append(hunks, [4]int{lo + hi, lo + i, lo + hj, lo + j})
		}
	}
	for i < n && j < m {
		switch {
		case ma[i] == mb[j]:
			flush()
			i, j = i+1, j+1
			hi, hj = i, j
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			i++
		default:
			j++
		}
	}
	i, j = n, m
	flush()
	return hunks, true
}

// tokenOffsets returns the byte offset in s of each token tokenize found
// in it (-1 for sentence ends, which hold no text). A token starts with a
// letter, digit or CJK character and tokenize skips none of those, so each
// token is the first occurrence of its text after the previous one.
func tokenOffsets(s string, ts []token) ([]int, bool) {
	off := make([]int, len(ts))
	at := 0
	for i, t := range ts {
		if t.kind == tokBreak {
			off[i] = -1
			continue
		}
		k := strings.Index(s[at:], t.s)
		if k < 0 {
			return nil, false
		}
		off[i] = at + k
		at += k + len(t.s)
	}
	return off, true
}

// stripped is a text without its template spans (stripTemplate), with
// what it takes to place offsets of the stripped text in the original.
type stripped struct {
	text string
	tmpl [][2]int // the template spans of the original
	// parts are the kept stretches: parts[i] starts at byte from[i] of
	// the stripped text and at byte orig[i] of the original.
	from, orig []int
}

// newStripped strips text's template spans exactly as stripTemplate does
// (each replaced by a line end), remembering where the kept parts were.
func newStripped(text string, keys []uint64) stripped {
	var s stripped
	if len(keys) > 0 {
		s.tmpl = TemplateSpans(text, keys)
	}
	if len(s.tmpl) == 0 {
		s.text, s.from, s.orig = text, []int{0}, []int{0}
		return s
	}
	var b strings.Builder
	at := 0
	for _, sp := range s.tmpl {
		s.from, s.orig = append(s.from, b.Len()), append(s.orig, at)
		b.WriteString(text[at:sp[0]])
		b.WriteByte('\n')
		at = sp[1]
	}
	s.from, s.orig = append(s.from, b.Len()), append(s.orig, at)
	b.WriteString(text[at:])
	s.text = b.String()
	return s
}

// partOf returns the kept part of the original that byte p of the
// stripped text stands in.
func (s stripped) partOf(p int) int {
	k := 0
	for k+1 < len(s.from) && s.from[k+1] <= p {
		k++
	}
	return k
}

// withTemplate merges the template spans into spans (of the original
// text, in text order), in text order.
func (s stripped) withTemplate(spans []Span) []Span {
	if len(s.tmpl) == 0 {
		return spans
	}
	out := make([]Span, 0, len(spans)+len(s.tmpl))
	t := 0
	for _, sp := range spans {
		for t < len(s.tmpl) && s.tmpl[t][0] < sp.Start {
			out = append(out, Span{Start: s.tmpl[t][0], End: s.tmpl[t][1], Kind: SpanTemplate, Step: -1})
			t++
		}
		out = append(out, sp)
	}
	for ; t < len(s.tmpl); t++ {
		out = append(out, Span{Start: s.tmpl[t][0], End: s.tmpl[t][1], Kind: SpanTemplate, Step: -1})
	}
	return out
}
