package judge

import (
	"fmt"
	"testing"
)

func TestRelate(t *testing.T) {
	tmpl := []string{"-- ", "jane roe", "acme corp.", "users mailing list", "unsubscribe: users-leave@example.org"}
	sig := "-- \nJane Roe\nAcme Corp.\nusers mailing list\nunsubscribe: users-leave@example.org"
	long := "The committee met on Tuesday to discuss the budget for the coming year and agreed to postpone the vote."
	tests := []struct {
		name, query, stored, want string
		correct                   bool
	}{
		{"copy", long, long, NearIdentical, true},
		{"copy with case, width and spacing changed", "THE  committee met on Tuesday to discuss the budget for the coming year and agreed to postpone the vote.", long, NearIdentical, true},
		{"same signature, other body", "Thanks, the patch works for me now.\n" + sig, "I will be away until Monday next week.\n" + sig, Overlap, false},
		{"query is a part of the stored text", "The committee met on Tuesday to discuss the budget", long + " It will meet again in May to hear the treasurer's report on the accounts.", QueryIsExcerpt, true},
		{"stored quotation inside a longer query", "As one reader put it: " + long + " Others disagreed and asked for a new meeting before the summer recess began.", long, StoredIsExcerpt, false},
		{"unrelated", "Rain is expected over the weekend in the north.", long, Overlap, false},
	}
	j := FromTemplate(tmpl)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := j.RelateTexts(tt.query, tt.stored)
			if v.Relation != tt.want || Correct(v.Relation) != tt.correct {
				t.Errorf("relation %s (correct %v), want %s (%v); %+v", v.Relation, Correct(v.Relation), tt.want, tt.correct, v)
			}
		})
	}
}

func TestNewCountsDocumentsOnce(t *testing.T) {
	texts := []string{"a shared footer\nbody one", "a shared footer\nbody two", "A  SHARED footer\nbody three", "body one\nother"}
	tests := []struct {
		name     string
		docs     []string
		minDocs  int
		template bool // "a shared footer" is template
		bodyOne  bool // "body one" is template
	}{
		{"distinct documents", nil, 3, true, false},
		{"two copies of one document count once", []string{"d1", "d2", "d2", "d4"}, 3, false, false},
		{"lower threshold", nil, 2, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := New(texts, tt.docs, tt.minDocs)
			if got := j.IsTemplate("a shared footer"); got != tt.template {
				t.Errorf("footer template = %v, want %v", got, tt.template)
			}
			if got := j.IsTemplate("body one"); got != tt.bodyOne {
				t.Errorf("body line template = %v, want %v", got, tt.bodyOne)
			}
		})
	}
}

func TestContentAllTemplateKeepsText(t *testing.T) {
	j := FromTemplate([]string{"only line"})
	if got := j.Content("Only   line"); got != "only line" {
		t.Errorf("Content = %q, want the whole text when all of it is template", got)
	}
}

// sampleAgreement is the criterion's agreement with the hand labels of
// testdata/labelled-hits.jsonl at MinDocs, per set, as docs/QUALITY.md
// reports it.
var sampleAgreement = map[string]string{"choice": "55 of 68", "validation": "28 of 35", "key": "8 of 9"}

func TestLabelledSample(t *testing.T) {
	sample, err := Sample()
	if err != nil {
		t.Fatal(err)
	}
	_, verdicts := Agreement(sample, MinDocs)
	for i, v := range verdicts {
		if v.Relation != sample[i].Verdict.Relation {
			t.Errorf("%s -> %s: relation %s, the sample recorded %s", sample[i].Query, sample[i].Stored, v.Relation, sample[i].Verdict.Relation)
		}
		if sample[i].Label == "" {
			t.Errorf("%s -> %s: no label", sample[i].Query, sample[i].Stored)
		}
	}
	got, err := SampleAgreement()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(sampleAgreement) {
		t.Errorf("sets %v, want %v", got, sampleAgreement)
	}
	for set, want := range sampleAgreement {
		if g := fmt.Sprintf("%d of %d", got[set][0], got[set][1]); g != want {
			t.Errorf("%s set: agreement %s, docs/QUALITY.md says %s", set, g, want)
		}
	}
	for _, set := range []string{"choice", "validation"} {
		var part []Labelled
		for _, l := range sample {
			if l.Set == set {
				part = append(part, l)
			}
		}
		for _, n := range []int{2, 3, 4, 5, 8} {
			a, _ := Agreement(part, n)
			t.Logf("%s set, MinDocs %d: agreement %d of %d", set, n, a, len(part))
		}
	}
}

func TestKey(t *testing.T) {
	tests := []struct{ line, want string }{
		{"no digits here", "no digits here"},
		{"记者 周明  发布时间：2019-11-17 00:14  来源：环球视点", "记者 周明  发布时间：#-#-# #:#  来源：环球视点"},
		{"版权所有 © 2015 环球视点", "版权所有 © # 环球视点"},
		{"v1.2 of 3", "v#.# of #"},
		{"12", "#"},
	}
	for _, tt := range tests {
		if got := Key(tt.line); got != tt.want {
			t.Errorf("Key(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// A site's byline carries each article's date: the dated lines recur as
// one template line, so a quotation published under the byline is judged
// by the quotation, while a body line that differs from another only in
// its numbers and recurs in fewer than MinDocs documents stays content.
func TestDatedBylineIsTemplate(t *testing.T) {
	quote := "以下列出了「LibreOffice Math」公式示例。"
	stored := []string{
		"环球视点\n记者 周明  发布时间：2019-11-17 00:14  来源：环球视点\n第一篇文章的正文内容。",
		"环球视点\n记者 周明  发布时间：2020-01-02 10:20  来源：环球视点\n第二篇文章的正文完全不同。",
		"环球视点\n记者 周明  发布时间：2021-05-06 08:01  来源：环球视点\n第三篇文章讲别的事情。",
		quote,
		"库存 12 件，售价 30 元。",
		"库存 15 件，售价 35 元。",
	}
	j := New(stored, nil, MinDocs)
	query := "环球视点\n记者 周明  发布时间：2022-09-07 03:10  来源：环球视点\n" + quote
	if v := j.RelateTexts(query, quote); v.Relation != NearIdentical {
		t.Errorf("quotation under a dated byline: %+v, want %s", v, NearIdentical)
	}
	if j.IsTemplate("库存 12 件，售价 30 元。") {
		t.Error("a line in two documents with other numbers is template")
	}
	if v := j.RelateTexts("环球视点\n记者 周明  发布时间：2022-09-07 03:10  来源：环球视点\n第四篇文章另有内容。", stored[0]); Correct(v.Relation) {
		t.Errorf("two articles sharing only the site's dated byline: %+v", v)
	}
}
