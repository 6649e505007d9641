package decide

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/fingerprint"
)

// TestJudgeRelations: each relation, from the sketches and lengths, and
// which policies count it.
func TestJudgeRelations(t *testing.T) {
	r := DefaultRule()
	full := seq(0, 40)
	for _, tc := range []struct {
		name string
		q, s Side
		d    int
		want Relation
	}{
		{"same long text", Side{Sketch: full, Chars: 1500}, Side{Sketch: seq(0, 38), Chars: 1450}, 9, NearIdentical},
		{"query cut short", Side{Sketch: seq(0, 20), Chars: 600}, Side{Sketch: full, Chars: 1500}, 30, QueryIsExcerpt},
		{"stored quote inside a longer query", Side{Sketch: full, Chars: 1500}, Side{Sketch: seq(0, 20), Chars: 600}, 30, StoredIsExcerpt},
		{"half shared", Side{Sketch: full, Chars: 1500}, Side{Sketch: seq(20, 40), Chars: 1500}, 20, Overlap},
		{"no sketch within k", Side{}, Side{Sketch: full, Chars: 900}, 2, NearIdentical},
		{"no sketch beyond FallbackK", Side{}, Side{Sketch: full, Chars: 900}, 4, Overlap},
	} {
		v := r.Judge(tc.q, tc.s, tc.d, 3)
		if v.Relation != tc.want {
			t.Errorf("%s: %s (%+v), want %s", tc.name, v.Relation, v, tc.want)
		}
	}
	for _, tc := range []struct {
		p    Policy
		want []Relation
	}{
		{PolicyDefault, []Relation{NearIdentical, QueryIsExcerpt}},
		{PolicyCopy, []Relation{NearIdentical, QueryIsExcerpt, StoredIsExcerpt}},
		{PolicyNearIdentical, []Relation{NearIdentical}},
	} {
		for _, rel := range []Relation{NearIdentical, QueryIsExcerpt, StoredIsExcerpt, Overlap} {
			if got := tc.p.Counts(rel); got != slices.Contains(tc.want, rel) {
				t.Errorf("%s counts %s: %v", tc.p, rel, got)
			}
		}
		if p, err := ParsePolicy(tc.p.String()); err != nil || p != tc.p {
			t.Errorf("ParsePolicy(%q) = %v, %v", tc.p, p, err)
		}
	}
	if _, err := ParsePolicy("loose"); !errors.Is(err, ErrBadPolicy) {
		t.Errorf("ParsePolicy(loose) = %v", err)
	}
}

// TestJudgeTemplate: two documents that share only their template are not
// duplicates once the template is known; two that share their content
// still are, and a query that is all template relates to nothing.
func TestJudgeTemplate(t *testing.T) {
	r := DefaultRule()
	tmpl := seq(100, 30) // a signature and list footer: 30 features
	withTmpl := func(content fingerprint.Sketch) fingerprint.Sketch {
		return fingerprint.Sketch(slices.Sorted(slices.Values(append(slices.Clone(content), tmpl...))))
	}
	bodyA, bodyB := seq(0, 10), seq(20, 10)
	q := Side{Sketch: withTmpl(bodyA), Chars: 600}
	other := Side{Sketch: withTmpl(bodyB), Chars: 600}
	same := Side{Sketch: withTmpl(seq(0, 10)), Chars: 620}
	if v := r.Judge(q, other, 10, 3); v.Relation != NearIdentical {
		t.Fatalf("without template knowledge the shared template should dominate (the failure being fixed): %+v", v)
	}
	q.Template = Template{Values: slices.Clone(tmpl), Chars: 400}
	if v := r.Judge(q, other, 10, 3); v.Relation != Overlap {
		t.Errorf("different bodies, same template: %+v, want overlap", v)
	}
	if v := r.Judge(q, same, 10, 3); v.Relation != NearIdentical || v.Resemblance != 1 {
		t.Errorf("same body, same template: %+v, want near_identical at resemblance 1", v)
	}
	onlyTmpl := Side{Sketch: slices.Clone(tmpl), Chars: 400, Template: Template{Values: slices.Clone(tmpl), Chars: 400}}
	if v := r.Judge(onlyTmpl, other, 10, 3); v.Relation != Overlap || v.Clause != ClauseTemplate {
		t.Errorf("a query that is all template: %+v", v)
	}
}

// TestJudgeTemplateAlignment: short texts sharing a template sentence are
// aligned without it.
func TestJudgeTemplateAlignment(t *testing.T) {
	r := DefaultRule()
	footer := "to unsubscribe from this list send an empty mail to the list owner."
	a := "the meeting moves to thursday at noon in room four.\n" + footer
	b := "the new build fails on the arm runners since monday.\n" + footer
	_, sents := fingerprint.Sentences(a)
	key := sents[len(sents)-1].Key
	sk := seq(0, 20)
	q := Side{Sketch: sk, Chars: len(a), Text: a, Template: Template{Keys: []uint64{key}}}
	s := Side{Sketch: sk, Chars: len(b), Text: b}
	if v := r.Judge(q, s, 2, 3); v.Relation != Overlap {
		t.Errorf("two short mails sharing their footer: %+v, want overlap", v)
	}
	if got := stripTemplate(a, []uint64{key}); strings.Contains(got, "unsubscribe") || !strings.Contains(got, "thursday") {
		t.Errorf("stripSentences kept the footer: %q", got)
	}
}

// TestJudgeLightBodyUnderTemplate: a one-sentence mail under a long
// signature keeps fewer than TemplateMinContent sketch values outside the
// template; with both texts known the alignment decides what is left, so a
// reply quoting the mail is its copy and another mail with the same
// signature is not. Without the texts, nothing is left to compare.
func TestJudgeLightBodyUnderTemplate(t *testing.T) {
	r := DefaultRule()
	footer := "to unsubscribe from this list send an empty mail to the list owner.\nthe archives of this list are public and searchable by anyone."
	body := "the flaky network test is now quarantined and a ticket tracks the fix."
	other := "the meeting about the farm budget moves to the small room upstairs."
	_, sents := fingerprint.Sentences(body + "\n" + footer)
	var keys []uint64
	for _, s := range sents[1:] {
		keys = append(keys, s.Key)
	}
	slices.Sort(keys)
	tmpl := seq(100, 60)
	light := func(content fingerprint.Sketch) fingerprint.Sketch {
		return fingerprint.Sketch(slices.Sorted(slices.Values(append(slices.Clone(content), tmpl...))))
	}
	stored := Side{Sketch: light(seq(0, 5)), Chars: 200, Text: body + "\n" + footer}
	for _, tc := range []struct {
		name, text string
		content    fingerprint.Sketch
		want       Relation
	}{
		{"reply quoting the mail", "re: " + body + "\n" + footer, seq(0, 5), NearIdentical},
		{"another mail, same signature", other + "\n" + footer, seq(20, 5), Overlap},
	} {
		q := Side{Sketch: light(tc.content), Chars: 200, Text: tc.text, Template: Template{Keys: keys, Values: slices.Clone(tmpl), Chars: 130}}
		if v := r.Judge(q, stored, 4, 3); v.Relation != tc.want {
			t.Errorf("%s: %+v, want %s", tc.name, v, tc.want)
		}
		q.Text = ""
		if v := r.Judge(q, stored, 4, 3); v.Relation != Overlap || v.Clause != ClauseTemplate {
			t.Errorf("%s, texts unknown: %+v, want overlap by the template clause", tc.name, v)
		}
	}
}

func TestTemplateKeys(t *testing.T) {
	r := DefaultRule()
	for _, tc := range []struct {
		name string
		docs map[uint64]int
		want []uint64
	}{
		{"new mail, known footer", map[uint64]int{1: 0, 2: 0, 3: 20, 4: 12}, []uint64{3, 4}},
		{"a copy of a mail: its body once, the footer often", map[uint64]int{1: 1, 2: 1, 3: 20}, []uint64{3}},
		{"a text with many copies is not template", map[uint64]int{1: 6, 2: 6, 3: 7}, nil},
		{"under TemplateMinDocs", map[uint64]int{1: 0, 2: 2}, nil},
		{"one key", map[uint64]int{1: 50}, nil},
	} {
		if got := r.TemplateKeys(tc.docs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := (Rule{}).TemplateKeys(map[uint64]int{1: 0, 2: 50}); got != nil {
		t.Errorf("TemplateMinDocs 0: %v", got)
	}
}

// TestSourceTemplateKeys: the template of a text from a source is what is
// template overall or among the source's documents, each judged by the
// same relative rule on its own counts.
func TestSourceTemplateKeys(t *testing.T) {
	r := DefaultRule()
	for _, tc := range []struct {
		name      string
		all, site map[uint64]int
		want      []uint64
	}{
		// A page whose own sentence (1) is quoted once elsewhere: overall a
		// key is template from 3 x 2 = 6 documents, so the site's footer
		// (2, 3: in 5) is not; among the site's pages the sentence is in
		// none, so 5 suffice.
		{"site footer under a quoted sentence", map[uint64]int{1: 1, 2: 5, 3: 5}, map[uint64]int{1: 0, 2: 5, 3: 5}, []uint64{2, 3}},
		{"no source: overall only", map[uint64]int{1: 1, 2: 5, 3: 5}, nil, nil},
		// A notice common across the corpus (4) stays template whatever
		// the site says.
		{"overall and site", map[uint64]int{1: 0, 2: 5, 4: 40}, map[uint64]int{1: 0, 2: 5, 4: 0}, []uint64{2, 4}},
		// A site that syndicates one text many times: its sentences are in
		// as many of the site's pages as the footer, so nothing is.
		{"a text with many copies in the site", map[uint64]int{1: 6, 2: 9}, map[uint64]int{1: 6, 2: 9}, nil},
		{"under TemplateMinDocs in the site", map[uint64]int{1: 2, 2: 4}, map[uint64]int{1: 0, 2: 4}, nil},
	} {
		if got := r.SourceTemplateKeys(tc.all, tc.site); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestLowInformationExact: an exact copy of a low-information text counts
// when the text weighs a keyed sentence (a quote), not when it is a
// fragment (what normalization left of a page of navigation).
func TestLowInformationExact(t *testing.T) {
	r := DefaultRule()
	quote := Side{Sketch: seq(0, 3), Chars: 64, ExactHash: 9, Text: "something impossible is just something that no one has done yet."}
	fragment := Side{Sketch: seq(0, 2), Chars: 9, ExactHash: 7, Text: "要访问此命令..."}
	if v := r.Judge(quote, quote, 0, 3); v.Relation != NearIdentical || v.Clause != ClauseExact {
		t.Errorf("the same quote: %+v", v)
	}
	if v := r.Judge(fragment, fragment, 0, 3); v.Relation != Overlap {
		t.Errorf("the same fragment: %+v, want overlap", v)
	}
	full := Side{Sketch: seq(0, 30), Chars: 300, ExactHash: 5}
	if v := r.Judge(full, full, 0, 3); v.Clause != ClauseExact {
		t.Errorf("an exact copy of a full text: %+v", v)
	}
}

// TestRewrittenIsNotNearIdentical: two known texts whose feature sets
// resemble each other but whose alignment changes words throughout (a
// sibling page: one term swapped everywhere) are not near-identical; a
// copy with one sentence reworded still is.
func TestRewrittenIsNotNearIdentical(t *testing.T) {
	r := DefaultRule()
	base := "Open the chart floor dialog, where you can modify the properties of the chart floor. " +
		"The chart floor is the lower area in three dimensional charts. This function is only available for three dimensional charts. " +
		"Sets the formatting options for the selected line or the line that you want to draw. You can also add arrowheads to the line. " +
		"Sets the transparency options for the fill that you apply to the selected object."
	sibling := strings.NewReplacer("chart floor", "chart wall", "lower area", "back plane", "only available", "always available").Replace(base)
	reworded := strings.Replace(base, "You can also add arrowheads to the line.", "Arrowheads can be added to the line too.", 1)
	sk := seq(0, 40)
	q := Side{Sketch: sk, Chars: len(base), Text: base}
	near := seq(0, 30) // resemblance 0.75: above MinJaccard, under ShortMinJaccard
	if v := r.Judge(q, Side{Sketch: near, Chars: len(sibling), Text: sibling}, 8, 3); v.Relation == NearIdentical {
		t.Errorf("a sibling with a term swapped throughout: %+v, want not near-identical", v)
	}
	if v := r.Judge(q, Side{Sketch: near, Chars: len(reworded), Text: reworded}, 8, 3); v.Relation != NearIdentical {
		t.Errorf("a copy with one sentence reworded: %+v, want near-identical", v)
	}
	if v := r.Judge(q, Side{Sketch: near, Chars: len(sibling)}, 8, 3); v.Relation != NearIdentical {
		t.Errorf("without the stored text the resemblance decides: %+v", v)
	}
}

// TestRewrittenChineseSibling: two help pages for opposite commands (置于顶层
// / 置于底层) differ in one character, the same way, in every sentence: a
// term swapped throughout, not a slip, so not near-identical however
// closely their sketches resemble.
func TestRewrittenChineseSibling(t *testing.T) {
	r := DefaultRule()
	top := "将选中对象移到堆叠顺序的顶层，使其位于其他对象之前。\n要访问此命令...\n选择「格式 - 排列 - 置于顶层」。\n选择「形状 - 排列 - 置于顶层」。\n打开右键菜单 - 选择「排列 - 置于顶层」。\n" +
		strings.Repeat("对象的排列顺序决定了它们在页面上的叠放方式，您可以随时在排列菜单中更改它。\n", 5)
	bottom := strings.NewReplacer("顶层", "底层", "之前", "之后").Replace(top)
	typo := strings.Replace(top, "堆叠顺序的顶层", "堆叠顺序的底层", 1)
	sk := seq(0, 40)
	q := Side{Sketch: sk, Chars: len([]rune(top)), Text: top}
	near := seq(0, 32) // resemblance 0.8
	if v := r.Judge(q, Side{Sketch: near, Chars: len([]rune(bottom)), Text: bottom}, 8, 3); v.Relation == NearIdentical {
		t.Errorf("a sibling page: %+v, want not near-identical", v)
	}
	if v := r.Judge(q, Side{Sketch: near, Chars: len([]rune(typo)), Text: typo}, 8, 3); v.Relation != NearIdentical {
		t.Errorf("one wrong character: %+v, want near-identical", v)
	}
}

// TestAlignmentIsFinal: when two short texts are aligned and differ in
// content, the sketch clauses do not overrule the alignment (a sketch of a
// few features contains the other's by chance).
func TestAlignmentIsFinal(t *testing.T) {
	r := DefaultRule()
	bold := "将选中的文本设为粗体。如果光标位于词中，则整个词将变为粗体。如果选中的文字或光标所在的词已经是粗体，则取消粗体格式。"
	italic := "将选中的文本变为斜体。如果光标位于某个字词中，则整个字词将变为斜体。如果选择的文字或光标所在的字词已经是斜体，则取消斜体。"
	q := Side{Sketch: seq(0, 20), Chars: len([]rune(bold)), Text: bold}
	s := Side{Sketch: seq(1, 21), Chars: len([]rune(italic)) * 2, Text: italic}
	if v := r.Judge(q, s, 20, 3); v.Relation != Overlap {
		t.Errorf("sibling short pages with contained sketches: %+v, want overlap", v)
	}
}
