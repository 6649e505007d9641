package whole

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/simdex/simdex/scripts/eval/judge"
	"github.com/simdex/simdex/scripts/eval/metrics"
)

// Target is one whole-corpus goal.
type Target struct {
	Name string
	// Group is "" (all queries) or a "lang/bucket" cell.
	Group string
	// Precision, Recall: minimum hit precision and recall; MaxUnstored:
	// the most never-stored documents called duplicates (share), 0 = none
	// checked.
	Precision, Recall, MaxUnstored float64
}

var (
	langs   = []string{"zh", "en"}
	buckets = []string{"short", "medium", "long"}
)

// Cells are the language x length cells, in report order.
func Cells() []string {
	var out []string
	for _, l := range langs {
		for _, b := range buckets {
			out = append(out, l+"/"+b)
		}
	}
	return out
}

// Targets are the whole-corpus goals: overall precision and recall, the
// same per language x length cell with lower bars, and at most 1% of
// never-stored documents called duplicates in every cell.
func Targets() []Target {
	ts := []Target{{Name: "overall: hit precision >= 0.98, recall >= 0.95", Precision: 0.98, Recall: 0.95}}
	for _, c := range Cells() {
		ts = append(ts, Target{Name: c + ": hit precision >= 0.97, recall >= 0.90", Group: c, Precision: 0.97, Recall: 0.90})
	}
	for _, c := range Cells() {
		ts = append(ts, Target{Name: c + ": never-stored called duplicates <= 1%", Group: c, MaxUnstored: 0.01})
	}
	return ts
}

// Meta describes the run for the section.
type Meta struct {
	Stored        int // documents in the index
	TemplateLines int // lines the judge treats as template
	MinDocs       int
	// Sources maps a stored id to its source, for the wrong-hit tables.
	Sources map[string]string
	// Agreement is the judge's agreement with the hand-labelled sample,
	// per set: agreeing hits and hits.
	Agreement map[string][2]int
}

func cellOf(r QueryResult) string { return r.Query.Lang + "/" + r.Query.Bucket }

// WriteSection writes the "Whole-corpus quality" section of the report.
// stored (optional) gives the texts quoted in the examples of wrong hits.
func WriteSection(w io.Writer, m Meta, rs []QueryResult, kindOrder []string, stored []Stored) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	tot := Total(rs)
	byCell := Tally(rs, cellOf)
	p("## Whole-corpus quality\n\n")
	p("Every hit of every check (every document in a check's `duplicates`) is judged against the whole stored corpus of %d documents, not only against a pair's own original: by provenance when the query was made from the stored document's corpus document, otherwise by the independent content criterion (template lines, counted with their digits masked, in >= %d stored documents dropped, then character 5-grams; %d template lines; see \"Whole-corpus benchmark\" in the method). ", m.Stored, m.MinDocs, m.TemplateLines)
	p("%d queries: %d pair queries and %d never-stored documents (as is, published on the site, or quoting a stored quotation).", tot.Queries, tot.Queries-tot.Unstored, tot.Unstored)
	if len(m.Agreement) > 0 {
		p(" The content criterion agrees with hand labels on")
		for i, set := range metrics.KeysIn(m.Agreement, []string{"choice", "validation", "key"}) {
			a := m.Agreement[set]
			sep := ","
			if i == 0 {
				sep = ""
			}
			p("%s %d of %d hits of the %s set (%s)", sep, a[0], a[1], set, f3(ratio(a[0], a[1], 0)))
		}
		p(" (scripts/eval/judge/testdata/labelled-hits.jsonl); it is lenient on sibling reference pages (different functions or commands documented in nearly the same words), so hit precision on help and manual pages is an upper bound.")
	}
	p("\n\n")
	p("| target | measured | met |\n|---|---|---|\n")
	yes := map[bool]string{true: "yes", false: "**no**"}
	for _, t := range Targets() {
		c := tot
		if t.Group != "" {
			c = byCell[t.Group]
		}
		if t.MaxUnstored > 0 {
			p("| %s | %s (%d of %d) | %s |\n", t.Name, pct(c.UnstoredRate()), c.UnstoredFalseDup, c.Unstored, yes[c.Unstored > 0 && c.UnstoredRate() <= t.MaxUnstored])
			continue
		}
		p("| %s | P %s (%d of %d hits), R %s | %s |\n", t.Name, f3(c.HitPrecision()), c.CorrectHits, c.Hits, f3(c.Recall()), yes[c.HitPrecision() >= t.Precision && c.Recall() >= t.Recall])
	}
	WriteTable(&b, "By language and length", &tot, byCell, Cells())
	WriteTable(&b, "By source of the query", nil, Tally(rs, func(r QueryResult) string { return r.Query.Source }), nil)
	WriteTable(&b, "By kind of query", nil, Tally(rs, func(r QueryResult) string { return r.Query.Kind }), kindOrder)

	// Wrong hits by why they are wrong.
	type key struct{ a, b string }
	wrongRel, wrongSrc := map[string]int{}, map[key]int{}
	rels, relsContent := map[key]int{}, map[key]int{}
	anyService := false
	for _, r := range rs {
		for _, h := range r.Hits {
			if h.ServiceRelation != "" {
				anyService = true
				rels[key{h.ServiceRelation, h.Judge.Relation}]++
				if h.Basis == "content" {
					relsContent[key{h.ServiceRelation, h.Judge.Relation}]++
				}
			}
			if h.Correct {
				continue
			}
			wrongRel[h.Basis+": "+h.Judge.Relation]++
			wrongSrc[key{r.Query.Source, m.Sources[h.Stored]}]++
		}
	}
	wrong := tot.Hits - tot.CorrectHits
	p("\n### Wrong hits\n\n%d of %d hits are wrong. By the judge's relation (\"changed\": a copy of the stored document with a fact changed, labelled not a duplicate; \"content\": the content criterion):\n\n| basis: judge relation | wrong hits |\n|---|---|\n", wrong, tot.Hits)
	for _, k := range sortedByCount(wrongRel) {
		p("| %s | %d |\n", k, wrongRel[k])
	}
	p("\nBy source of the query and of the stored document:\n\n| query source | stored source | wrong hits |\n|---|---|---|\n")
	ks := make([]key, 0, len(wrongSrc))
	for k := range wrongSrc {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(x, y key) int {
		if wrongSrc[x] != wrongSrc[y] {
			return wrongSrc[y] - wrongSrc[x]
		}
		return strings.Compare(x.a+x.b, y.a+y.b)
	})
	for _, k := range ks {
		p("| %s | %s | %d |\n", k.a, k.b, wrongSrc[k])
	}
	writeExamples(p, m, rs, stored)
	p("\n### Service relation vs judge relation\n\n")
	if !anyService {
		p("The service's answers carry no per-hit `relation`; nothing to compare.\n")
	} else {
		confusion := func(title string, m map[key]int) {
			p("%s\n\n| service \\ judge | %s |\n|---|%s\n", title, strings.Join(judge.Relations, " | "), strings.Repeat("---|", len(judge.Relations)))
			var srels []string
			for k := range m {
				if !slices.Contains(srels, k.a) {
					srels = append(srels, k.a)
				}
			}
			slices.Sort(srels)
			for _, s := range srels {
				p("| %s |", s)
				for _, j := range judge.Relations {
					p(" %d |", m[key{s, j}])
				}
				p("\n")
			}
		}
		confusion("Every hit whose answer carries the service's `relation` (rows) against the judge's content relation (columns), whatever decided the hit's verdict:", rels)
		confusion("\nOnly the hits judged by content (the query was not made from the stored document's corpus document):", relsContent)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTable writes a "### title" table of the figures of every group of m
// (in order, then the rest sorted), after an "all" row when all is given.
func WriteTable(w io.Writer, title string, all *Counts, m map[string]Counts, order []string) {
	fmt.Fprintf(w, "\n### %s\n\n", title)
	fmt.Fprintf(w, "| group | queries | hits | correct | hit precision | edited copies | found | recall | answered duplicate | false duplicates | query precision | never-stored | called duplicates | rate |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	row := func(k string, c Counts) {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %d | %d | %s | %d | %d | %s | %d | %d | %s |\n", k, c.Queries, c.Hits, c.CorrectHits, f3(c.HitPrecision()),
			c.Positives, c.Found, f3(c.Recall()), c.Flagged, c.FalseDup, f3(c.QueryPrecision()), c.Unstored, c.UnstoredFalseDup, pct(c.UnstoredRate()))
	}
	if all != nil {
		row("all", *all)
	}
	for _, k := range metrics.KeysIn(m, order) {
		row(k, m[k])
	}
}

// WrongHit is one judged hit for the machine-readable lists.
type WrongHit struct {
	Query           string        `json:"query"`
	Stored          string        `json:"stored"`
	Kind            string        `json:"kind"`
	Lang            string        `json:"lang"`
	Bucket          string        `json:"bucket"`
	QuerySource     string        `json:"query_source"`
	StoredSource    string        `json:"stored_source"`
	Basis           string        `json:"basis"`
	Correct         bool          `json:"correct"`
	Judge           judge.Verdict `json:"judge"`
	ServiceRelation string        `json:"service_relation,omitempty"`
	Clause          string        `json:"clause,omitempty"`
	QueryText       string        `json:"query_text"`
	StoredText      string        `json:"stored_text"`
}

// WriteWrongHits writes every wrong hit as JSON Lines, with the first
// 300 characters of both texts.
func WriteWrongHits(w io.Writer, rs []QueryResult, stored []Stored) error {
	return WriteHits(w, rs, stored, func(h Judged) bool { return !h.Correct }, 300)
}

// WriteHits writes the hits keep selects as JSON Lines, with the first n
// characters of both texts (all of them when n <= 0).
func WriteHits(w io.Writer, rs []QueryResult, stored []Stored, keep func(Judged) bool, n int) error {
	byID := make(map[string]*Stored, len(stored))
	for i := range stored {
		byID[stored[i].ID] = &stored[i]
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, r := range rs {
		for _, h := range r.Hits {
			if !keep(h) {
				continue
			}
			wh := WrongHit{Query: r.Query.ID, Stored: h.Stored, Kind: r.Query.Kind, Lang: r.Query.Lang, Bucket: r.Query.Bucket, QuerySource: r.Query.Source,
				Basis: h.Basis, Correct: h.Correct, Judge: h.Judge, ServiceRelation: h.ServiceRelation, Clause: h.Clause, QueryText: head(r.Query.Title+"\n"+r.Query.Body, n)}
			if s := byID[h.Stored]; s != nil {
				wh.StoredSource, wh.StoredText = s.Source, head(s.Title+"\n"+s.Body, n)
			}
			if err := enc.Encode(wh); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

func head(s string, n int) string {
	rs := []rune(s)
	if n > 0 && len(rs) > n {
		return string(rs[:n])
	}
	return s
}

func f3(x float64) string { return fmt.Sprintf("%.3f", x) }

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func sortedByCount(m map[string]int) []string {
	ks := metrics.KeysIn(m, nil)
	slices.SortStableFunc(ks, func(a, b string) int { return m[b] - m[a] })
	return ks
}

// writeExamples prints two wrong hits (the first by query id) of each of
// the four largest groups of wrong hits by query source, stored source and
// the judge's relation.
func writeExamples(p func(string, ...any), m Meta, rs []QueryResult, stored []Stored) {
	byID := make(map[string]*Stored, len(stored))
	for i := range stored {
		byID[stored[i].ID] = &stored[i]
	}
	type ex struct {
		r QueryResult
		h Judged
	}
	groups := map[string][]ex{}
	for _, r := range rs {
		for _, h := range r.Hits {
			if !h.Correct {
				g := r.Query.Source + " → " + m.Sources[h.Stored] + ", " + h.Basis + ": " + h.Judge.Relation
				groups[g] = append(groups[g], ex{r, h})
			}
		}
	}
	if len(groups) == 0 {
		return
	}
	count := map[string]int{}
	for g, xs := range groups {
		count[g] = len(xs)
	}
	p("\nExamples (the first two by query id of the four largest groups; texts cut at 120 characters, lines joined by \" / \"):\n")
	oneLine := func(s string) string { return strings.ReplaceAll(head(strings.TrimSpace(s), 120), "\n", " / ") }
	for _, g := range sortedByCount(count)[:min(4, len(count))] {
		xs := groups[g]
		slices.SortFunc(xs, func(a, b ex) int {
			return strings.Compare(a.r.Query.ID+"\x00"+a.h.Stored, b.r.Query.ID+"\x00"+b.h.Stored)
		})
		p("\n- **%s** (%d):\n", g, len(xs))
		for _, x := range xs[:min(2, len(xs))] {
			v := x.h.Judge
			svc := ""
			if x.h.ServiceRelation != "" {
				svc = fmt.Sprintf("; service: %s", x.h.ServiceRelation)
				if x.h.Clause != "" {
					svc += " (" + x.h.Clause + ")"
				}
			}
			p("  - `%s` → `%s` (R %.2f, QC %.2f, SC %.2f%s)\n", x.r.Query.ID, x.h.Stored, v.Resemblance, v.QueryContainment, v.StoredContainment, svc)
			p("    query: %s\n", oneLine(x.r.Query.Title+"\n"+x.r.Query.Body))
			if s := byID[x.h.Stored]; s != nil {
				p("    stored: %s\n", oneLine(s.Title+"\n"+s.Body))
			}
		}
	}
}
