package pairs

import (
	"strings"

	"github.com/simdex/simdex/scripts/eval/corpus"
)

// The source a publisher would name for a text (the service's source
// attribute; docs/DECISION.md, "Templates per source"): what it knows of
// where the text comes from, and nothing the benchmark's labels say.
//
//   - a page on a site (a pair's mirror template, the language's site of
//     the site articles and of never-stored site probes): the site, which
//     a crawler knows by its host;
//   - a mail: its list (the List-Id header);
//   - a help page: its help module and language (the directory it is
//     shipped in); a manual page: its section;
//   - a Brown text, a speech, a quotation as the corpus has it: none. The
//     corpus does not say which publication a Brown text or a quotation
//     came from, and a speaker or a category is not a publisher.

// DocSource is the source of corpus document d as the corpus has it ("" for
// none).
func DocSource(d corpus.Doc) string {
	switch d.Source {
	case "mail":
		return "list:" + d.Topic
	case "site":
		return "site:" + d.Lang + ":" + d.Topic
	case "lohelp":
		return "help:" + d.Lang + ":" + d.Topic
	case "man":
		return "man:" + d.Topic
	}
	return ""
}

// templateSource is the source of a text inside the pairs' site template
// id.
func templateSource(id string) string { return "tmpl:" + id }

// textSource is the source of a pair's text: the template its id names
// ("<doc>@<template>"), else, for a query, the template its detail names
// ("template=<id>": the query served in that site's page), else the source
// of the corpus document it was made from.
func textSource(t Text, detail string, query bool, d corpus.Doc) string {
	if _, tmpl, ok := strings.Cut(t.ID, "@"); ok {
		tmpl, _, _ = strings.Cut(tmpl, "+")
		return templateSource(tmpl)
	}
	if query {
		if _, rest, ok := strings.Cut(detail, "template="); ok {
			tmpl, _, _ := strings.Cut(rest, ",")
			return templateSource(tmpl)
		}
	}
	return DocSource(d)
}

// siteSource is the source of a page on the language's site of split
// (NewSite): the one the synthetic site articles have.
func siteSource(lang, split string) string {
	return DocSource(corpus.Doc{Source: "site", Lang: lang, Topic: "site-" + split})
}
