// Package synth derives the benchmark's template-heavy sources from real
// corpus text: mailing-list mails (one signature per author and one footer
// per list around different bodies), one site's articles (one header,
// byline pattern, related-links block and footer around different
// bodies), and short quotations. In each, many stored documents share
// the same furniture with different content, which is where a
// near-duplicate detector's false duplicates come from.
//
// Every body is real text cut from donor documents of the corpus
// (Brown, State of the Union, LibreOffice help); donors are removed from
// the corpus, so no derived document is an excerpt of another source's
// document. Derivation is deterministic.
package synth

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/scripts/eval/corpus"
	"github.com/simdex/simdex/scripts/eval/pairs"
	"github.com/simdex/simdex/scripts/eval/textutil"
)

// Donor shares (per cent of a language's donor-eligible documents, by a
// fixed hash of the id): text for mails, site articles and quotations.
// Chinese has fewer documents, so it gives a larger share.
var donorShare = map[string][3]int{"en": {5, 9, 11}, "zh": {14, 24, 32}}

// Derive returns docs without the donor documents, plus the mails, site
// articles and quotations made from the donors' text, sorted by id.
func Derive(docs []corpus.Doc) []corpus.Doc {
	var kept []corpus.Doc
	donors := map[string]map[string][]corpus.Doc{} // role -> lang -> docs
	for _, d := range docs {
		if d.Source == "man" || d.Source == "mail" || d.Source == "site" || d.Source == "quote" {
			kept = append(kept, d)
			continue
		}
		sh := donorShare[d.Lang]
		h := int(xxhash.Sum64String("synth-donor:"+d.ID) % 100)
		role := ""
		switch {
		case h < sh[0]:
			role = "mail"
		case h < sh[1]:
			role = "site"
		case h < sh[2]:
			role = "quote"
		}
		// English text comes from Brown and SOTU (the English-labelled help
		// pages are partly Chinese), Chinese from the help.
		if role == "" || (d.Lang == "zh") != (d.Source == "lohelp") {
			kept = append(kept, d)
			continue
		}
		if donors[role] == nil {
			donors[role] = map[string][]corpus.Doc{}
		}
		donors[role][d.Lang] = append(donors[role][d.Lang], d)
	}
	for _, lang := range []string{"en", "zh"} {
		kept = append(kept, Mails(donors["mail"][lang], lang)...)
		kept = append(kept, SiteArticles(donors["site"][lang], lang)...)
		kept = append(kept, Quotes(donors["quote"][lang], lang)...)
	}
	slices.SortFunc(kept, func(a, b corpus.Doc) int { return strings.Compare(a.ID, b.ID) })
	return kept
}

// sentences returns the sentences of d's body, in order.
func sentences(d corpus.Doc) []string {
	var out []string
	for _, l := range strings.Split(d.Body, "\n") {
		out = append(out, textutil.Sentences(l)...)
	}
	return out
}

// idIn returns base, or base with the smallest suffix "~N" that puts the
// id into split, so that documents that belong together (a thread) share
// a split.
func idIn(base, split string) string {
	id := base
	for i := 1; !corpus.InSplit(id, split); i++ {
		id = fmt.Sprintf("%s~%d", base, i)
	}
	return id
}

func splitOf(key string) string {
	if corpus.InSplit(key, "dev") {
		return "dev"
	}
	return "test"
}

// half keeps the dev (even) or test (odd) half of xs.
func half(xs []string, split string) []string {
	var out []string
	for i, x := range xs {
		if (i%2 == 0) == (split == "dev") {
			out = append(out, x)
		}
	}
	return out
}

// SiteArticles puts each donor's title and body into its language's site
// (pairs.NewSite) with a byline and a related-links block listing other
// articles' titles. The site is the one of the article's split.
func SiteArticles(donors []corpus.Doc, lang string) []corpus.Doc {
	var out []corpus.Doc
	for i, d := range donors {
		id := fmt.Sprintf("site:%s/%04d", lang, i)
		split := splitOf(id)
		s := pairs.NewSite(lang, split)
		r := rand.New(rand.NewPCG(0x5173, xxhash.Sum64String(id)))
		var related []string
		for range 3 + r.IntN(3) {
			if o := donors[r.IntN(len(donors))]; o.ID != d.ID && o.Title != "" {
				related = append(related, o.Title)
			}
		}
		out = append(out, corpus.Doc{ID: id, Source: "site", Lang: lang, Topic: "site-" + split, Title: d.Title, Body: s.Page(r, d.Title, d.Body, related), ContentChars: d.Chars()})
	}
	return out
}

// Quotes cuts short quotations (one or two consecutive sentences, 60-150
// characters in English, 20-150 in Chinese) from the donors, up to two a
// donor.
func Quotes(donors []corpus.Doc, lang string) []corpus.Doc {
	lo := 60
	if lang == "zh" {
		lo = 20
	}
	var out []corpus.Doc
	for _, d := range donors {
		ss := sentences(d)
		made := 0
		for i := 0; i < len(ss) && made < 2; i += 3 {
			q := ss[i]
			if i+1 < len(ss) && len([]rune(q)) < lo {
				q = textutil.Join(lang, ss[i:i+2])
			}
			if n := len([]rune(q)); n < lo || n > 150 {
				continue
			}
			out = append(out, corpus.Doc{ID: fmt.Sprintf("quote:%s/%s#%d", lang, d.ID, made), Source: "quote", Lang: lang, Topic: "quote", Body: q})
			made++
		}
	}
	return out
}
