// Package judge decides, independently of simdex's own fingerprints and
// decision rule, whether a stored document the service returned for a
// query is a correct duplicate. It works on the raw texts only:
//
//  1. every line is normalized (NFKC, lower case, traditional characters
//     folded to simplified ones, whitespace collapsed);
//  2. lines that recur in at least MinDocs documents of the stored corpus
//     (copies of one corpus document counting once) are template (site
//     furniture, signatures, list footers, standard manual-page headings)
//     and dropped, on both sides; lines are counted by their template key,
//     the line with every run of digits read as one placeholder, so a
//     dateline or byline that recurs with other dates and times ("记者 周明
//     发布时间：2019-11-17 00:14", "版权所有 © 2015") is template like
//     any other furniture;
//  3. what is left is compared as sets of character 5-grams:
//     resemblance (Jaccard), the share of the query's 5-grams found in the
//     stored document and the share of the stored document's found in the
//     query.
//
// The pair is then near_identical, query_is_excerpt, stored_is_excerpt or
// overlap (see Relate), and under the default policy a hit is correct when
// it is near_identical or query_is_excerpt: the query is (mostly) the
// stored document or a part of it. A short stored document found inside a
// longer query (stored_is_excerpt) is not a duplicate of the query.
package judge

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/text/unicode/norm"

	"github.com/simdex/simdex/scripts/eval/pairs"
)

// Relations between a query and a stored document.
const (
	NearIdentical   = "near_identical"
	QueryIsExcerpt  = "query_is_excerpt"
	StoredIsExcerpt = "stored_is_excerpt"
	Overlap         = "overlap"
)

// Relations lists the relations in report order.
var Relations = []string{NearIdentical, QueryIsExcerpt, StoredIsExcerpt, Overlap}

// Thresholds of the criterion, chosen on the data (docs/QUALITY.md,
// "Whole-corpus judge").
const (
	// MinDocs: a normalized line found in at least this many stored
	// documents is template.
	MinDocs = 3
	// Near: resemblance at or above which two texts are near-identical.
	Near = 0.8
	// Contained: share of a text's 5-grams found in the other at or above
	// which the text is an excerpt of the other.
	Contained = 0.8
	// Gram is the shingle length in characters.
	Gram = 5
)

// Correct is the default policy: the hit is a duplicate when the query
// is the stored document or an excerpt of it.
func Correct(relation string) bool { return relation == NearIdentical || relation == QueryIsExcerpt }

// Verdict is the criterion's answer for one (query, stored) pair.
type Verdict struct {
	Relation          string  `json:"relation"`
	Resemblance       float64 `json:"resemblance"`
	QueryContainment  float64 `json:"query_containment"`
	StoredContainment float64 `json:"stored_containment"`
}

// Judge holds the template lines of a stored corpus.
type Judge struct {
	minDocs  int
	template map[string]bool // by template key
	count    map[string]int  // stored documents per template key
}

// Key is a normalized line's template key: the line with every maximal
// run of decimal digits replaced by one '#'. Lines that differ only in
// their numbers (dates, times, years, counters) share a key, so furniture
// that carries a date is counted as the recurring line it is.
func Key(line string) string {
	i := strings.IndexFunc(line, unicode.IsDigit)
	if i < 0 {
		return line
	}
	var b strings.Builder
	b.Grow(len(line))
	b.WriteString(line[:i])
	digits := false
	for _, r := range line[i:] {
		if unicode.IsDigit(r) {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}

// New counts, for every normalized line, the stored documents it occurs
// in, and keeps those in at least minDocs documents as template. docs
// (aligned with stored, or nil) names the corpus document each stored
// text was made from: copies of one document (the bare text and the same
// text in several site templates) count once, so a document stored in
// many copies does not make its own lines template.
func New(stored, docs []string, minDocs int) *Judge {
	count := map[string]int{}
	seen := map[string]map[string]bool{} // line -> documents counted
	for i, t := range stored {
		doc := fmt.Sprint(i)
		if docs != nil {
			doc = docs[i]
		}
		for _, l := range Lines(t) {
			l = Key(l)
			if seen[l] == nil {
				seen[l] = map[string]bool{}
			}
			if !seen[l][doc] {
				seen[l][doc] = true
				count[l]++
			}
		}
	}
	j := &Judge{minDocs: minDocs, template: map[string]bool{}, count: count}
	for l, n := range count {
		if n >= minDocs {
			j.template[l] = true
		}
	}
	return j
}

// LineDocs returns, for every line of text whose template key is found
// in at least two stored documents, the number of documents it is in.
func (j *Judge) LineDocs(text string) map[string]int {
	out := map[string]int{}
	for _, l := range Lines(text) {
		if n := j.count[Key(l)]; n >= 2 {
			out[l] = n
		}
	}
	return out
}

// Recurring returns the template key of every line found in at least min
// stored documents, with its count.
func (j *Judge) Recurring(min int) map[string]int {
	out := map[string]int{}
	for l, n := range j.count {
		if n >= min {
			out[l] = n
		}
	}
	return out
}

// FromCounts returns a judge whose template is the lines of counts found
// in at least minDocs documents. counts may be keyed by lines or by their
// template keys (as LineDocs and Recurring return them); lines of one key
// carry the key's count, so the largest is kept.
func FromCounts(counts map[string]int, minDocs int) *Judge {
	byKey := make(map[string]int, len(counts))
	for l, n := range counts {
		k := Key(l)
		byKey[k] = max(byKey[k], n)
	}
	j := &Judge{minDocs: minDocs, template: map[string]bool{}, count: byKey}
	for l, n := range byKey {
		if n >= minDocs {
			j.template[l] = true
		}
	}
	return j
}

// FromTemplate returns a judge whose template is exactly lines (already
// normalized, as Lines returns them): a judge for texts whose stored
// corpus is not at hand, e.g. the labelled sample.
func FromTemplate(lines []string) *Judge {
	j := &Judge{template: map[string]bool{}}
	for _, l := range lines {
		j.template[Key(l)] = true
	}
	return j
}

// TemplateLines is the number of distinct template lines (template keys).
func (j *Judge) TemplateLines() int { return len(j.template) }

// TemplateIn returns the lines of text that are template, in order,
// without repeats.
func (j *Judge) TemplateIn(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range Lines(text) {
		if j.template[Key(l)] && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// Template returns the template lines' keys, sorted.
func (j *Judge) Template() []string {
	out := make([]string, 0, len(j.template))
	for l := range j.template {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// IsTemplate reports whether a (normalized) line is template.
func (j *Judge) IsTemplate(line string) bool { return j.template[Key(line)] }

// Lines returns the non-empty normalized lines of text: NFKC, lower case,
// traditional Chinese characters folded to simplified ones (the
// benchmark's own script-variant table), runs of white space collapsed to
// one space.
func Lines(text string) []string {
	var out []string
	for _, l := range strings.Split(pairs.FoldTraditional(norm.NFKC.String(text)), "\n") {
		l = strings.Join(strings.Fields(strings.ToLower(l)), " ")
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Content is text without its template lines, normalized, lines joined
// by a space. A text that is all template is kept whole.
func (j *Judge) Content(text string) string {
	ls := Lines(text)
	var kept []string
	for _, l := range ls {
		if !j.template[Key(l)] {
			kept = append(kept, l)
		}
	}
	if utf8.RuneCountInString(strings.Join(kept, " ")) < Gram {
		kept = ls
	}
	return strings.Join(kept, " ")
}

// Set is a set of hashed character 5-grams.
type Set map[uint64]struct{}

// Shingles is the 5-gram set of text's content (see Content).
func (j *Judge) Shingles(text string) Set { return Grams(j.Content(text)) }

// Grams is the set of hashed character 5-grams of s (s itself when it is
// shorter).
func Grams(s string) Set {
	rs := []rune(s)
	out := Set{}
	if len(rs) < Gram {
		if len(rs) > 0 {
			out[xxhash.Sum64String(s)] = struct{}{}
		}
		return out
	}
	for i := 0; i+Gram <= len(rs); i++ {
		out[xxhash.Sum64String(string(rs[i:i+Gram]))] = struct{}{}
	}
	return out
}

// Relate classifies a query's 5-gram set q against a stored document's x.
func Relate(q, x Set) Verdict {
	small, big := q, x
	if len(small) > len(big) {
		small, big = big, small
	}
	inter := 0
	for h := range small {
		if _, ok := big[h]; ok {
			inter++
		}
	}
	v := Verdict{Relation: Overlap}
	if union := len(q) + len(x) - inter; union > 0 {
		v.Resemblance = float64(inter) / float64(union)
	}
	if len(q) > 0 {
		v.QueryContainment = float64(inter) / float64(len(q))
	}
	if len(x) > 0 {
		v.StoredContainment = float64(inter) / float64(len(x))
	}
	switch {
	case v.Resemblance >= Near:
		v.Relation = NearIdentical
	case v.QueryContainment >= Contained && len(q) <= len(x):
		v.Relation = QueryIsExcerpt
	case v.StoredContainment >= Contained && len(x) < len(q):
		v.Relation = StoredIsExcerpt
	}
	return v
}

// RelateTexts is Relate on two raw texts.
func (j *Judge) RelateTexts(query, stored string) Verdict {
	return Relate(j.Shingles(query), j.Shingles(stored))
}
