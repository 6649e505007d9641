package decide

import (
	"fmt"
	"strings"
	"testing"

	"github.com/simdex/simdex/fingerprint"
)

// The texts below are normalized (lower case, NFKC), as the fingerprinter
// hands them to the rule.
const (
	enBase = "the city council approved the new budget of 4.5 million dollars on monday. the vote was close."
	zhBase = "市政府周一批准了新的预算。投票结果非常接近。"
)

func TestAlignClassifies(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		same bool // every difference benign
	}{
		{"identical", enBase, enBase, true},
		{"punctuation and quotes only", enBase, strings.ReplaceAll(enBase, "budget", "\"budget\","), true},
		{"typo: letter dropped", enBase, strings.Replace(enBase, "approved", "aproved", 1), true},
		{"typo: neighbours swapped", enBase, strings.Replace(enBase, "council", "cuoncil", 1), true},
		{"typo: two slips in a long word", enBase + " absolutely", enBase + " absolutley", true},
		{"number changed", enBase, strings.Replace(enBase, "4.5", "5.2", 1), true},
		{"date changed", "report of 2024-03-01 follows.", "report of 2025-11-30 follows.", true},
		{"sentence added at the end", enBase, enBase + " more details will follow.", true},
		{"sentence added in the middle", enBase, strings.Replace(enBase, "monday. ", "monday. the mayor was absent. ", 1), true},
		{"sentence dropped", enBase, strings.Replace(enBase, " the vote was close.", "", 1), true},
		{"dateline prepended", enBase, "washington, reuters — " + enBase, true},
		{"key word swapped", enBase, strings.Replace(enBase, "council", "senate", 1), false},
		{"short word one letter off is another word", "the cat sat on the mat.", "the car sat on the mat.", false},
		{"word slipped into a sentence", enBase, strings.Replace(enBase, "new budget", "new education budget", 1), false},
		{"negation added", enBase, strings.Replace(enBase, "was close", "was not close", 1), false},
		{"negation as an added head", "the vote was close.", "not the vote was close.", false},
		{"zh identical", zhBase, zhBase, true},
		{"zh one wrong character", zhBase, strings.Replace(zhBase, "预算", "预箅", 1), true},
		{"zh word swapped", zhBase, strings.Replace(zhBase, "预算", "税法", 1), false},
		{"zh sentence added", zhBase, zhBase + "详情稍后公布。", true},
		{"zh negation added", zhBase, strings.Replace(zhBase, "批准", "不批准", 1), false},
		{"zh number changed", "第3季度收入为120万元。", "第4季度收入为135万元。", true},
		{"mixed: number and typo in one stretch", "it passes the 35-foot mark.", "it passes the 38-fsot mark.", true},
		{"clauses swapped around a comma", "after a long debate, the council approved the budget. the vote was close.", "the council approved the budget, after a long debate. the vote was close.", true},
		{"zh clauses swapped", "经过长时间讨论，市政府批准了预算。", "市政府批准了预算，经过长时间讨论。", true},
		{"subject and object trade places", "the dog bit the man in the park.", "the man bit the dog in the park.", false},
		{"one word moved", "only the council approved the budget.", "the council approved only the budget.", false},
		{"a clause moved into another sentence", "after a long debate, the council met. the vote was close.", "the council met. the vote was close, after a long debate.", false},
	} {
		al, ok := Align(tc.a, tc.b)
		if !ok {
			t.Fatalf("%s: not aligned", tc.name)
		}
		if got := al.Changed == 0; got != tc.same {
			t.Errorf("%s: benign = %v, want %v (%+v)", tc.name, got, tc.same, al)
		}
		back, _ := Align(tc.b, tc.a)
		if (back.Changed == 0) != (al.Changed == 0) {
			t.Errorf("%s: not symmetric: %+v vs %+v", tc.name, al, back)
		}
	}
}

func TestAlignTooLong(t *testing.T) {
	long := strings.Repeat("word ", maxAlignTokens+1)
	if _, ok := Align(long, "word"); ok {
		t.Error("a text over maxAlignTokens was aligned")
	}
	// Two long texts that differ throughout: the middle is too large.
	var a, b strings.Builder
	for i := range 1200 {
		fmt.Fprintf(&a, "alpha%d ", i)
		fmt.Fprintf(&b, "beta%d ", i)
	}
	if _, ok := Align(a.String(), b.String()); ok {
		t.Error("two texts differing throughout a middle over maxAlignCells were aligned")
	}
	// A long page and its sibling: only the first sentence differs, so the
	// middle is small and the difference is found.
	body := strings.Repeat("the structure line defines how entries in the index are composed. ", 150)
	al, ok := Align("entry for the user index. "+body, "entry for the object table. "+body)
	if !ok || al.Changed == 0 || al.ChangedSentences != 1 {
		t.Errorf("sibling pages: ok %v, %+v; want one changed sentence", ok, al)
	}
}

// TestAlignmentClause runs the rule with texts: the alignment decides short
// pairs at any distance, and the sketch-only short clause for pairs
// without texts is unchanged.
func TestAlignmentClause(t *testing.T) {
	r := DefaultRule()
	sk := seq(0, 30)
	near := seq(2, 30) // J = 28/32 = 0.875: under ShortMinJaccard
	side := func(text string, s fingerprint.Sketch) Side {
		return Side{Sketch: s, Chars: len([]rune(text)), Text: text}
	}
	typo := strings.Replace(enBase, "approved", "aproved", 1)
	swap := strings.Replace(enBase, "council", "senate", 1)
	if !r.Duplicate(side(enBase, sk), side(typo, near), 12) {
		t.Error("a typo far in simhash distance: want a duplicate")
	}
	if !r.AtAnyDistance(side(enBase, sk), side(typo, near)) {
		t.Error("AtAnyDistance: the alignment clause ignores the distance")
	}
	if r.Duplicate(side(enBase, sk), side(swap, sk), 1) {
		t.Error("a swapped key word: want no duplicate, even at J = 1 and distance 1")
	}
	if r.Duplicate(side(enBase, sk), side(typo, seq(100, 30)), 2) {
		t.Error("alignment clause below AlignMinJaccard")
	}
	// A short text inside a much longer one (a copy with a block added)
	// is contained in it; with the containment clause off, most of the
	// longer text must be the shorter one.
	tail := " " + strings.Repeat("another sentence was added here. ", 4)
	if v := r.Judge(side(enBase+tail, seq(10, 30)), side(enBase, sk), 20, 3); v.Relation != StoredIsExcerpt || !v.Duplicate(PolicyCopy) || v.Duplicate(PolicyDefault) {
		t.Errorf("a stored short text inside a much longer query: %+v, want stored_is_excerpt (a copy, not a default duplicate)", v)
	}
	// The query inside a stored text it covers most of is its excerpt;
	// inside one of which it is only a passage (under ExcerptMinShare),
	// it is not.
	if v := r.Judge(side(enBase, sk), side(enBase+" another sentence was added here.", seq(10, 30)), 20, 3); v.Relation == Overlap || !v.Duplicate(PolicyDefault) {
		t.Errorf("a short query inside a slightly longer stored text: %+v, want a duplicate", v)
	}
	long := enBase + strings.Repeat(" another sentence was added here, and then one more.", 8)
	if v := r.Judge(side(enBase, sk), side(long, seq(10, 30)), 20, 3); v.Duplicate(PolicyDefault) {
		t.Errorf("a short query that is one passage of a long stored text: %+v, want no duplicate", v)
	}
	noContain := r
	noContain.ContainMaxOwn = 0
	if noContain.Duplicate(side(enBase, sk), side(enBase+tail, seq(10, 30)), 2) {
		t.Error("containment off: a short text inside a much longer one (AlignMinCommon)")
	}
	// Two texts that share one sentence, each with its own: neither is
	// contained in the other.
	shared := "The committee will publish its annual report on the city budget next week. "
	a := shared + "Parents asked the school board to open the library on weekends."
	b := shared + "Farmers expect a late harvest after the cold and wet spring."
	if r.Duplicate(side(a, sk), side(b, seq(10, 30)), 20) {
		t.Error("two texts sharing one sentence: want no duplicate")
	}
	// A contained text must be heavy enough to be a text of its own.
	light := "read the full story here."
	if r.Duplicate(side(light, sk), side(light+" "+enBase, seq(10, 30)), 20) {
		t.Error("a five-word fragment contained in a text: want no duplicate (ContainMinWeight)")
	}
	// Without a stored text (a docs cell before 0x04, a bulk load) the
	// sketch clause decides.
	if !r.Duplicate(side(enBase, sk), Side{Sketch: sk, Chars: 95}, 2) || r.Duplicate(side(enBase, sk), Side{Sketch: near, Chars: 95}, 2) {
		t.Error("short clause without a text")
	}
	if got := r.KeepText(r.TextChars-1, "x", 10); got != "x" {
		t.Errorf("KeepText(TextChars-1) = %q", got)
	}
	if got := r.KeepText(r.TextChars, "x", 10); got != "" {
		t.Errorf("KeepText(TextChars) = %q", got)
	}
	if got := r.KeepText(10, "xxxxxxxxxxx", 10); got != "" {
		t.Errorf("KeepText of a text over maxBytes = %q", got)
	}
}

// BenchmarkShortDuplicate is the rule's cost on one short candidate: the
// sketch-only clause (no texts) against the alignment clause, English
// (~95 characters, 17 words) and Chinese (~60 characters).
func BenchmarkShortDuplicate(b *testing.B) {
	r := DefaultRule()
	zh := strings.Repeat(zhBase, 3)
	for _, bc := range []struct {
		name string
		q, s Side
	}{
		{"sketch only", Side{Sketch: seq(0, 30), Chars: 95}, Side{Sketch: seq(2, 30), Chars: 95}},
		{"aligned en", Side{Sketch: seq(0, 30), Chars: 95, Text: enBase}, Side{Sketch: seq(2, 30), Chars: 95, Text: strings.Replace(enBase, "approved", "aproved", 1)}},
		{"aligned zh", Side{Sketch: seq(0, 30), Chars: 66, Text: zh}, Side{Sketch: seq(2, 30), Chars: 66, Text: strings.Replace(zh, "预算", "预箅", 1)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				r.Duplicate(bc.q, bc.s, 2)
			}
		})
	}
}

// FuzzAlign: any two texts (normalized or not, valid UTF-8 or not) align
// without a panic, symmetrically, and a text is the same text as itself.
func FuzzAlign(f *testing.F) {
	f.Add(enBase, strings.Replace(enBase, "council", "senate", 1))
	f.Add(zhBase, zhBase+"详情稍后公布。")
	f.Add("3.5, 1,200 don't '", "..\n\n!!")
	f.Add("\xff\xfe", "a")
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ok1 := Align(a, b)
		ba, ok2 := Align(b, a)
		if ok1 != ok2 || ok1 && (ab.Common != ba.Common || ab.WordsA != ba.WordsB) {
			t.Fatalf("not symmetric: %+v vs %+v", ab, ba)
		}
		if aa, ok := Align(a, a); ok && (aa.Changed != 0 || aa.Common != aa.WordsA) {
			t.Fatalf("a text differs from itself: %+v", aa)
		}
	})
}

// TestAlignRepeatedHanSwapIsAWord: one Han character replaced once is a
// slip of the input method; the same replacement twice is a word changed
// throughout (cosecant for cosine), a different fact.
func TestAlignRepeatedHanSwapIsAWord(t *testing.T) {
	for _, tc := range []struct {
		a, b    string
		changed bool
	}{
		{"返回复数的双曲余割。复数的双曲余割可以表示为:", "返回复数的双曲余弦。复数的双曲余弦可以表示为:", true},
		{"返回复数的双曲余割。复数的双曲余割可以表示为:", "返回复数的双曲余弦。复数的双曲余割可以表示为:", false},
		{"天下难事，必作于易；天下大事，必作于细。", "天下难事，必作于易；天下大事，必做于细。", false},
	} {
		al, ok := Align(tc.a, tc.b)
		if !ok || (al.Changed > 0) != tc.changed {
			t.Errorf("%q / %q: %+v, want changed %v", tc.a, tc.b, al, tc.changed)
		}
	}
}
