package pairs

import (
	"testing"

	"github.com/simdex/simdex/scripts/eval/corpus"
)

// A text's source is what a publisher knows: the site of a templated page
// (by its id or, for a query served in a template, its detail), the list
// of a mail, the module of a help page, the section of a manual page, and
// nothing for a Brown text, a speech or a quotation.
func TestSources(t *testing.T) {
	mail := corpus.Doc{ID: "mail:en/1", Source: "mail", Lang: "en", Topic: "builders"}
	help := corpus.Doc{ID: "lohelp:zh/x", Source: "lohelp", Lang: "zh", Topic: "swriter"}
	brown := corpus.Doc{ID: "brown:ca01:00", Source: "brown", Lang: "en", Topic: "news"}
	for _, tc := range []struct {
		name   string
		t      Text
		detail string
		query  bool
		d      corpus.Doc
		want   string
	}{
		{"mail as is", raw(mail), "", false, mail, "list:builders"},
		{"help page as is", raw(help), "", true, help, "help:zh:swriter"},
		{"man page", Text{ID: "man:1/ls"}, "", false, corpus.Doc{Source: "man", Topic: "1"}, "man:1"},
		{"brown text", raw(brown), "", true, brown, ""},
		{"original in a template", Text{ID: brown.ID + "@en07"}, "template=en03,original=en07", false, brown, "tmpl:en07"},
		{"negative in a template with boilerplate", Text{ID: "brown:cb02:01@en04+b"}, "other=brown:cb02:01,template=en04", true, brown, "tmpl:en04"},
		{"query served in a template", Text{ID: brown.ID + "~q"}, "template=en03,original=en07", true, brown, "tmpl:en03"},
		{"original beside a templated query", raw(mail), "template=en03", false, mail, "list:builders"},
		{"edited query", Text{ID: mail.ID + "~q"}, "typos=3", true, mail, "list:builders"},
	} {
		if got := textSource(tc.t, tc.detail, tc.query, tc.d); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got, want := siteSource("zh", "dev"), DocSource(corpus.Doc{Source: "site", Lang: "zh", Topic: "site-dev"}); got != want || got == "" {
		t.Errorf("site probe source %q, site article source %q", got, want)
	}
}
