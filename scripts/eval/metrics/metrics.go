// Package metrics turns the service's answers on labelled pairs into the
// benchmark's numbers: confusion counts, precision, recall and F1 under a
// decision rule, broken down by language, length bucket, edit kind and
// edit size, and the curve over the distance threshold k.
package metrics

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Outcome is what the service said about one pair.
type Outcome struct {
	PairID string `json:"pair"`
	// Duplicate is the pair's label.
	Duplicate bool   `json:"duplicate"`
	Kind      string `json:"kind"`
	Lang      string `json:"lang"`
	Source    string `json:"source"`
	Bucket    string `json:"bucket"`
	SizeClass string `json:"size_class"`
	// Size is the pair's edit size (1 - character 5-gram Jaccard of the
	// raw sides), for the text-overlap reference in the report.
	Size float64 `json:"size"`
	// Distance is the Hamming distance between the fingerprints the
	// service gave the two sides, or -1 when it gave none for one of
	// them (low information, or an error).
	Distance int `json:"distance"`
	// PartnerHit is the distance at which the service's check of the
	// query returned the pair's original, or -1 if the check (at the
	// service's largest k) did not return it.
	PartnerHit int `json:"partner_hit"`
	// CopyHit is the smallest distance at which the check returned any
	// stored copy of the pair's corpus document (the bare document or a
	// copy in some site template; the pair's own original included), -1
	// if none.
	CopyHit int `json:"copy_hit"`
	// AnyHit is the check's "duplicate" flag: some stored document lies
	// within the service's default k.
	AnyHit bool `json:"any_hit"`
	// Exact is the original's hit flagged as an exact-content match.
	Exact bool `json:"exact"`
	// Failure names why a side has no fingerprint ("" when both have one),
	// e.g. "query: low-information".
	Failure string `json:"failure,omitempty"`
}

// Rule decides from an Outcome whether the pair is called a duplicate.
type Rule func(Outcome) bool

// PartnerWithin is the benchmark's decision rule at threshold k: the
// check of the query returned the pair's original at distance <= k. It is
// what the service answers; it needs k <= the index's K.
func PartnerWithin(k int) Rule {
	return func(o Outcome) bool { return o.PartnerHit >= 0 && o.PartnerHit <= k }
}

// PartnerReturned is the benchmark's default rule: the check of the query
// returned the pair's original at all, at whatever distance. Before the
// index had LSH band rows every returned hit was within the service's k, so
// this equals PartnerWithin(k) there; with bands the service also returns
// (and its decision rule confirms) near-copies beyond k.
func PartnerReturned(o Outcome) bool { return o.PartnerHit >= 0 }

// CopyReturned calls a pair a duplicate when the check returned any stored
// copy of its original document, at whatever distance.
func CopyReturned(o Outcome) bool { return o.CopyHit >= 0 }

// DistanceWithin is the same decision computed from the two fingerprints
// directly: Hamming distance <= k. For k <= K it must agree with
// PartnerWithin (the index is exact); beyond K it is what an index built
// with a larger K would answer.
func DistanceWithin(k int) Rule {
	return func(o Outcome) bool { return o.Distance >= 0 && o.Distance <= k }
}

// OverlapAtLeast is a reference rule that needs no fingerprint: the raw
// texts share at least j of their character 5-grams (Jaccard).
func OverlapAtLeast(j float64) Rule {
	return func(o Outcome) bool { return 1-o.Size >= j }
}

// CopyWithin calls a pair a duplicate when the check returned any stored
// copy of its original document within distance k.
func CopyWithin(k int) Rule {
	return func(o Outcome) bool { return o.CopyHit >= 0 && o.CopyHit <= k }
}

// AnyHit calls a pair a duplicate when the check found any stored
// document within the default k, whatever it was.
func AnyHit(o Outcome) bool { return o.AnyHit }

// Counts is a confusion matrix.
type Counts struct {
	TP, FP, TN, FN int
}

// Add counts one decision.
func (c *Counts) Add(label, predicted bool) {
	switch {
	case label && predicted:
		c.TP++
	case label:
		c.FN++
	case predicted:
		c.FP++
	default:
		c.TN++
	}
}

// N is the number of pairs counted.
func (c Counts) N() int { return c.TP + c.FP + c.TN + c.FN }

// Precision is TP/(TP+FP); NaN when nothing was called a duplicate.
func (c Counts) Precision() float64 { return ratio(c.TP, c.TP+c.FP) }

// Recall is TP/(TP+FN); NaN without positive pairs.
func (c Counts) Recall() float64 { return ratio(c.TP, c.TP+c.FN) }

// FPRate is FP/(FP+TN), the share of negatives called duplicates; NaN
// without negative pairs.
func (c Counts) FPRate() float64 { return ratio(c.FP, c.FP+c.TN) }

// F1 is the harmonic mean of precision and recall; NaN when either is.
// It is 0 when both are 0.
func (c Counts) F1() float64 {
	p, r := c.Precision(), c.Recall()
	if math.IsNaN(p) || math.IsNaN(r) {
		return math.NaN()
	}
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// Tally applies rule to every outcome and counts the decisions per key
// (e.g. by language); key "" skips an outcome.
func Tally(os []Outcome, rule Rule, key func(Outcome) string) map[string]Counts {
	m := map[string]Counts{}
	for _, o := range os {
		k := key(o)
		if k == "" {
			continue
		}
		c := m[k]
		c.Add(o.Duplicate, rule(o))
		m[k] = c
	}
	return m
}

// Total counts rule's decisions over all outcomes.
func Total(os []Outcome, rule Rule) Counts {
	return Tally(os, rule, func(Outcome) string { return "all" })["all"]
}

// Point is one threshold of a curve.
type Point struct {
	K int
	Counts
}

// Curve counts DistanceWithin(k) for k = 0..maxK over outcomes for which
// keep returns true (nil keeps all).
func Curve(os []Outcome, maxK int, keep func(Outcome) bool) []Point {
	pts := make([]Point, 0, maxK+1)
	for k := 0; k <= maxK; k++ {
		var c Counts
		rule := DistanceWithin(k)
		for _, o := range os {
			if keep == nil || keep(o) {
				c.Add(o.Duplicate, rule(o))
			}
		}
		pts = append(pts, Point{K: k, Counts: c})
	}
	return pts
}

// Quantile returns the q-quantile (0..1, nearest rank) of the distances of
// the outcomes keep selects that have a distance, and how many those are;
// -1 when there are none.
func Quantile(os []Outcome, q float64, keep func(Outcome) bool) (int, int) {
	var ds []int
	for _, o := range os {
		if o.Distance >= 0 && (keep == nil || keep(o)) {
			ds = append(ds, o.Distance)
		}
	}
	if len(ds) == 0 {
		return -1, 0
	}
	sort.Ints(ds)
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	i = min(max(i, 0), len(ds)-1)
	return ds[i], len(ds)
}

// Disagreements lists outcomes where the service's answer at k differs
// from the fingerprint distance (PartnerWithin(k) != DistanceWithin(k)).
// An exact index gives none; each one is a lookup bug or a truncated hit
// list, and the report shows them.
func Disagreements(os []Outcome, k int) []Outcome {
	var out []Outcome
	a, b := PartnerWithin(k), DistanceWithin(k)
	for _, o := range os {
		if a(o) != b(o) {
			out = append(out, o)
		}
	}
	return out
}

// F formats a ratio with 3 decimals, "–" for NaN.
func F(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.3f", x)
}

// D formats a distance, "–" for none (-1).
func D(d int) string {
	if d < 0 {
		return "–"
	}
	return fmt.Sprint(d)
}

// KeysIn returns m's keys ordered by order first, then the rest sorted.
func KeysIn[V any](m map[string]V, order []string) []string {
	var out []string
	for _, k := range order {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	var rest []string
	for k := range m {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}
