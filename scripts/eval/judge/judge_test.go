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
var sampleAgreement = map[string]string{"choice": "55 of 68", "validation": "28 of 35"}

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
