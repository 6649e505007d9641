// Package decide is simdex's duplicate decision: given a query and a stored
// document that the index found within the requested distance, is the query
// a near-duplicate of it? Both the REST check path and check-and-insert
// (through kvindex.Config.Confirm) call Rule.Duplicate, so the answer is the
// same whichever route a document takes.
//
// The index finds candidates by simhash distance; the rule then accepts by
// the Jaccard similarity of the two documents' feature sets, estimated from
// their stored MinHash sketches (fingerprint.Sketch), with a threshold that
// depends on length:
//
//   - documents of at least ShortChars characters (both sides): accepted at
//     any distance the index serves when Jaccard >= MinJaccard (0.6). On the
//     quality benchmark (dev split) the most similar medium or long
//     non-duplicate pair (same site template and boilerplate) reaches 0.58
//     at distance 11, and none is within distance 9 at all, while near-copies
//     with a sentence added, dropped or reworded, typos or boilerplate stay
//     above 0.7: the sketch is the precision guard that lets the index
//     search further (a larger layout K) than a bare simhash could afford.
//   - short texts (either side under ShortChars, 200) whose texts are both
//     known (documents under TextChars, 400, keep their normalized text in
//     the docs cell, format 0x04): the alignment clause, at any distance.
//     A set-overlap estimate cannot tell a typo from a swapped fact; an
//     alignment can. Both texts are cut into tokens (words, numbers, single
//     CJK characters, sentence ends; other punctuation is formatting) and
//     aligned by a longest common subsequence; every stretch that differs
//     is classified as an editor would read it (Align):
//     benign: a number replaced by a number (dates, counters, prices); a
//     word replaced by one a single slip away (a letter inserted,
//     dropped, replaced, or two neighbours swapped; two slips from eight
//     letters) in words of four letters or more ("cat"/"car" are two
//     words); one Han character replaced by another (a wrong character
//     from the input method; two or more together are another word);
//     whole sentences or lines added or dropped, or a head or tail added
//     (a dateline, a label, a sign-off); a stretch of two or more words
//     moved unchanged within its sentence (clauses reordered: "after a
//     long debate, the council approved it" / "the council approved it,
//     after a long debate"; words trading places one by one, "the dog bit
//     the man" / "the man bit the dog", are replacements, never a move):
//     on the dev split short reword recall 0.19 -> 0.53 with no false
//     positive added on any negative kind (held-out 0.12 -> 0.45);
//     content: a word replaced by a different word, words slipped into
//     or dropped from a sentence, and any edit that adds, drops or
//     replaces a negation ("not", "never", "不", "没" ...: a hand-made
//     list of function words, not a vocabulary).
//     The pair is a duplicate when there is no content difference, at
//     least AlignMinCommon (0.6) of the longer text's tokens are aligned
//     with equal ones, and the sketches' Jaccard is at least
//     AlignMinJaccard (0.3, a cheap guard before the alignment). On the
//     dev split (offline, every pair with a short side; through the
//     service the numbers match) this took short recall from 0.697 to
//     0.889 and short precision from 0.960 to 0.985: typos 0.01 -> 0.99
//     (en) and 0.37 -> 1.00 (zh), sentence added 0.46 -> 0.98 (en),
//     one-keyword swaps called duplicates 9.8% -> 4.7%; 31 of the 36 left
//     have the same normalized text on both sides (the swapped word was in
//     a line the normalizer drops), and 4 are a two-character word swap
//     that kept one character (one wrong character to any reader without
//     a dictionary). The thresholds barely matter there: AlignMinCommon
//     0.5-0.7 and AlignMinJaccard 0-0.5 move short recall by under 0.01
//     and precision not at all; they bound what an unseen edit may do. A
//     synonym (reword) is a word swap to the alignment: short reword
//     recall fell from 0.28 to 0.01 (en); without a thesaurus it is the
//     same edit as a swapped fact.
//     Containment (since index format 4; ContainMaxOwn, ContainMinWeight):
//     a short text cut short (a teaser), or quoted inside a longer page (a
//     scraper's copy with its own dateline, header and footer), is the
//     same text as its original, but most of the longer text is not the
//     shorter one, so AlignMinCommon refuses it. The pair is also a
//     duplicate when the alignment has no content difference, one text
//     weighs at least ContainMinWeight (16: eight words or sixteen Chinese
//     characters; a word weighs 2, a CJK character 1) and at most
//     ContainMaxOwn (0.1) of its tokens stand in sentences, lines, heads
//     or tails the other lacks (the guard before the alignment is then
//     the sketches' containment, not their Jaccard). Two texts that share
//     a boilerplate sentence but each have their own are not: the
//     sentences that differ are a replaced stretch, a content difference.
//     The candidates come from the index's text keys (fingerprint.TextKeys:
//     one key per sentence of five words or ten Chinese characters, and
//     one for the lead), which find a shared sentence where the LSH bands
//     need whole-set overlap; a query of any length looks its keys up, so
//     the query's text is aligned whatever its length (both texts must be
//     known and one side short). On the dev split this took short recall
//     from 0.885 to 0.907 (truncations 0.65 -> 0.87, combos 0.82 -> 0.84)
//     at short precision 0.983 -> 0.982: the one false positive added is a
//     one-sentence help text quoted verbatim in a longer help page, which
//     an editor would call a copy. Held-out: short recall 0.803 -> 0.860,
//     precision 0.991.
//   - short texts without both texts (a docs cell written before 0x04, a
//     bulk load, or a side of TextChars or more): distance <= ShortK and
//     Jaccard >= ShortMinJaccard (0.9). A one-word swap (a different fact)
//     in a 20-word text changes one word and two bigrams, about 15% of the
//     feature set, so it falls under 0.9 where a punctuation, width, number
//     or boilerplate edit does not.
//   - excerpts and extensions (any length, any distance): one text contains
//     the other, i.e. at least MinContainment (0.9) of the shorter one's
//     features are in the longer one, the shorter has at least
//     ExcerptMinChars (50) characters and the longer at least ExcerptRatio
//     (1.25) times as many. A truncation, a lead paragraph quoted alone, or
//     a copy with a block appended (ads, a related-links list, a sentence
//     added) is contained in, or contains, its original, while a one-word
//     swap of the same length is not caught (its lengths are equal and its
//     swapped word is new). On the dev split it took truncation recall from
//     0.395 to 0.803 with no false positive added on any negative kind.
//   - a side without a sketch (a bare-fingerprint insert or check, or a
//     docs cell written before recipe 3): the simhash rule alone, distance
//     <= FallbackK.
//
// Exact duplicates (distance 0 and the same exact-content hash) are always
// duplicates.
package decide

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/simdex/simdex/fingerprint"
)

// ErrBadRule is returned (wrapped) by Rule.Validate; ErrBadPolicy by
// ParsePolicy.
var (
	ErrBadRule   = errors.New("decide: bad rule")
	ErrBadPolicy = errors.New("decide: bad policy")
)

// Rule is the decision rule. Start from DefaultRule.
type Rule struct {
	// FallbackK is the largest distance accepted when a side has no
	// sketch. Default 3 (the simhash rule of recipes 1-2).
	FallbackK int
	// ShortChars: a document under this many normalized characters is
	// short. Default 200.
	ShortChars int
	// ShortK is the largest distance accepted for short texts. Default 3.
	ShortK int
	// ShortMinJaccard is the least estimated Jaccard for short texts.
	// Default 0.9.
	ShortMinJaccard float64
	// MinJaccard is the least estimated Jaccard for longer documents, at
	// any distance the lookup covered. Default 0.6.
	MinJaccard float64
	// MinContainment is the least estimated containment of the shorter
	// text's features in the longer one for the excerpt clause (0: clause
	// off). Default 0.9.
	MinContainment float64
	// ExcerptMinChars is the shortest text the excerpt clause applies to.
	// Default 50.
	ExcerptMinChars int
	// ExcerptRatio is how many times longer (in characters) the containing
	// text must be. Default 1.25.
	ExcerptRatio float64
	// TextChars: documents under this many normalized characters keep
	// their normalized text (Side.Text, the docs cell's text) for the
	// alignment clause (0: the clause is off). Default 400.
	TextChars int
	// AlignMinJaccard is the least estimated Jaccard of the alignment
	// clause. Default 0.3.
	AlignMinJaccard float64
	// AlignMinCommon is the least share of the longer text's words and
	// characters that must be aligned with equal ones in the other text.
	// Default 0.6.
	AlignMinCommon float64
	// ContainMaxOwn is the containment clause of the alignment (0: off):
	// the largest share of the contained text's tokens that may stand in
	// whole sentences, lines, heads or tails the other text lacks.
	// Default 0.1.
	ContainMaxOwn float64
	// ContainMinWeight is the least weight of a contained text (a word 2,
	// a CJK character 1): a fragment that light (a sign-off, a standard
	// notice) is not a text of its own. Default 16 (eight words, sixteen
	// Chinese characters).
	ContainMinWeight int
	// TemplateMinDocs is the least number of stored documents a sentence
	// must stand in to be template (0: no template detection). Default 5:
	// a text stored a few times over (a syndicated article and its
	// copies) is not a template.
	TemplateMinDocs int
	// TemplateMinContent is the least number of a query's sketch values
	// outside its template for the sketch clauses to judge it: a query
	// whose own text is a greeting and a name beside its signature has
	// too little left to be anybody's copy. Default 8.
	TemplateMinContent int
	// TemplateRatio: a sentence is template when it stands in at least
	// TemplateRatio times as many documents as the query's rarest keyed
	// sentence (plus one): a text whose every sentence many documents
	// share is a text with many copies, not a template. Default 3.
	TemplateRatio float64
}

// DefaultRule returns the rule simdex decides with.
func DefaultRule() Rule {
	return Rule{FallbackK: 3, ShortChars: 200, ShortK: 3, ShortMinJaccard: 0.9, MinJaccard: 0.6,
		MinContainment: 0.9, ExcerptMinChars: 50, ExcerptRatio: 1.25,
		TextChars: 400, AlignMinJaccard: 0.3, AlignMinCommon: 0.6, ContainMaxOwn: 0.1, ContainMinWeight: 16,
		TemplateMinDocs: 5, TemplateRatio: 3, TemplateMinContent: 8}
}

// Validate reports the first unusable setting.
func (r Rule) Validate() error {
	switch {
	case r.FallbackK < 0 || r.FallbackK > 64:
		return fmt.Errorf("%w: FallbackK %d not in 0..64", ErrBadRule, r.FallbackK)
	case r.ShortK < 0 || r.ShortK > 64:
		return fmt.Errorf("%w: ShortK %d not in 0..64", ErrBadRule, r.ShortK)
	case r.ShortChars < 0:
		return fmt.Errorf("%w: ShortChars %d < 0", ErrBadRule, r.ShortChars)
	case !(r.ShortMinJaccard >= 0 && r.ShortMinJaccard <= 1):
		return fmt.Errorf("%w: ShortMinJaccard %v not in [0, 1]", ErrBadRule, r.ShortMinJaccard)
	case !(r.MinJaccard >= 0 && r.MinJaccard <= 1):
		return fmt.Errorf("%w: MinJaccard %v not in [0, 1]", ErrBadRule, r.MinJaccard)
	case !(r.MinContainment >= 0 && r.MinContainment <= 1):
		return fmt.Errorf("%w: MinContainment %v not in [0, 1]", ErrBadRule, r.MinContainment)
	case r.ExcerptMinChars < 0:
		return fmt.Errorf("%w: ExcerptMinChars %d < 0", ErrBadRule, r.ExcerptMinChars)
	case r.MinContainment > 0 && !(r.ExcerptRatio >= 1):
		return fmt.Errorf("%w: ExcerptRatio %v < 1", ErrBadRule, r.ExcerptRatio)
	case r.TextChars < 0:
		return fmt.Errorf("%w: TextChars %d < 0", ErrBadRule, r.TextChars)
	case !(r.AlignMinJaccard >= 0 && r.AlignMinJaccard <= 1):
		return fmt.Errorf("%w: AlignMinJaccard %v not in [0, 1]", ErrBadRule, r.AlignMinJaccard)
	case !(r.AlignMinCommon >= 0 && r.AlignMinCommon <= 1):
		return fmt.Errorf("%w: AlignMinCommon %v not in [0, 1]", ErrBadRule, r.AlignMinCommon)
	case !(r.ContainMaxOwn >= 0 && r.ContainMaxOwn <= 1):
		return fmt.Errorf("%w: ContainMaxOwn %v not in [0, 1]", ErrBadRule, r.ContainMaxOwn)
	case r.ContainMinWeight < 0:
		return fmt.Errorf("%w: ContainMinWeight %d < 0", ErrBadRule, r.ContainMinWeight)
	case r.TemplateMinContent < 0:
		return fmt.Errorf("%w: TemplateMinContent %d < 0", ErrBadRule, r.TemplateMinContent)
	case r.TemplateMinDocs < 0:
		return fmt.Errorf("%w: TemplateMinDocs %d < 0", ErrBadRule, r.TemplateMinDocs)
	case r.TemplateMinDocs > 0 && !(r.TemplateRatio >= 1 && r.TemplateRatio < math.Inf(1)):
		return fmt.Errorf("%w: TemplateRatio %v not in [1, inf)", ErrBadRule, r.TemplateRatio)
	}
	return nil
}

// LowInformationSketch: a side with a sketch of fewer values is a
// low-information text (fewer than three content words,
// fingerprint.Result.LowInformation): only an exact copy and the alignment
// of short texts relate it to another.
const LowInformationSketch = 5

// Side is what the rule knows of one document.
type Side struct {
	Sketch fingerprint.Sketch
	Chars  int
	// ExactHash is the exact-content hash (0 unknown).
	ExactHash uint64
	// Text is the normalized body ("" unknown: not kept, see
	// Rule.TextChars).
	Text string
	// Template is what of the query is template (see Template); only the
	// query side's is read.
	Template Template
}

// Template is the part of a query that many stored documents share (a
// signature, a list footer, a site's header, a licence section): the rule
// leaves it out of every comparison, so two documents that share only
// their template are not duplicates, and two that share their content
// still are, whatever templates surround it.
type Template struct {
	// Keys are the template sentences' keys (fingerprint.Sentences): they
	// are cut from both texts before an alignment.
	Keys []uint64
	// Values are the sketch values of the template sentences' features
	// (fingerprint.Fingerprinter.SketchValues), sorted: they are left out
	// of both sketches.
	Values []uint32
	// Chars is the number of characters of the query in template
	// sentences.
	Chars int
}

// TemplateKeys returns the keys of keyDocs (a text's text keys with the
// number of stored documents in each key's row) that are template: in at
// least TemplateMinDocs documents and in at least TemplateRatio times as
// many as the text's rarest key (plus one). Sorted; nil when none is.
func (r Rule) TemplateKeys(keyDocs map[uint64]int) []uint64 {
	if r.TemplateMinDocs <= 0 || len(keyDocs) < 2 {
		return nil
	}
	rarest := math.MaxInt
	for _, n := range keyDocs {
		rarest = min(rarest, n)
	}
	least := max(float64(r.TemplateMinDocs), r.TemplateRatio*float64(rarest+1))
	var out []uint64
	for k, n := range keyDocs {
		if float64(n) >= least {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Relation is how a stored document relates to a query.
type Relation string

// The relations, from closest to loosest.
const (
	// NearIdentical: the same text, give or take edits (typos, numbers,
	// a sentence added or dropped, another template around it).
	NearIdentical Relation = "near_identical"
	// QueryIsExcerpt: the query is mostly contained in the (longer)
	// stored document: a truncation, a lead, a quoted passage of it.
	QueryIsExcerpt Relation = "query_is_excerpt"
	// StoredIsExcerpt: the stored document is mostly contained in the
	// (longer) query: the query quotes or extends it.
	StoredIsExcerpt Relation = "stored_is_excerpt"
	// Overlap: they share some text, not enough for any of the above.
	Overlap Relation = "overlap"
)

// Policy says which relations make a duplicate.
type Policy uint8

// The policies.
const (
	// PolicyDefault: near-identical documents and a query that is an
	// excerpt of a stored document ("we already have this text").
	PolicyDefault Policy = iota
	// PolicyCopy: also a stored document that the query contains (copy
	// detection: the query reuses a stored text).
	PolicyCopy
	// PolicyNearIdentical: near-identical documents only.
	PolicyNearIdentical
)

// Policies lists every policy's name, default first.
var Policies = []string{"default", "copy", "near_identical"}

// ParsePolicy reads a policy name ("" is the default).
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "", "default":
		return PolicyDefault, nil
	case "copy":
		return PolicyCopy, nil
	case "near_identical":
		return PolicyNearIdentical, nil
	}
	return 0, fmt.Errorf("%w: %q: want one of %s", ErrBadPolicy, s, strings.Join(Policies, ", "))
}

func (p Policy) String() string {
	if int(p) < len(Policies) {
		return Policies[p]
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// Counts reports whether a stored document in relation rel to the query is
// a duplicate under p.
func (p Policy) Counts(rel Relation) bool {
	switch rel {
	case NearIdentical:
		return true
	case QueryIsExcerpt:
		return p == PolicyDefault || p == PolicyCopy
	case StoredIsExcerpt:
		return p == PolicyCopy
	}
	return false
}

// The clauses a Verdict names.
const (
	ClauseExact       = "exact"       // the same normalized text
	ClauseDistance    = "distance"    // a side without sketch: distance <= FallbackK
	ClauseResemblance = "resemblance" // Jaccard >= MinJaccard, both sides of ShortChars or more
	ClauseShort       = "short"       // a short side: distance <= ShortK and Jaccard >= ShortMinJaccard
	ClauseAlignment   = "alignment"   // short texts aligned: benign differences only
	ClauseContainment = "containment" // one text's features contained in the other's
	ClauseTemplate    = "template"    // the query is all template: nothing left to compare
	ClauseNone        = ""
)

// Verdict is the rule's answer for one stored document.
type Verdict struct {
	Relation Relation
	// Resemblance is the estimated Jaccard of the two feature sets,
	// QueryContainment the share of the query's features in the stored
	// document's, StoredContainment the reverse; all without the query's
	// template. 0 when a side has no sketch.
	Resemblance, QueryContainment, StoredContainment float64
	// Clause names the clause that decided the relation.
	Clause string
}

// Duplicate reports whether the verdict makes a duplicate under p.
func (v Verdict) Duplicate(p Policy) bool { return p.Counts(v.Relation) }

// Judge decides how stored document s relates to query q, whose
// fingerprints are distance bits apart; k is the distance the lookup
// covered (the clauses that read the distance apply only within it; a
// candidate found beyond it, through a band or text-key row, is judged by
// the others). q.Template is left out of every comparison.
func (r Rule) Judge(q, s Side, distance, k int) Verdict {
	if distance == 0 && q.ExactHash != 0 && q.ExactHash == s.ExactHash {
		return Verdict{Relation: NearIdentical, Resemblance: 1, QueryContainment: 1, StoredContainment: 1, Clause: ClauseExact}
	}
	if len(q.Sketch) == 0 || len(s.Sketch) == 0 {
		if distance <= min(k, r.FallbackK) {
			return Verdict{Relation: NearIdentical, Clause: ClauseDistance}
		}
		return Verdict{Relation: Overlap}
	}
	both, inQ, inS, union := overlap(q.Sketch, s.Sketch, q.Template.Values)
	v := Verdict{Relation: Overlap}
	if union > 0 {
		v.Resemblance = float64(both) / float64(union)
	}
	if inQ > 0 {
		v.QueryContainment = float64(both) / float64(inQ)
	}
	if inS > 0 {
		v.StoredContainment = float64(both) / float64(inS)
	}
	if len(q.Template.Values) > 0 && inQ < max(1, r.TemplateMinContent) {
		v.Clause = ClauseTemplate
		return v
	}
	qChars := max(q.Chars-q.Template.Chars, 0)
	if len(q.Sketch) < LowInformationSketch || len(s.Sketch) < LowInformationSketch {
		// A low-information text (fingerprint.Result.LowInformation: a
		// handful of content words) is related by its words, never by
		// set overlap: two of them sharing their two words say nothing.
		if r.alignable(q, s) {
			if rel, ok := r.aligned(q, s, v, false); ok {
				v.Relation, v.Clause = rel, ClauseAlignment
			}
		}
		return v
	}
	short := qChars < r.ShortChars || s.Chars < r.ShortChars
	if !short && v.Resemblance >= r.MinJaccard {
		v.Relation, v.Clause = NearIdentical, ClauseResemblance
		return v
	}
	if r.alignable(q, s) {
		if rel, ok := r.aligned(q, s, v, true); ok {
			v.Relation, v.Clause = rel, ClauseAlignment
			return v
		}
	} else if short && distance <= min(k, r.ShortK) && v.Resemblance >= r.ShortMinJaccard {
		v.Relation, v.Clause = NearIdentical, ClauseShort
		return v
	}
	switch {
	case r.excerpt(qChars, s.Chars, v.QueryContainment):
		v.Relation, v.Clause = QueryIsExcerpt, ClauseContainment
	case r.excerpt(s.Chars, qChars, v.StoredContainment):
		v.Relation, v.Clause = StoredIsExcerpt, ClauseContainment
	}
	return v
}

// Duplicate reports whether q duplicates s under the default policy, at a
// distance the lookup covered.
func (r Rule) Duplicate(q, s Side, distance int) bool {
	return r.Judge(q, s, distance, 64).Duplicate(PolicyDefault)
}

// AtAnyDistance reports whether a clause that ignores the simhash distance
// relates the pair (any relation but Overlap). Both sides need sketches.
func (r Rule) AtAnyDistance(q, s Side) bool {
	if len(q.Sketch) == 0 || len(s.Sketch) == 0 {
		return false
	}
	return r.Judge(q, s, 65, -1).Relation != Overlap
}

// overlap counts, among the values of a ∪ b that both bottom-k sketches
// show (those up to the smaller of their cut-offs: a full sketch has
// dropped every value above its largest), leaving out the values of excl
// (sorted): the values in both, in a, in b, and in the union. From these
// the Jaccard and containment estimates follow; with excl empty and
// sketches of fewer than SketchSize values they are exact.
func overlap(a, b fingerprint.Sketch, excl []uint32) (both, inA, inB, union int) {
	cut := uint32(math.MaxUint32)
	if len(a) == fingerprint.SketchSize {
		cut = a[len(a)-1]
	}
	if len(b) == fingerprint.SketchSize {
		cut = min(cut, b[len(b)-1])
	}
	i, j, e := 0, 0, 0
	skip := func(v uint32) bool {
		for e < len(excl) && excl[e] < v {
			e++
		}
		return e < len(excl) && excl[e] == v
	}
	for i < len(a) || j < len(b) {
		var v uint32
		var ina, inb bool
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			v, ina = a[i], true
			i++
		case i == len(a) || b[j] < a[i]:
			v, inb = b[j], true
			j++
		default:
			v, ina, inb = a[i], true, true
			i++
			j++
		}
		if v > cut {
			break
		}
		if skip(v) {
			continue
		}
		union++
		if ina {
			inA++
		}
		if inb {
			inB++
		}
		if ina && inb {
			both++
		}
	}
	return both, inA, inB, union
}

// alignable reports whether the alignment clause judges the pair: a short
// side, and both texts known (a stored document keeps its text under
// TextChars; a query's text is always known, so a longer page is aligned
// with the short texts it may hold).
func (r Rule) alignable(q, s Side) bool {
	return r.TextChars > 0 && (q.Chars < r.ShortChars || s.Chars < r.ShortChars) && q.Text != "" && s.Text != ""
}

// aligned is the alignment clause, on both texts without the query's
// template sentences: the texts' differences are all benign (numbers,
// typos, whole sentences or lines) and most of the longer text is the
// other one (near-identical), or one text is contained in the other
// (almost all of its tokens aligned: a copy cut short, or inside a longer
// page).
func (r Rule) aligned(q, s Side, v Verdict, guard bool) (Relation, bool) {
	// The cheap guard before the alignment: whole-set overlap, or for the
	// containment clause the overlap of the smaller set with the larger.
	// Without it (low-information texts, whose few features say too little
	// to guard anything) the alignment alone decides.
	contain := r.ContainMaxOwn > 0 && (!guard || max(v.QueryContainment, v.StoredContainment) >= r.AlignMinJaccard)
	if guard && v.Resemblance < r.AlignMinJaccard && !contain {
		return "", false
	}
	qt, st := q.Text, s.Text
	if len(q.Template.Keys) > 0 {
		qt, st = stripTemplate(qt, q.Template.Keys), stripTemplate(st, q.Template.Keys)
	}
	al, ok := Align(qt, st)
	if !ok || al.Changed > 0 {
		return "", false
	}
	longer := max(al.WordsA, al.WordsB)
	if (!guard || v.Resemblance >= r.AlignMinJaccard) && longer > 0 && float64(al.Common) >= r.AlignMinCommon*float64(longer) {
		return NearIdentical, true
	}
	if !contain {
		return "", false
	}
	switch {
	case r.contains(al.WordsA, al.WeightA, al.OnlyA):
		return QueryIsExcerpt, true
	case r.contains(al.WordsB, al.WeightB, al.OnlyB):
		return StoredIsExcerpt, true
	}
	return "", false
}

// contains is the containment clause for one text of an alignment without
// content differences: heavy enough, and at most ContainMaxOwn of its
// tokens in sentences the other text lacks.
func (r Rule) contains(words, weight, only int) bool {
	return r.ContainMaxOwn > 0 && words > 0 && weight >= r.ContainMinWeight && float64(only) <= r.ContainMaxOwn*float64(words)
}

// excerpt reports whether a text of aChars characters, of whose features
// a share contained stands in one of bChars characters, is an excerpt of
// it: long enough, the other ExcerptRatio times longer, and contained.
func (r Rule) excerpt(aChars, bChars int, contained float64) bool {
	return r.MinContainment > 0 && aChars >= r.ExcerptMinChars && float64(bChars) >= r.ExcerptRatio*float64(aChars) &&
		contained >= r.MinContainment
}

// AnyDistance reports whether the rule can relate a query of this many
// characters at any simhash distance (the Jaccard clause from ShortChars,
// the excerpt clause from ExcerptMinChars, the alignment under TextChars):
// only then are candidates found beyond the lookup's k (through the
// index's LSH band rows) worth reading.
func (r Rule) AnyDistance(chars int) bool {
	return chars >= r.ShortChars || r.MinContainment > 0 && chars >= r.ExcerptMinChars || r.TextChars > 0 && chars < r.TextChars
}

// KeepText returns the normalized text a document of this many characters
// keeps in its docs cell for the alignment clause: text when the document
// is under TextChars characters and text is at most maxBytes long, else
// "".
func (r Rule) KeepText(chars int, text string, maxBytes int) string {
	if r.TextChars > 0 && chars < r.TextChars && len(text) <= maxBytes {
		return text
	}
	return ""
}
