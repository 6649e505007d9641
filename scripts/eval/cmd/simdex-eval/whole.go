package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/simdex/simdex/scripts/eval/judge"
	"github.com/simdex/simdex/scripts/eval/pairs"
	"github.com/simdex/simdex/scripts/eval/runner"
	"github.com/simdex/simdex/scripts/eval/whole"
)

// wholeCorpus is what the whole-corpus benchmark judges against: every
// stored document (the pairs' originals, then the other stored documents),
// every query (the pair queries, then the never-stored probes), and the
// judge's template lines learned from the stored texts.
type wholeCorpus struct {
	stored  []whole.Stored
	sources map[string]string // stored id -> source
	queries []whole.Query
	judge   *judge.Judge
}

func newWholeCorpus(ps []pairs.Pair, set pairs.WholeSet) wholeCorpus {
	wc := wholeCorpus{sources: map[string]string{}}
	seen := map[string]bool{}
	for _, p := range ps {
		if !seen[p.Original.ID] {
			seen[p.Original.ID] = true
			wc.stored = append(wc.stored, whole.Stored{ID: p.Original.ID, Doc: p.Doc, Source: p.Source, Title: p.Original.Title, Body: p.Original.Body})
			wc.sources[p.Original.ID] = p.Source
		}
	}
	for _, s := range set.Stored {
		if !seen[s.ID] {
			seen[s.ID] = true
			wc.stored = append(wc.stored, whole.Stored{ID: s.ID, Doc: s.Doc, Source: s.Source, Title: s.Title, Body: s.Body})
			wc.sources[s.ID] = s.Source
		}
	}
	for _, p := range ps {
		doc := p.QueryDoc
		if doc == "" && p.Duplicate {
			doc = p.Doc
		}
		wc.queries = append(wc.queries, whole.Query{ID: p.ID, Kind: p.Kind, Lang: p.Lang, Bucket: p.Bucket, Source: p.Source, Positive: p.Duplicate,
			Doc: doc, NotDoc: p.NotDoc, Title: p.Query.Title, Body: p.Query.Body})
	}
	for _, pr := range set.Probes {
		wc.queries = append(wc.queries, whole.Query{ID: pr.ID, Kind: pr.Kind, Lang: pr.Lang, Bucket: pr.Bucket, Source: pr.Source, Unstored: true,
			Doc: pr.Doc, Title: pr.Query.Title, Body: pr.Query.Body})
	}
	texts, docs := make([]string, len(wc.stored)), make([]string, len(wc.stored))
	for i, s := range wc.stored {
		texts[i], docs[i] = s.Title+"\n"+s.Body, s.Doc
	}
	wc.judge = judge.New(texts, docs, judge.MinDocs)
	return wc
}

// serviceAnswers are the service's answers to wc's queries, in their order.
func serviceAnswers(ps []pairs.Pair, set pairs.WholeSet, res runner.Result) []whole.Answer {
	var as []whole.Answer
	answer := func(c runner.Checked) whole.Answer {
		a := whole.Answer{Duplicate: c.Duplicate, Failure: c.Problem}
		for _, h := range c.Duplicates {
			a.Hits = append(a.Hits, whole.Hit{ID: h.ID, Relation: h.Relation, Clause: h.Clause})
		}
		return a
	}
	for i := range ps {
		as = append(as, answer(res.Checks[i]))
	}
	for i := range set.Probes {
		as = append(as, answer(res.ProbeChecks[i]))
	}
	return as
}

// wholeSection returns the report's "Whole-corpus quality" section for
// the service's judged answers rs; with wrongOut it also writes every
// wrong hit there, with contentOut every hit judged by content.
func wholeSection(log *slog.Logger, wc wholeCorpus, rs []whole.QueryResult, wrongOut, contentOut string) (string, error) {
	stored, jd := wc.stored, wc.judge
	tot := whole.Total(rs)
	log.Info("whole corpus judged", "queries", tot.Queries, "hits", tot.Hits, "hit_precision", tot.HitPrecision(), "recall", tot.Recall(), "unstored_rate", tot.UnstoredRate())
	if wrongOut != "" {
		f, err := os.Create(wrongOut)
		if err != nil {
			return "", err
		}
		if err := whole.WriteWrongHits(f, rs, stored); err != nil {
			f.Close()
			return "", err
		}
		if err := f.Close(); err != nil {
			return "", err
		}
	}
	if contentOut != "" {
		f, err := os.Create(contentOut)
		if err != nil {
			return "", err
		}
		if err := whole.WriteHits(f, rs, stored, func(h whole.Judged) bool { return h.Basis == "content" }, 0); err != nil {
			f.Close()
			return "", err
		}
		if err := f.Close(); err != nil {
			return "", err
		}
		var lb strings.Builder
		for l, n := range jd.Recurring(2) {
			fmt.Fprintf(&lb, "%d\t%s\n", n, l)
		}
		if err := os.WriteFile(contentOut+".lines", []byte(lb.String()), 0o644); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	agreement, err := judge.SampleAgreement()
	if err != nil {
		return "", err
	}
	m := whole.Meta{Agreement: agreement, Stored: len(stored), TemplateLines: jd.TemplateLines(), MinDocs: judge.MinDocs, Sources: wc.sources}
	order := append(pairs.Kinds(), pairs.ProbeKinds...)
	if err := whole.WriteSection(&b, m, rs, order, stored); err != nil {
		return "", err
	}
	return b.String(), nil
}
