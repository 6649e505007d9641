package decide

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simdex/simdex/fingerprint"
)

// spanText is a span's text with its kind and class, for comparisons.
func spanText(text string, sp Span) string {
	s := string(sp.Kind)
	if sp.Class != "" {
		s += "/" + sp.Class
	}
	return s + ":" + text[sp.Start:sp.End]
}

func spanTexts(text string, spans []Span) []string {
	var out []string
	for _, sp := range spans {
		out = append(out, spanText(text, sp))
	}
	return out
}

// TestAlignSpansMarksEachDifference: each kind of difference is marked on
// both texts, with the class the rule reads it as.
func TestAlignSpansMarksEachDifference(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		wantA      []string
		wantB      []string
	}{
		{"identical", enBase, enBase,
			[]string{"same:" + strings.TrimSuffix(enBase, ".")}, []string{"same:" + strings.TrimSuffix(enBase, ".")}},
		{"typo", enBase, strings.Replace(enBase, "approved", "aproved", 1),
			[]string{"same:the city council", "changed/typo:approved", "same:the new budget of 4.5 million dollars on monday. the vote was close"},
			[]string{"same:the city council", "changed/typo:aproved", "same:the new budget of 4.5 million dollars on monday. the vote was close"}},
		{"number", enBase, strings.Replace(enBase, "4.5", "5.2", 1),
			[]string{"same:the city council approved the new budget of", "changed/number:4.5", "same:million dollars on monday. the vote was close"},
			[]string{"same:the city council approved the new budget of", "changed/number:5.2", "same:million dollars on monday. the vote was close"}},
		{"sentence added", enBase, enBase + " more details will follow.",
			[]string{"same:" + strings.TrimSuffix(enBase, ".")},
			[]string{"same:" + strings.TrimSuffix(enBase, "."), "only_b/sentences:more details will follow"}},
		{"word swapped", enBase, strings.Replace(enBase, "council", "senate", 1),
			[]string{"same:the city", "changed/content:council", "same:approved the new budget of 4.5 million dollars on monday. the vote was close"},
			[]string{"same:the city", "changed/content:senate", "same:approved the new budget of 4.5 million dollars on monday. the vote was close"}},
		{"word slipped in", enBase, strings.Replace(enBase, "new budget", "new education budget", 1),
			[]string{"same:the city council approved the new", "same:budget of 4.5 million dollars on monday. the vote was close"},
			[]string{"same:the city council approved the new", "only_b/content:education", "same:budget of 4.5 million dollars on monday. the vote was close"}},
		{"zh one wrong character", zhBase, strings.Replace(zhBase, "预算", "预箅", 1),
			[]string{"same:市政府周一批准了新的预", "changed/typo:算", "same:投票结果非常接近"},
			[]string{"same:市政府周一批准了新的预", "changed/typo:箅", "same:投票结果非常接近"}},
		{"zh sentence dropped", zhBase + "详情稍后公布。", zhBase,
			[]string{"same:市政府周一批准了新的预算。投票结果非常接近", "only_a/sentences:详情稍后公布"},
			[]string{"same:市政府周一批准了新的预算。投票结果非常接近"}},
		{"clauses moved", "after a long debate, the council approved the budget. the vote was close.", "the council approved the budget, after a long debate. the vote was close.",
			[]string{"only_a/moved:after a long debate", "same:the council approved the budget", "same:the vote was close"},
			[]string{"same:the council approved the budget", "only_b/moved:after a long debate", "same:the vote was close"}},
		{"repeated Han swap", "返回复数的双曲余割。复数的双曲余割可以表示为:", "返回复数的双曲余弦。复数的双曲余弦可以表示为:",
			[]string{"same:返回复数的双曲余", "changed/content:割", "same:复数的双曲余", "changed/content:割", "same:可以表示为"},
			[]string{"same:返回复数的双曲余", "changed/content:弦", "same:复数的双曲余", "changed/content:弦", "same:可以表示为"}},
	} {
		sp, ok := AlignSpans(tc.a, tc.b, nil)
		if !ok {
			t.Fatalf("%s: not aligned", tc.name)
		}
		if got := spanTexts(tc.a, sp.A); !slices.Equal(got, tc.wantA) {
			t.Errorf("%s: spans of a\n got %q\nwant %q", tc.name, got, tc.wantA)
		}
		if got := spanTexts(tc.b, sp.B); !slices.Equal(got, tc.wantB) {
			t.Errorf("%s: spans of b\n got %q\nwant %q", tc.name, got, tc.wantB)
		}
		al, _ := Align(tc.a, tc.b)
		if sp.Alignment != al {
			t.Errorf("%s: Alignment %+v, Align says %+v", tc.name, sp.Alignment, al)
		}
	}
}

// checkSpans checks the spans of a pair against Align's counts: the spans
// of each text are ordered, disjoint and cover all its tokens; the same
// spans of both texts hold the same tokens; the aligned tokens, the
// sentences only one side has and the content differences are those
// Align counts.
func checkSpans(t *testing.T, name, a, b string, sp Spans) {
	t.Helper()
	al := sp.Alignment
	count := func(text string, spans []Span, keep func(Span) bool) (n int, toks []token) {
		for _, s := range spans {
			if keep(s) {
				ts := content(tokenize(text[s.Start:s.End], nil))
				n += len(ts)
				toks = append(toks, ts...)
			}
		}
		return n, toks
	}
	for side, x := range []struct {
		text  string
		spans []Span
		words int
		only  int
		kind  SpanKind
	}{{a, sp.A, al.WordsA, al.OnlyA, SpanOnlyA}, {b, sp.B, al.WordsB, al.OnlyB, SpanOnlyB}} {
		end := 0
		for _, s := range x.spans {
			if s.Start < end || s.End <= s.Start || s.End > len(x.text) {
				t.Fatalf("%s: side %d: span %+v after offset %d in a text of %d bytes", name, side, s, end, len(x.text))
			}
			end = s.End
			if s.Kind == SpanTemplate {
				continue
			}
			if s.Kind != SpanSame && s.Kind != SpanChanged && s.Kind != x.kind {
				t.Errorf("%s: side %d: span of kind %s", name, side, s.Kind)
			}
		}
		if n, _ := count(x.text, x.spans, func(s Span) bool { return s.Kind != SpanTemplate }); n != x.words {
			t.Errorf("%s: side %d: %d tokens in spans, Align counts %d", name, side, n, x.words)
		}
		if n, _ := count(x.text, x.spans, func(s Span) bool { return s.Class == DiffSentences }); n != x.only {
			t.Errorf("%s: side %d: %d tokens in sentences only it has, Align counts %d", name, side, n, x.only)
		}
	}
	same := func(s Span) bool { return s.Kind == SpanSame }
	nA, tokA := count(a, sp.A, same)
	_, tokB := count(b, sp.B, same)
	if !slices.Equal(tokA, tokB) {
		t.Errorf("%s: the same spans hold different tokens", name)
	}
	nMoved, _ := count(a, sp.A, func(s Span) bool { return s.Class == DiffMoved })
	if nA+nMoved != al.Common {
		t.Errorf("%s: %d tokens same and %d moved, Align counts %d common", name, nA, nMoved, al.Common)
	}
	content := slices.ContainsFunc(append(slices.Clone(sp.A), sp.B...), func(s Span) bool { return s.Class == DiffContent })
	if content != (al.Changed > 0) {
		t.Errorf("%s: content spans %v, Align counts %d changed", name, content, al.Changed)
	}
}

// TestAlignSpansAgreeWithAlign: on the texts of the alignment tests and
// on random edits of them, in both orders, the spans agree with Align's
// counts and swapping the texts swaps the spans.
func TestAlignSpansAgreeWithAlign(t *testing.T) {
	bases := []string{
		enBase, zhBase,
		"after a long debate, the council approved the budget. the vote was close.",
		"返回复数的双曲余割。复数的双曲余割可以表示为:",
		"report of 2024-03-01 follows.\nthe mayor said he was not surprised.\n\nmore details will follow.",
		"天下难事，必作于易；天下大事，必作于细。故以圣人终不为大，故能成其大。",
	}
	words := []string{"the", "council", "senate", "not", "budget", "3.5", "2025", "预算", "不", "。", ". ", "\n", "clause", "approved"}
	rng := rand.New(rand.NewPCG(1, 2))
	edit := func(s string) string {
		r := []rune(s)
		for range 1 + rng.IntN(4) {
			at := rng.IntN(len(r) + 1)
			switch rng.IntN(3) {
			case 0:
				r = slices.Insert(r, at, []rune(" "+words[rng.IntN(len(words))]+" ")...)
			case 1:
				if at < len(r) {
					r = slices.Delete(r, at, min(len(r), at+1+rng.IntN(8)))
				}
			default:
				if at < len(r) {
					r[at] = []rune(words[rng.IntN(len(words))])[0]
				}
			}
		}
		return string(r)
	}
	n := 0
	for _, a := range bases {
		for i := range 60 {
			b := a
			if i > 0 {
				b = edit(a)
			}
			name := fmt.Sprintf("%q / %q", a, b)
			ab, ok1 := AlignSpans(a, b, nil)
			ba, ok2 := AlignSpans(b, a, nil)
			if !ok1 || !ok2 {
				t.Fatalf("%s: not aligned", name)
			}
			checkSpans(t, name, a, b, ab)
			checkSpans(t, name, b, a, ba)
			if !slices.Equal(spanTexts(a, ab.A), swapKinds(spanTexts(a, ba.B))) || !slices.Equal(spanTexts(b, ab.B), swapKinds(spanTexts(b, ba.A))) {
				t.Errorf("%s: not symmetric:\n%q %q\n%q %q", name, spanTexts(a, ab.A), spanTexts(b, ab.B), spanTexts(b, ba.A), spanTexts(a, ba.B))
			}
			n++
		}
	}
	t.Logf("%d pairs", n)
}

func swapKinds(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		switch {
		case strings.HasPrefix(s, "only_a"):
			s = "only_b" + s[len("only_a"):]
		case strings.HasPrefix(s, "only_b"):
			s = "only_a" + s[len("only_b"):]
		}
		out[i] = s
	}
	return out
}

// TestAlignSpansTemplate: template lines are marked as template on both
// texts, left out of the alignment exactly as the rule leaves them out,
// and the spans around them keep the original texts' offsets.
func TestAlignSpansTemplate(t *testing.T) {
	footer := "to unsubscribe from this list send a mail to the list owner at any time.\nthe archives of the list are kept by the society for ten years."
	a := "dear all, the meeting on the budget is moved to thursday at noon in room four.\n-- \njohn\n" + footer
	b := "dear all, the meeting on the budget is moved to friday at noon in room five.\n-- \nmary\n" + footer
	_, sents := fingerprint.Sentences(a)
	var keys []uint64
	for _, s := range sents {
		if s.Start >= strings.Index(a, footer) {
			keys = append(keys, s.Key)
		}
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		t.Fatal("the footer has no keyed sentence")
	}
	sp, ok := AlignSpans(a, b, keys)
	if !ok {
		t.Fatal("not aligned")
	}
	al, _ := Align(stripTemplate(a, keys), stripTemplate(b, keys))
	if sp.Alignment != al {
		t.Errorf("Alignment %+v, Align of the stripped texts %+v", sp.Alignment, al)
	}
	for side, x := range []struct {
		text  string
		spans []Span
	}{{a, sp.A}, {b, sp.B}} {
		var tmpl [][2]int
		for _, s := range x.spans {
			if s.Kind == SpanTemplate {
				tmpl = append(tmpl, [2]int{s.Start, s.End})
			}
		}
		if want := TemplateSpans(x.text, keys); !slices.Equal(tmpl, want) {
			t.Errorf("side %d: template spans %v, TemplateSpans %v", side, tmpl, want)
		}
		got := spanTexts(x.text, x.spans)
		if !slices.Contains(got, "template:"+footer) && !slices.Contains(got, "template:"+strings.Split(footer, "\n")[0]) {
			t.Errorf("side %d: the footer is not template: %q", side, got)
		}
		// The signature's light lines ("-- ", a name) join the footer.
		if name := []string{"john", "mary"}[side]; slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, ":"+name) && !strings.HasPrefix(s, "template") }) {
			t.Errorf("side %d: the signature name is outside the template: %q", side, got)
		}
	}
	if got := spanTexts(a, sp.A); !slices.Contains(got, "changed/content:thursday") || !slices.Contains(got, "changed/content:four") {
		t.Errorf("spans of a: %q", got)
	}
	// The template's own words are not counted as aligned.
	checkSpans(t, "template", a, b, Spans{A: withoutTemplate(sp.A), B: withoutTemplate(sp.B), Alignment: sp.Alignment})
}

func withoutTemplate(ss []Span) []Span {
	return slices.DeleteFunc(slices.Clone(ss), func(s Span) bool { return s.Kind == SpanTemplate })
}

// TestAlignSpansNotAligned: a pair Align does not align has no spans.
func TestAlignSpansNotAligned(t *testing.T) {
	var a, b strings.Builder
	for i := range 1200 {
		fmt.Fprintf(&a, "alpha%d ", i)
		fmt.Fprintf(&b, "beta%d ", i)
	}
	if _, ok := AlignSpans(a.String(), b.String(), nil); ok {
		t.Error("two texts differing throughout were aligned")
	}
	if _, ok := AlignSpans(strings.Repeat("word ", maxAlignTokens+1), "word", nil); ok {
		t.Error("a text over maxAlignTokens was aligned")
	}
}

// FuzzAlignSpans: any two texts that Align aligns get spans that agree
// with its counts (checkSpans), start and end on character boundaries (of
// valid UTF-8, as normalized texts are), and swap with the texts.
func FuzzAlignSpans(f *testing.F) {
	f.Add(enBase, strings.Replace(enBase, "council", "senate", 1))
	f.Add(zhBase, zhBase+"详情稍后公布。")
	f.Add("after a long debate, the council met. the vote was close.", "the council met, after a long debate. the vote was close.")
	f.Add("3.5, 1,200 don't '", "..\n\n!!")
	f.Add("\xff\xfe a", "a")
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ok := AlignSpans(a, b, nil)
		ba, ok2 := AlignSpans(b, a, nil)
		if ok != ok2 {
			t.Fatalf("aligned one way only")
		}
		if !ok {
			return
		}
		checkSpans(t, "fuzz", a, b, ab)
		for _, x := range []struct {
			text  string
			spans []Span
		}{{a, ab.A}, {b, ab.B}} {
			if !utf8.ValidString(x.text) {
				continue
			}
			for _, s := range x.spans {
				if !utf8.RuneStart(x.text[s.Start]) || s.End < len(x.text) && !utf8.RuneStart(x.text[s.End]) {
					t.Fatalf("span %+v cuts a character", s)
				}
			}
		}
		if !slices.Equal(spanTexts(a, ab.A), swapKinds(spanTexts(a, ba.B))) || !slices.Equal(spanTexts(b, ab.B), swapKinds(spanTexts(b, ba.A))) {
			t.Fatalf("not symmetric")
		}
	})
}
