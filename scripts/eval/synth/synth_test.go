package synth

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simdex/simdex/scripts/eval/corpus"
)

// donorsFixture is a small corpus: English Brown-like pieces and Chinese
// help-like pages, every sentence distinct.
func donorsFixture() []corpus.Doc {
	var docs []corpus.Doc
	for i := range 400 {
		var s []string
		for j := range 6 {
			s = append(s, fmt.Sprintf("Sentence %d of document %d tells what the council decided about road number %d.", j, i, i*10+j))
		}
		docs = append(docs, corpus.Doc{ID: fmt.Sprintf("brown:c%03d", i), Source: "brown", Lang: "en", Topic: "news", Title: fmt.Sprintf("News %d", i), Body: strings.Join(s, " ")})
	}
	for i := range 200 {
		var s []string
		for j := range 5 {
			s = append(s, fmt.Sprintf("在第%d页选择第%d个选项并点击确定按钮。", i, j))
		}
		docs = append(docs, corpus.Doc{ID: fmt.Sprintf("lohelp:p%03d", i), Source: "lohelp", Lang: "zh", Topic: "swriter", Title: fmt.Sprintf("帮助%d", i), Body: strings.Join(s, "")})
	}
	return docs
}

func TestDerive(t *testing.T) {
	in := donorsFixture()
	out := Derive(in)
	kept := map[string]bool{}
	bySource := map[string][]corpus.Doc{}
	for _, d := range out {
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		kept[d.ID] = true
		bySource[d.Source] = append(bySource[d.Source], d)
	}
	donors := 0
	for _, d := range in {
		if !kept[d.ID] {
			donors++
		}
	}
	if donors == 0 || donors == len(in) {
		t.Fatalf("%d of %d documents were donors", donors, len(in))
	}
	for _, src := range []string{"mail", "site", "quote"} {
		if len(bySource[src]) == 0 {
			t.Errorf("no %s documents", src)
		}
	}
	// No derived body text is taken from a kept document.
	for _, d := range bySource["quote"] {
		n := utf8.RuneCountInString(d.Body)
		if lo := map[string]int{"en": 60, "zh": 20}[d.Lang]; n < lo || n > 150 {
			t.Errorf("quote %s has %d characters", d.ID, n)
		}
		for _, k := range in {
			if kept[k.ID] && strings.Contains(k.Body, d.Body) {
				t.Errorf("quote %s is text of the kept document %s", d.ID, k.ID)
			}
		}
	}
}

func TestMails(t *testing.T) {
	out := Derive(donorsFixture())
	lines := map[string]map[string]int{"dev": {}, "test": {}} // signature and footer lines by split
	threadSplit := map[string]string{}
	mails := 0
	for _, d := range out {
		if d.Source != "mail" {
			continue
		}
		mails++
		split := splitOf(d.ID)
		thread, _, _ := strings.Cut(d.ID, ".")
		if s, ok := threadSplit[thread]; ok && s != split {
			t.Errorf("thread %s spans splits", thread)
		}
		threadSplit[thread] = split
		if d.ContentChars <= 0 || d.ContentChars >= utf8.RuneCountInString(d.Body) {
			t.Errorf("%s: content %d of %d characters", d.ID, d.ContentChars, utf8.RuneCountInString(d.Body))
		}
		ls := strings.Split(d.Body, "\n")
		sep := "-- "
		if d.Lang == "zh" {
			sep = "--"
		}
		at := -1
		for i, l := range ls {
			if l == sep {
				at = i
			}
		}
		if at < 1 || len(ls)-at < 8 {
			t.Fatalf("%s has no signature and footer:\n%s", d.ID, d.Body)
		}
		for _, l := range ls[at+1:] {
			lines[split][l]++
		}
	}
	if mails < 100 {
		t.Fatalf("%d mails", mails)
	}
	recurring := 0
	for l, n := range lines["dev"] {
		if n >= 10 {
			recurring++
		}
		if lines["test"][l] > 0 && !strings.HasPrefix(l, "___") && !strings.HasPrefix(l, "---") {
			t.Errorf("dev and test mails share the furniture line %q", l)
		}
	}
	if recurring < 5 {
		t.Errorf("only %d furniture lines recur in 10 or more dev mails", recurring)
	}
}

func TestSiteArticlesShareFurniture(t *testing.T) {
	var ds []corpus.Doc
	for i := range 40 {
		ds = append(ds, corpus.Doc{ID: fmt.Sprintf("d%d", i), Source: "brown", Lang: "en", Title: fmt.Sprintf("T%d", i), Body: fmt.Sprintf("Body number %d with some words.", i)})
	}
	arts := SiteArticles(ds, "en")
	first := map[string]string{}
	for _, a := range arts {
		split := strings.TrimPrefix(a.Topic, "site-")
		h := strings.SplitN(a.Body, "\n", 3)[:2]
		if f, ok := first[split]; ok && f != strings.Join(h, "\n") {
			t.Errorf("%s: header %q differs from its site's %q", a.ID, h, f)
		}
		first[split] = strings.Join(h, "\n")
		if a.ContentChars != utf8.RuneCountInString(ds[0].Body) && a.ContentChars < 20 {
			t.Errorf("%s: content chars %d", a.ID, a.ContentChars)
		}
	}
	if first["dev"] == "" || first["test"] == "" || first["dev"] == first["test"] {
		t.Errorf("site headers by split: %q", first)
	}
}
