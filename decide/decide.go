// Package decide is simdex's duplicate decision on one pair: given a
// query and a stored document the index found, how does the stored
// document relate to the query, and is it a duplicate? It reads no index
// (package detect gathers the candidates and calls it on every route:
// check, batch check, insert-if-unique), so a Go program embedding simdex
// decides exactly as the service does.
//
// Rule.Judge returns a Verdict: a Relation (NearIdentical, QueryIsExcerpt,
// StoredIsExcerpt or Overlap), the resemblance (estimated Jaccard of the
// two feature sets) and both containments, and the clause that decided; a
// Policy says which relations are duplicates (default: near-identical and
// a query that is an excerpt of a stored document; copy detection also
// counts a stored document inside the query; near_identical counts only
// near-identical documents).
//
// What is compared leaves out the query's template (Template): sentences
// that many stored documents share, learned from the document counts of
// the query's text-key rows (Rule.TemplateKeys), together with the light
// lines around them (TemplateSpans). Two mails of one author that share
// only a signature and a list footer are not duplicates; a copy of a mail
// still is, whatever surrounds it.
//
// The clauses, in order:
//
//   - exact: the same normalized text (distance 0, same exact hash).
//   - distance: a side without a sketch (a bare fingerprint) is judged by
//     the simhash distance alone, within FallbackK and the lookup's k.
//   - low information: a side with fewer than LowInformationSketch sketch
//     values (fewer than three content words) is related only by the
//     alignment of short texts, never by set overlap.
//   - resemblance: both sides of ShortChars (200) characters or more and
//     Jaccard >= MinJaccard (0.6), at any distance: near-identical.
//   - alignment: a short side and both texts known (documents under
//     TextChars, 400, keep their normalized text): the texts are aligned
//     token by token and every difference is classified as an editor
//     reads it (Align: numbers, one-letter slips, one wrong Han character,
//     whole sentences or lines, clauses moved are benign; a word replaced,
//     inserted or dropped within a sentence, or a negation, is content).
//     No content difference and most of the longer text aligned:
//     near-identical; no content difference and one text almost wholly
//     inside the other (ContainMaxOwn, ContainMinWeight): an excerpt.
//   - short: a short side without both texts: distance <= ShortK and
//     Jaccard >= ShortMinJaccard (0.9).
//   - containment: one text at least ExcerptRatio (1.25) times longer and
//     holding at least MinContainment (0.9) of the other's features (the
//     shorter at least ExcerptMinChars, 50): an excerpt, in the direction
//     the lengths say.
//
// docs/DECISION.md gives each threshold's measured reason and history.
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
	// ExcerptMinShare is the least share of a stored document a query
	// contained in it must cover to be its excerpt (most of it), rather
	// than one passage of it (a sentence quoted from a long page, a mail
	// quoted inside a reply: overlap), unless the query begins as the
	// stored document does (its lead key is the stored one's: a
	// truncation, a teaser). Default 0.5.
	ExcerptMinShare float64
	// TextChars: documents under this many normalized characters keep
	// their normalized text (Side.Text, the docs cell's text) for the
	// alignment clause and the rewritten veto (0: both are off). Default
	// 4000: a mail of a few lines under a signature and a list footer is
	// short once its template is left out, and only its text can be
	// aligned; a help or manual page and its sibling (another function in
	// the same words) resemble each other closely, and only their texts
	// tell them apart.
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
	// MaxChangedWords: two texts of ShortChars or more that resemble each
	// other (MinJaccard) but not closely (under ShortMinJaccard), both
	// known, are not near-identical when their alignment finds content
	// differences in this many sentences (0: off). Default 3.
	MaxChangedWords int
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
		MinContainment: 0.9, ExcerptMinChars: 50, ExcerptRatio: 1.25, ExcerptMinShare: 0.5,
		TextChars: 4000, AlignMinJaccard: 0.3, AlignMinCommon: 0.6, ContainMaxOwn: 0.1, ContainMinWeight: 16,
		TemplateMinDocs: 5, TemplateRatio: 3, TemplateMinContent: 8, MaxChangedWords: 3}
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
	case !(r.ExcerptMinShare >= 0 && r.ExcerptMinShare <= 1):
		return fmt.Errorf("%w: ExcerptMinShare %v not in [0, 1]", ErrBadRule, r.ExcerptMinShare)
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
	case r.MaxChangedWords < 0:
		return fmt.Errorf("%w: MaxChangedWords %d < 0", ErrBadRule, r.MaxChangedWords)
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

// ExactMinWeight is the least weight (a word 2, a CJK character 1) of a
// low-information text for its exact copy to count: five words or ten
// Chinese characters, as a keyed sentence.
const ExactMinWeight = fingerprint.TextKeyMinWeight

// lowInformation reports a side with a sketch of fewer than
// LowInformationSketch values (a bare fingerprint has none and is not one).
func lowInformation(s Side) bool {
	return len(s.Sketch) > 0 && len(s.Sketch) < LowInformationSketch || len(s.Sketch) == 0 && s.Text != ""
}

// textWeight is the weight of a side's text (0 unknown).
func textWeight(s Side) int {
	if s.Text == "" {
		return 0
	}
	return weight(tokenize(s.Text, nil))
}

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
	// Lead is the text's lead key (fingerprint.Sentences; 0 unknown) and
	// Keys its stored text keys (which hold its lead key): a query whose
	// lead is among a stored document's keys begins as that document does.
	Lead uint64
	Keys []uint64
}

// sameLead reports whether the query begins as the stored document does,
// with a lead that is not template (a site's header that many documents
// begin with says nothing).
func sameLead(q, s Side) bool {
	if q.Lead == 0 || !slices.Contains(s.Keys, q.Lead) {
		return false
	}
	_, tmpl := slices.BinarySearch(q.Template.Keys, q.Lead)
	return !tmpl
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

// SourceTemplateKeys returns the keys that are template overall
// (TemplateKeys of keyDocs) or in the text's source (TemplateKeys of
// sourceDocs: the same keys with the number of the source's documents in
// each row; nil when the text names no source). The source's counts are
// judged by the same relative rule on their own, so a site's footer that
// a handful of its articles carry is template for that site even when a
// sentence quoted across the corpus keeps the overall threshold above the
// footer's count. Sorted; nil when none is.
func (r Rule) SourceTemplateKeys(keyDocs, sourceDocs map[uint64]int) []uint64 {
	all := r.TemplateKeys(keyDocs)
	src := r.TemplateKeys(sourceDocs)
	if len(src) == 0 {
		return all
	}
	out := append(all, src...)
	slices.Sort(out)
	return slices.Compact(out)
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
		if !lowInformation(q) || textWeight(q) >= ExactMinWeight {
			return Verdict{Relation: NearIdentical, Resemblance: 1, QueryContainment: 1, StoredContainment: 1, Clause: ClauseExact}
		}
		// A fragment (what normalization left of a page of navigation, a
		// word or two) is nobody's copy, even of itself.
		return Verdict{Relation: Overlap, Resemblance: 1, QueryContainment: 1, StoredContainment: 1}
	}
	if len(q.Sketch) == 0 || len(s.Sketch) == 0 {
		if distance <= min(k, r.FallbackK) {
			return Verdict{Relation: NearIdentical, Clause: ClauseDistance}
		}
		return Verdict{Relation: Overlap}
	}
	both, inQ, inS, union, allS := overlap(q.Sketch, s.Sketch, q.Template.Values)
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
	// Lengths without the template: the query's is known; the stored
	// document's is estimated by the share of its sketch outside the
	// query's template.
	qChars := max(q.Chars-q.Template.Chars, 0)
	sChars := s.Chars
	if len(q.Template.Values) > 0 && allS > 0 {
		sChars = s.Chars * inS / allS
	}
	if len(q.Template.Values) > 0 && inQ < max(1, r.TemplateMinContent) {
		// Too few sketch values outside the template for the set clauses:
		// a one-sentence mail under a long signature keeps only a handful
		// in the bottom-k sketch. When both texts are known, the alignment
		// reads what is left word by word: the same text around the
		// template (a copy, restyled or with a "Re:") is near-identical, a
		// new mail with the same signature is not. An excerpt is not
		// read from so little: another author's mail that quotes the same
		// sentence inside its own is no copy of it (whole-corpus
		// benchmark, docs/DECISION.md). Otherwise nothing is left to
		// compare.
		v.Clause = ClauseTemplate
		if r.alignable(q, s, qChars, sChars) && r.aligned(q, s, v, false) == NearIdentical {
			v.Relation, v.Clause = NearIdentical, ClauseAlignment
		}
		return v
	}
	if lowInformation(q) || lowInformation(s) {
		// A low-information text (fingerprint.Result.LowInformation: a
		// handful of content words) is related by its words, never by
		// set overlap: two of them sharing their two words say nothing.
		if r.alignable(q, s, qChars, sChars) {
			if rel := r.aligned(q, s, v, false); rel != "" && rel != Overlap {
				v.Relation, v.Clause = rel, ClauseAlignment
			}
		}
		return v
	}
	short := qChars < r.ShortChars || sChars < r.ShortChars
	if !short && v.Resemblance >= r.MinJaccard && !r.rewritten(q, s, v) {
		v.Relation, v.Clause = NearIdentical, ClauseResemblance
		return v
	}
	if r.alignable(q, s, qChars, sChars) {
		switch rel := r.aligned(q, s, v, true); rel {
		case "":
		case Overlap:
			// The texts were aligned and differ in content, or neither
			// holds the other: the sketch clauses below estimate what the
			// alignment has read word by word.
			return v
		default:
			v.Relation, v.Clause = rel, ClauseAlignment
			return v
		}
	} else if short && (distance <= min(k, r.ShortK) || len(q.Template.Values) > 0) && v.Resemblance >= r.ShortMinJaccard {
		// With a template left out, the simhash distance (which counts the
		// template) says nothing about the rest: the resemblance decides.
		v.Relation, v.Clause = NearIdentical, ClauseShort
		return v
	}
	switch {
	case r.excerpt(qChars, sChars, v.QueryContainment) && (v.StoredContainment >= r.ExcerptMinShare || sameLead(q, s)):
		v.Relation, v.Clause = QueryIsExcerpt, ClauseContainment
	case r.excerpt(sChars, qChars, v.StoredContainment):
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
// (sorted): the values in both, in a, in b, and in the union, and b's
// values before leaving any out (so inB/allB is the share of b outside
// excl). From these
// the Jaccard and containment estimates follow; with excl empty and
// sketches of fewer than SketchSize values they are exact.
func overlap(a, b fingerprint.Sketch, excl []uint32) (both, inA, inB, union, allB int) {
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
		if inb {
			allB++
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
	return both, inA, inB, union, allB
}

// alignable reports whether the alignment clause judges the pair: a short
// side, and both texts known (a stored document keeps its text under
// TextChars; a query's text is always known, so a longer page is aligned
// with the short texts it may hold).
func (r Rule) alignable(q, s Side, qChars, sChars int) bool {
	return r.TextChars > 0 && (qChars < r.ShortChars || sChars < r.ShortChars) && q.Text != "" && s.Text != ""
}

// aligned is the alignment clause, on both texts without the query's
// template sentences: the texts' differences are all benign (numbers,
// typos, whole sentences or lines) and most of the longer text is the
// other one (near-identical), or one text is contained in the other
// (almost all of its tokens aligned: a copy cut short, or inside a longer
// page). It returns "" when the clause does not apply (the guard, or texts
// too long or too different to align) and Overlap when the texts were
// aligned and are neither.
func (r Rule) aligned(q, s Side, v Verdict, guard bool) Relation {
	// The cheap guard before the alignment: whole-set overlap, or for the
	// containment clause the overlap of the smaller set with the larger.
	// Without it (low-information texts, whose few features say too little
	// to guard anything) the alignment alone decides.
	contain := r.ContainMaxOwn > 0 && (!guard || max(v.QueryContainment, v.StoredContainment) >= r.AlignMinJaccard)
	if guard && v.Resemblance < r.AlignMinJaccard && !contain {
		return ""
	}
	qt, st := q.Text, s.Text
	if len(q.Template.Keys) > 0 {
		qt, st = stripTemplate(qt, q.Template.Keys), stripTemplate(st, q.Template.Keys)
	}
	al, ok := Align(qt, st)
	if !ok {
		return ""
	}
	if al.Changed > 0 {
		return Overlap
	}
	longer := max(al.WordsA, al.WordsB)
	if (!guard || v.Resemblance >= r.AlignMinJaccard) && longer > 0 && float64(al.Common) >= r.AlignMinCommon*float64(longer) {
		return NearIdentical
	}
	if !contain {
		return Overlap
	}
	switch {
	case r.contains(al.WordsA, al.WeightA, al.OnlyA) && (float64(al.WordsB-al.OnlyB) >= r.ExcerptMinShare*float64(al.WordsB) || sameLead(q, s)):
		return QueryIsExcerpt
	case r.contains(al.WordsB, al.WeightB, al.OnlyB):
		return StoredIsExcerpt
	}
	return Overlap
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

// rewritten reports whether two texts whose feature sets resemble each
// other, both known (under TextChars), differ in words here and there
// throughout: content differences in MaxChangedWords or more sentences (a
// sibling page, one name or term swapped everywhere), where a copy differs
// in a sentence or two.
func (r Rule) rewritten(q, s Side, v Verdict) bool {
	if r.MaxChangedWords <= 0 || q.Text == "" || s.Text == "" || v.Resemblance >= r.ShortMinJaccard {
		return false
	}
	qt, st := q.Text, s.Text
	if len(q.Template.Keys) > 0 {
		qt, st = stripTemplate(qt, q.Template.Keys), stripTemplate(st, q.Template.Keys)
	}
	al, ok := Align(qt, st)
	return ok && al.ChangedSentences >= r.MaxChangedWords
}
