package metrics

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Meta describes a benchmark run for the report's header.
type Meta struct {
	Command  string // the exact command that produced the report
	Machine  string // e.g. "2 cores, 24 GiB, linux/amd64"
	Date     string
	Commit   string // git commit of the code measured
	Recipe   string // fingerprint recipe version
	DefaultK int    // the service's default (and largest) k
	CurveMax int    // largest k of the offline curve
	Pairs    int
	Stored   int // originals stored in the index
	// Service says what was measured; "" means the real service started
	// by the runner (REST on loopback, embedded Pebble store).
	Service string
	Notes   []string
	// Top is Markdown printed after the header, before the pair results
	// (the whole-corpus section); "" prints nothing.
	Top string
	// Method is Markdown explaining the benchmark (corpus, pairs, rule,
	// how to reproduce); it is printed after the results.
	Method string
	// Peers are other detectors run on the same pairs (a pair called a
	// duplicate when the peer returned its original): one summary row each.
	Peers []Peer
}

// Peer is another detector's confusion counts on the benchmark's pairs.
type Peer struct {
	Name   string
	Counts Counts
}

// Kinds tells the report about pair kinds: report order, polarity and a
// description.
type Kinds struct {
	Order    []string
	Positive func(string) bool
	Describe func(string) string
}

// Targets are the goals, checked in the summary.
var Targets = []struct {
	Name, Bucket string // Bucket "" is all pairs
	P, R, F1     float64
}{
	{"long: P >= 0.98, R >= 0.95", "long", 0.98, 0.95, 0},
	{"short: P >= 0.95, R >= 0.85", "short", 0.95, 0.85, 0},
	{"overall: F1 >= 0.95", "", 0, 0, 0.95},
}

var (
	langOrder   = []string{"zh", "en"}
	bucketOrder = []string{"short", "medium", "long"}
	sizeOrder   = []string{"tiny", "small", "medium", "large"}
)

// WriteMarkdown writes the quality report (docs/QUALITY.md) for outcomes.
func WriteMarkdown(w io.Writer, m Meta, os []Outcome, kinds Kinds) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	rule := Rule(PartnerReturned)

	p("# Detection quality\n\n")
	svc := m.Service
	if svc == "" {
		svc = "the real service (REST on loopback, embedded Pebble store)"
	}
	p("Measured by `scripts/eval` on %s: %d labelled pairs, %d originals stored through %s.\n\n", m.Date, m.Pairs, m.Stored, svc)
	p("- Command: `%s`\n- Machine: %s\n- Code: %s, fingerprint recipe %s\n- Default decision rule: the service's own answer at its default k = %d (a pair is detected when the check lists the original: candidates within k from the index rows and, when the index keeps LSH band rows, near-copies at any distance from the band rows, all confirmed by the service's decision rule, detect/ and decide/)\n", m.Command, m.Machine, m.Commit, m.Recipe, m.DefaultK)
	for _, n := range m.Notes {
		p("- %s\n", n)
	}
	if m.Top != "" {
		p("\n%s", m.Top)
	}
	p("\n## Summary at the default rule (service answer, k = %d)\n\n", m.DefaultK)
	tot := Total(os, rule)
	if len(m.Peers) == 0 {
		p("| pairs | TP | FP | TN | FN | precision | recall | F1 |\n|---|---|---|---|---|---|---|---|\n")
		p("| %d | %d | %d | %d | %d | %s | %s | %s |\n\n", tot.N(), tot.TP, tot.FP, tot.TN, tot.FN, F(tot.Precision()), F(tot.Recall()), F(tot.F1()))
	} else {
		p("| detector | pairs | TP | FP | TN | FN | precision | recall | F1 |\n|---|---|---|---|---|---|---|---|---|\n")
		row := func(name string, c Counts) {
			p("| %s | %d | %d | %d | %d | %d | %s | %s | %s |\n", name, c.N(), c.TP, c.FP, c.TN, c.FN, F(c.Precision()), F(c.Recall()), F(c.F1()))
		}
		row("simdex (service answer)", tot)
		for _, pr := range m.Peers {
			row(pr.Name, pr.Counts)
		}
		p("\n")
	}
	byBucket := Tally(os, rule, func(o Outcome) string { return o.Bucket })
	p("| target (pair benchmark) | measured | met |\n|---|---|---|\n")
	for _, t := range Targets {
		c := tot
		if t.Bucket != "" {
			c = byBucket[t.Bucket]
		}
		met := c.Precision() >= t.P && c.Recall() >= t.R && (t.F1 == 0 || c.F1() >= t.F1)
		p("| %s | P %s, R %s, F1 %s | %s |\n", t.Name, F(c.Precision()), F(c.Recall()), F(c.F1()), map[bool]string{true: "yes", false: "**no**"}[met])
	}

	table := func(title string, m map[string]Counts, order []string) {
		p("\n### %s\n\n| group | pairs | positives | TP | FP | FN | precision | recall | F1 |\n|---|---|---|---|---|---|---|---|---|\n", title)
		for _, k := range KeysIn(m, order) {
			c := m[k]
			p("| %s | %d | %d | %d | %d | %d | %s | %s | %s |\n", k, c.N(), c.TP+c.FN, c.TP, c.FP, c.FN, F(c.Precision()), F(c.Recall()), F(c.F1()))
		}
	}
	table("By language", Tally(os, rule, func(o Outcome) string { return o.Lang }), langOrder)
	table("By length bucket", byBucket, bucketOrder)
	table("By source", Tally(os, rule, func(o Outcome) string { return o.Source }), nil)
	var lb []string
	for _, l := range langOrder {
		for _, bk := range bucketOrder {
			lb = append(lb, l+"/"+bk)
		}
	}
	table("By language and length", Tally(os, rule, func(o Outcome) string { return o.Lang + "/" + o.Bucket }), lb)

	p("\n### By edit kind\n\nPositive kinds: recall (share detected). Negative kinds: false-positive rate (share wrongly called duplicates). Distances are between the two sides' fingerprints (median, 90th percentile; pairs with a fingerprint on both sides).\n\n")
	p("| kind | pairs | detected | recall | FP rate | median d | p90 d | short recall / FP rate | what the edit does |\n|---|---|---|---|---|---|---|---|---|\n")
	byKind := Tally(os, rule, func(o Outcome) string { return o.Kind })
	byKindShort := Tally(os, rule, func(o Outcome) string {
		if o.Bucket != "short" {
			return ""
		}
		return o.Kind
	})
	for _, k := range KeysIn(byKind, kinds.Order) {
		c := byKind[k]
		sel := func(o Outcome) bool { return o.Kind == k }
		med, _ := Quantile(os, 0.5, sel)
		p90, _ := Quantile(os, 0.9, sel)
		sc := byKindShort[k]
		if kinds.Positive(k) {
			p("| %s | %d | %d | %s | | %s | %s | %s | %s |\n", k, c.N(), c.TP, F(c.Recall()), D(med), D(p90), F(sc.Recall()), kinds.Describe(k))
		} else {
			p("| %s | %d | %d | | %s | %s | %s | %s | %s |\n", k, c.N(), c.FP, F(c.FPRate()), D(med), D(p90), F(sc.FPRate()), kinds.Describe(k))
		}
	}

	p("\n### Edit kinds by language and length\n\nRecall (positive kinds) or false-positive rate (negative kinds) at k = %d; – where a kind has no such pairs.\n\n", m.DefaultK)
	p("| kind | zh | en | short | medium | long |\n|---|---|---|---|---|---|\n")
	byKindLang := Tally(os, rule, func(o Outcome) string { return o.Kind + "/" + o.Lang })
	byKindBucket := Tally(os, rule, func(o Outcome) string { return o.Kind + "/" + o.Bucket })
	for _, k := range KeysIn(byKind, kinds.Order) {
		rate := func(c Counts) string {
			if kinds.Positive(k) {
				return F(c.Recall())
			}
			return F(c.FPRate())
		}
		p("| %s | %s | %s | %s | %s | %s |\n", k, rate(byKindLang[k+"/zh"]), rate(byKindLang[k+"/en"]),
			rate(byKindBucket[k+"/short"]), rate(byKindBucket[k+"/medium"]), rate(byKindBucket[k+"/long"]))
	}

	p("\n### Positives by edit size\n\nSize is 1 − Jaccard similarity of the two sides' character 5-gram sets: tiny < 0.05 ≤ small < 0.2 ≤ medium < 0.5 ≤ large.\n\n")
	p("| size | positives | detected | recall | median d |\n|---|---|---|---|---|\n")
	bySize := Tally(os, rule, func(o Outcome) string {
		if !o.Duplicate {
			return ""
		}
		return o.SizeClass
	})
	for _, k := range KeysIn(bySize, sizeOrder) {
		c := bySize[k]
		med, _ := Quantile(os, 0.5, func(o Outcome) bool { return o.Duplicate && o.SizeClass == k })
		p("| %s | %d | %d | %s | %s |\n", k, c.N(), c.TP, F(c.Recall()), D(med))
	}

	p("\n## Curve over k\n\nDecision \"duplicate iff the fingerprints are within distance k\", simhash alone, without the service's second check (its decision rule, detect/ and decide/, confirms candidates by their stored sketches, so its answer at k ≤ %d can be stricter: see \"Other checks\"). Larger k are computed from the fingerprints the service returned.\n\n", m.DefaultK)
	p("| k | precision | recall | F1 | short P | short R | medium P | medium R | long P | long R |\n|---|---|---|---|---|---|---|---|---|---|\n")
	all := Curve(os, m.CurveMax, nil)
	per := map[string][]Point{}
	for _, bk := range bucketOrder {
		per[bk] = Curve(os, m.CurveMax, func(o Outcome) bool { return o.Bucket == bk })
	}
	for k := 0; k <= m.CurveMax; k++ {
		c := all[k]
		p("| %d | %s | %s | %s |", k, F(c.Precision()), F(c.Recall()), F(c.F1()))
		for _, bk := range bucketOrder {
			q := per[bk][k]
			p(" %s | %s |", F(q.Precision()), F(q.Recall()))
		}
		p("\n")
	}

	p("\n### Reference: raw text overlap\n\nNo fingerprint: a pair is called a duplicate when the raw sides (title and body, boilerplate included) share at least j of their character 5-grams (Jaccard). It shows how separable the pairs are by plain text overlap, e.g. for a second check on candidates.\n\n")
	p("| j | precision | recall | F1 | short P | short R | long P | long R |\n|---|---|---|---|---|---|---|---|\n")
	for _, j := range []float64{0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9} {
		c := Total(os, OverlapAtLeast(j))
		bb := Tally(os, OverlapAtLeast(j), func(o Outcome) string { return o.Bucket })
		p("| %.1f | %s | %s | %s | %s | %s | %s | %s |\n", j, F(c.Precision()), F(c.Recall()), F(c.F1()),
			F(bb["short"].Precision()), F(bb["short"].Recall()), F(bb["long"].Precision()), F(bb["long"].Recall()))
	}

	p("\n## Other checks\n\n")
	ah := Total(os, AnyHit)
	p("- \"Any hit\" rule (the check's `duplicate` flag: any stored document the service confirmed, not necessarily the partner; k = %d): P %s, R %s, F1 %s (TP %d, FP %d, FN %d).\n", m.DefaultK, F(ah.Precision()), F(ah.Recall()), F(ah.F1()), ah.TP, ah.FP, ah.FN)
	ch := Total(os, CopyReturned)
	p("- \"Any copy\" rule (the check returned the pair's document in any stored form, bare or in another site's template): P %s, R %s, F1 %s (TP %d, FP %d, FN %d).\n", F(ch.Precision()), F(ch.Recall()), F(ch.F1()), ch.TP, ch.FP, ch.FN)
	for k := 0; k <= m.DefaultK; k++ {
		d := Disagreements(os, k)
		p("- Service answer vs simhash distance alone at k = %d: %d differences (pairs the decision rule rejected, or index misses)", k, len(d))
		if len(d) > 0 {
			var ids []string
			for _, o := range d[:min(5, len(d))] {
				ids = append(ids, fmt.Sprintf("%s (d=%d, hit=%d)", o.PairID, o.Distance, o.PartnerHit))
			}
			p(" (e.g. %s)", strings.Join(ids, "; "))
		}
		p(".\n")
	}
	exact := 0
	for _, o := range os {
		if o.Exact {
			exact++
		}
	}
	p("- Partner returned as an exact-content match: %d pairs.\n", exact)
	fails := map[string]int{}
	for _, o := range os {
		if o.Failure != "" {
			fails[fmt.Sprintf("%s (%s %s)", o.Failure, o.Lang, o.Bucket)]++
		}
	}
	if len(fails) == 0 {
		p("- Every side of every pair got a fingerprint.\n")
	} else {
		p("- Sides without a fingerprint (the pair counts as not detected):\n")
		ks := make([]string, 0, len(fails))
		for k := range fails {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			p("  - %s: %d\n", k, fails[k])
		}
	}
	if m.Method != "" {
		p("\n%s", m.Method)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
