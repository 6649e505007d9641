package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/simdex/simdex/scripts/eval/metrics"
	"github.com/simdex/simdex/scripts/eval/pairs"
	"github.com/simdex/simdex/scripts/eval/spotsigs"
	"github.com/simdex/simdex/scripts/eval/whole"
)

// spotsigsTaus are the Jaccard thresholds the report sweeps; spotsigsTau
// is the one its tables and the summary row use, chosen on the dev split
// (SEED=1 SPLIT=dev) as the swept threshold with the best F1 of whole-corpus
// hit precision and recall, and kept for the held-out split.
var spotsigsTaus = []float64{0.3, 0.44, 0.6}

const spotsigsTau = 0.44

// spotsigsVariants are other spot distances and chain lengths (d, c)
// reported at spotsigsTau beside the configuration of the tables.
var spotsigsVariants = [][2]int{{1, 2}, {1, 3}, {2, 2}}

// peerRun is SpotSigs' answer to every query of a whole-corpus run, judged.
type peerRun struct {
	cfg   spotsigs.Config
	ps    []pairs.Pair
	wc    wholeCorpus
	byTau map[float64][]whole.QueryResult
	// variants: other (d, c) at spotsigsTau.
	variants []peerVariant
	// storedSigs, querySigs: signatures per stored document and query.
	storedSigs, querySigs           []int
	took, tookTokens                time.Duration
	tookSigs, tookSearch, tookJudge time.Duration
}

type peerVariant struct {
	cfg spotsigs.Config
	rs  []whole.QueryResult
}

// runSpotSigs tokenizes wc's stored documents and queries (title and
// body, as the service gets them) once, then for cfg and every variant
// takes the signatures, finds every stored document at or above the
// lowest threshold for every query and judges the hits with wc's judge.
func runSpotSigs(log *slog.Logger, cfg spotsigs.Config, ps []pairs.Pair, wc wholeCorpus) (*peerRun, error) {
	start := time.Now()
	ex, err := spotsigs.New(cfg)
	if err != nil {
		return nil, err
	}
	texts := make([]string, 0, len(wc.stored)+len(wc.queries))
	for _, s := range wc.stored {
		texts = append(texts, s.Title+"\n"+s.Body)
	}
	for _, q := range wc.queries {
		texts = append(texts, q.Title+"\n"+q.Body)
	}
	exs := []*spotsigs.Extractor{ex}
	for _, v := range spotsigsVariants {
		vc := cfg
		vc.Distance, vc.Chain = v[0], v[1]
		if vc.Distance == cfg.Distance && vc.Chain == cfg.Chain {
			continue
		}
		vex, err := ex.WithConfig(vc)
		if err != nil {
			return nil, err
		}
		exs = append(exs, vex)
	}
	// sets[k][i]: text i's signatures under exs[k].
	sets := make([][]spotsigs.Set, len(exs))
	for k := range sets {
		sets[k] = make([]spotsigs.Set, len(texts))
	}
	parallel(len(texts), func(i int) {
		toks := ex.Tokens(texts[i])
		for k, e := range exs {
			sets[k][i] = e.SignatureOf(toks)
		}
	})
	pr := &peerRun{cfg: cfg, ps: ps, wc: wc, tookSigs: time.Since(start)}
	for _, s := range sets[0] {
		pr.storedSigs = append(pr.storedSigs, len(s))
	}
	pr.storedSigs, pr.querySigs = pr.storedSigs[:len(wc.stored)], pr.storedSigs[len(wc.stored):]
	var others [][]whole.QueryResult
	pr.byTau, others = pr.evaluate(sets)
	for k, rs := range others {
		pr.variants = append(pr.variants, peerVariant{cfg: exs[k+1].Config(), rs: rs})
	}
	pr.took = time.Since(start)
	tot := whole.Total(pr.byTau[spotsigsTau])
	log.Info("spotsigs peer", "tau", spotsigsTau, "hits", tot.Hits, "hit_precision", tot.HitPrecision(), "recall", tot.Recall(),
		"unstored_rate", tot.UnstoredRate(), "took", pr.took.Round(time.Millisecond),
		"signatures", pr.tookSigs.Round(time.Millisecond), "search", pr.tookSearch.Round(time.Millisecond), "judge", pr.tookJudge.Round(time.Millisecond))
	return pr, nil
}

// evaluate searches with every configuration's signatures (sets[k]: the
// stored documents', then the queries'), the first configuration at the
// lowest of spotsigsTaus and the others at spotsigsTau, judges the union
// of their hits once and returns the first configuration's judged answers
// at each of spotsigsTaus and the others' at spotsigsTau.
func (pr *peerRun) evaluate(sets [][]spotsigs.Set) (map[float64][]whole.QueryResult, [][]whole.QueryResult) {
	nq := len(pr.wc.queries)
	t := time.Now()
	matches := make([][][]spotsigs.Match, len(sets)) // [config][query]
	for k, ss := range sets {
		stored, queries := ss[:len(pr.wc.stored)], ss[len(pr.wc.stored):]
		ix := spotsigs.NewIndex(stored)
		tau := spotsigsTau
		if k == 0 {
			tau = slices.Min(spotsigsTaus)
		}
		matches[k] = make([][]spotsigs.Match, nq)
		parallel(nq, func(i int) { matches[k][i] = ix.Search(queries[i], tau) })
	}
	pr.tookSearch += time.Since(t)

	t = time.Now()
	// The union of every configuration's hits per query, and each
	// configuration's Jaccard for every hit of the union (-1: not its hit).
	answers := make([]whole.Answer, nq)
	js := make([][][]float64, len(sets)) // [config][query][union hit]
	for k := range js {
		js[k] = make([][]float64, nq)
	}
	for i := range nq {
		at := map[int]int{}
		for k := range sets {
			for _, m := range matches[k][i] {
				if _, ok := at[m.Doc]; !ok {
					at[m.Doc] = len(answers[i].Hits)
					answers[i].Hits = append(answers[i].Hits, whole.Hit{ID: pr.wc.stored[m.Doc].ID})
				}
			}
		}
		for k := range sets {
			j := make([]float64, len(answers[i].Hits))
			for h := range j {
				j[h] = -1
			}
			for _, m := range matches[k][i] {
				j[at[m.Doc]] = m.Jaccard
			}
			js[k][i] = j
		}
		answers[i].Duplicate = len(answers[i].Hits) > 0
	}
	rs := whole.Judge(pr.wc.judge, pr.wc.stored, pr.wc.queries, answers)
	keep := func(k int, tau float64) []whole.QueryResult {
		out := make([]whole.QueryResult, nq)
		for i, r := range rs {
			out[i] = r.Keep(func(h int) bool { return js[k][i][h] >= tau })
		}
		return out
	}
	byTau := map[float64][]whole.QueryResult{}
	for _, tau := range spotsigsTaus {
		byTau[tau] = keep(0, tau)
	}
	var others [][]whole.QueryResult
	for k := 1; k < len(sets); k++ {
		others = append(others, keep(k, spotsigsTau))
	}
	pr.tookJudge += time.Since(t)
	return byTau, others
}

// parallel runs f(0..n-1) on GOMAXPROCS goroutines.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next += 64
				mu.Unlock()
				if i >= n {
					return
				}
				for j := i; j < min(i+64, n); j++ {
					f(j)
				}
			}
		}()
	}
	wg.Wait()
}

// pairCounts are the pair benchmark's confusion counts of SpotSigs at tau:
// a pair is called a duplicate when its query's hits include its original.
func (pr *peerRun) pairCounts(tau float64) metrics.Counts { return pairCounts(pr.ps, pr.byTau[tau]) }

// pairCounts are the pair benchmark's confusion counts of judged answers
// rs (aligned with ps, then the probes): a pair is called a duplicate when
// its query's hits include its original.
func pairCounts(ps []pairs.Pair, rs []whole.QueryResult) metrics.Counts {
	var c metrics.Counts
	for i, p := range ps {
		called := slices.ContainsFunc(rs[i].Hits, func(h whole.Judged) bool { return h.Stored == p.Original.ID })
		c.Add(p.Duplicate, called)
	}
	return c
}

func (pr *peerRun) name(tau float64) string { return peerName(pr.cfg, tau) }

func peerName(cfg spotsigs.Config, tau float64) string {
	return fmt.Sprintf("SpotSigs (d = %d, c = %d, τ = %.2f)", cfg.Distance, cfg.Chain, tau)
}

// summary is SpotSigs' row in the report's pair summary.
func (pr *peerRun) summary() metrics.Peer {
	return metrics.Peer{Name: "peer: " + pr.name(spotsigsTau), Counts: pr.pairCounts(spotsigsTau)}
}

// section is the report's "Peer: SpotSigs" section; service is the
// service's judged answers to the same queries.
func (pr *peerRun) section(service []whole.QueryResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	rs := pr.byTau[spotsigsTau]
	noStored, noQuery := 0, 0
	for _, n := range pr.storedSigs {
		if n == 0 {
			noStored++
		}
	}
	for _, n := range pr.querySigs {
		if n == 0 {
			noQuery++
		}
	}
	p("\n## Peer: SpotSigs\n\n")
	p("SpotSigs (Theobald, Siddharth, Paepcke, SIGIR 2008; `scripts/eval/spotsigs`) on the same %d stored documents and %d queries as the service, every hit judged by the same judge (see \"Peer: SpotSigs\" in the method). ", len(pr.wc.stored), len(pr.wc.queries))
	p("Spot distance d = %d, chain length c = %d, %d antecedents; a stored document is a hit when the Jaccard similarity of the two signature sets is at least τ (τ = %.2f in the tables below, chosen on dev), found exactly (inverted index with the set-size filter). ", pr.cfg.Distance, pr.cfg.Chain, len(pr.cfg.Antecedents), spotsigsTau)
	p("Signatures per stored document: median %d, mean %.1f; %d stored documents and %d queries have none (they match nothing). ", median(pr.storedSigs), mean(pr.storedSigs), noStored, noQuery)
	p("Run time: %s for %d configurations on %d cores (words and signatures %s, search %s, judging %s).\n\n", pr.took.Round(time.Second), 1+len(pr.variants), runtime.GOMAXPROCS(0),
		pr.tookSigs.Round(time.Second), pr.tookSearch.Round(time.Second), pr.tookJudge.Round(time.Second))

	p("| detector | hits | hit precision | recall | answered duplicate | query precision | never-stored called duplicates | pairs: precision | recall | F1 |\n|---|---|---|---|---|---|---|---|---|---|\n")
	svcPairs := pairCounts(pr.ps, service)
	row := func(name string, c whole.Counts, pc metrics.Counts) {
		p("| %s | %d | %.3f | %.3f | %d | %.3f | %.1f%% (%d of %d) | %s | %s | %s |\n", name, c.Hits, c.HitPrecision(), c.Recall(), c.Flagged, c.QueryPrecision(),
			100*c.UnstoredRate(), c.UnstoredFalseDup, c.Unstored, metrics.F(pc.Precision()), metrics.F(pc.Recall()), metrics.F(pc.F1()))
	}
	row("simdex (service answer)", whole.Total(service), svcPairs)
	for _, tau := range spotsigsTaus {
		name := pr.name(tau)
		if tau == spotsigsTau {
			name = "**" + name + "**"
		}
		row(name, whole.Total(pr.byTau[tau]), pr.pairCounts(tau))
	}
	for _, v := range pr.variants {
		row(peerName(v.cfg, spotsigsTau), whole.Total(v.rs), pairCounts(pr.ps, v.rs))
	}

	compare := func(title string, key func(whole.QueryResult) string, order []string, all bool) {
		s, x := whole.Tally(service, key), whole.Tally(rs, key)
		p("\n### %s: simdex vs SpotSigs (τ = %.2f)\n\n", title, spotsigsTau)
		p("| group | hit precision simdex | SpotSigs | recall simdex | SpotSigs | never-stored called duplicates simdex | SpotSigs |\n|---|---|---|---|---|---|---|\n")
		line := func(k string, a, c whole.Counts) {
			p("| %s | %.3f (%d) | %.3f (%d) | %.3f | %.3f | %.1f%% | %.1f%% |\n", k, a.HitPrecision(), a.Hits, c.HitPrecision(), c.Hits, a.Recall(), c.Recall(), 100*a.UnstoredRate(), 100*c.UnstoredRate())
		}
		if all {
			line("all", whole.Total(service), whole.Total(rs))
		}
		keys := metrics.KeysIn(s, order)
		for _, k := range metrics.KeysIn(x, order) {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			line(k, s[k], x[k])
		}
	}
	compare("By language and length", func(r whole.QueryResult) string { return r.Query.Lang + "/" + r.Query.Bucket }, whole.Cells(), true)
	compare("By source of the query", func(r whole.QueryResult) string { return r.Query.Source }, nil, false)
	compare("By kind of query", func(r whole.QueryResult) string { return r.Query.Kind }, append(pairs.Kinds(), pairs.ProbeKinds...), false)

	tot := whole.Total(rs)
	whole.WriteTable(&b, fmt.Sprintf("SpotSigs by language and length (τ = %.2f)", spotsigsTau), &tot, whole.Tally(rs, func(r whole.QueryResult) string { return r.Query.Lang + "/" + r.Query.Bucket }), whole.Cells())

	wrong := map[string]int{}
	for _, r := range rs {
		for _, h := range r.Hits {
			if !h.Correct {
				wrong[h.Basis+": "+h.Judge.Relation]++
			}
		}
	}
	if len(wrong) == 0 {
		p("\nNone of SpotSigs' %d hits is wrong.\n", tot.Hits)
		return b.String()
	}
	p("\nSpotSigs' wrong hits (%d of %d) by the judge's relation (\"changed\": a copy of the stored document with a fact changed; \"content\": the content criterion):\n\n| basis: judge relation | wrong hits |\n|---|---|\n", tot.Hits-tot.CorrectHits, tot.Hits)
	ks := metrics.KeysIn(wrong, nil)
	slices.SortStableFunc(ks, func(a, b string) int { return wrong[b] - wrong[a] })
	for _, k := range ks {
		p("| %s | %d |\n", k, wrong[k])
	}
	return b.String()
}

func median(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func mean(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0
	for _, x := range xs {
		t += x
	}
	return float64(t) / float64(len(xs))
}

// cmdSpotSigs runs only the SpotSigs peer on a pairs file and its
// whole-corpus set (no service) and prints its figures per threshold, for
// trying settings: simdex-eval spotsigs -pairs P -whole W [-d 2 -c 3].
func cmdSpotSigs(log *slog.Logger, args []string) error {
	def := spotsigs.DefaultConfig()
	fs := flag.NewFlagSet("spotsigs", flag.ContinueOnError)
	in := fs.String("pairs", "", "pairs JSON Lines from `simdex-eval pairs` (required)")
	wholeIn := fs.String("whole", "", "whole-corpus additions from `simdex-eval pairs -whole` (required)")
	d := fs.Int("d", def.Distance, "spot distance")
	c := fs.Int("c", def.Chain, "chain length")
	verbose := fs.Bool("v", false, "also print the figures by source and kind of query at the chosen threshold")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *wholeIn == "" {
		return fmt.Errorf("spotsigs: -pairs and -whole are required")
	}
	ps, set, err := readPairsAndWhole(*in, *wholeIn)
	if err != nil {
		return err
	}
	cfg := def
	cfg.Distance, cfg.Chain = *d, *c
	pr, err := runSpotSigs(log, cfg, ps, newWholeCorpus(ps, set))
	if err != nil {
		return err
	}
	for _, v := range pr.variants {
		tot, pc := whole.Total(v.rs), pairCounts(ps, v.rs)
		fmt.Printf("%s: hits %d, hit precision %.3f, recall %.3f, never-stored called duplicates %.1f%%; pairs P %.3f R %.3f F1 %.3f\n",
			peerName(v.cfg, spotsigsTau), tot.Hits, tot.HitPrecision(), tot.Recall(), 100*tot.UnstoredRate(), pc.Precision(), pc.Recall(), pc.F1())
	}
	for _, tau := range spotsigsTaus {
		rs := pr.byTau[tau]
		tot, pc := whole.Total(rs), pr.pairCounts(tau)
		fmt.Printf("%s: hits %d, hit precision %.3f, recall %.3f, never-stored called duplicates %.1f%%; pairs P %.3f R %.3f F1 %.3f\n",
			pr.name(tau), tot.Hits, tot.HitPrecision(), tot.Recall(), 100*tot.UnstoredRate(), pc.Precision(), pc.Recall(), pc.F1())
		cells := whole.Tally(rs, func(r whole.QueryResult) string { return r.Query.Lang + "/" + r.Query.Bucket })
		for _, k := range whole.Cells() {
			x := cells[k]
			fmt.Printf("  %-9s P %.3f (%d hits) R %.3f never-stored %.1f%%\n", k, x.HitPrecision(), x.Hits, x.Recall(), 100*x.UnstoredRate())
		}
	}
	if *verbose {
		rs := pr.byTau[spotsigsTau]
		whole.WriteTable(os.Stdout, "By source of the query", nil, whole.Tally(rs, func(r whole.QueryResult) string { return r.Query.Source }), nil)
		whole.WriteTable(os.Stdout, "By kind of query", nil, whole.Tally(rs, func(r whole.QueryResult) string { return r.Query.Kind }), append(pairs.Kinds(), pairs.ProbeKinds...))
	}
	return nil
}

func readPairsAndWhole(pairsPath, wholePath string) ([]pairs.Pair, pairs.WholeSet, error) {
	f, err := os.Open(pairsPath)
	if err != nil {
		return nil, pairs.WholeSet{}, err
	}
	ps, err := pairs.Read(f)
	f.Close()
	if err != nil {
		return nil, pairs.WholeSet{}, err
	}
	f, err = os.Open(wholePath)
	if err != nil {
		return nil, pairs.WholeSet{}, err
	}
	defer f.Close()
	set, err := pairs.ReadWhole(f)
	return ps, set, err
}
