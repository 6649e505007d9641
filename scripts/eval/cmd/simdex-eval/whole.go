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

// wholeSection judges every hit of the run against the whole stored
// corpus and returns the report's "Whole-corpus quality" section; with
// wrongOut it also writes every wrong hit there.
func wholeSection(log *slog.Logger, ps []pairs.Pair, set pairs.WholeSet, res runner.Result, wrongOut, contentOut string) (string, error) {
	var stored []whole.Stored
	seen := map[string]bool{}
	sources := map[string]string{}
	for _, p := range ps {
		if !seen[p.Original.ID] {
			seen[p.Original.ID] = true
			stored = append(stored, whole.Stored{ID: p.Original.ID, Doc: p.Doc, Source: p.Source, Title: p.Original.Title, Body: p.Original.Body})
			sources[p.Original.ID] = p.Source
		}
	}
	for _, s := range set.Stored {
		if !seen[s.ID] {
			seen[s.ID] = true
			stored = append(stored, whole.Stored{ID: s.ID, Doc: s.Doc, Source: s.Source, Title: s.Title, Body: s.Body})
			sources[s.ID] = s.Source
		}
	}
	var qs []whole.Query
	var as []whole.Answer
	answer := func(c runner.Checked) whole.Answer {
		a := whole.Answer{Duplicate: c.Duplicate, Failure: c.Problem}
		for _, h := range c.Duplicates {
			a.Hits = append(a.Hits, whole.Hit{ID: h.ID, Relation: h.Relation, Clause: h.Clause})
		}
		return a
	}
	for i, p := range ps {
		doc := p.QueryDoc
		if doc == "" && p.Duplicate {
			doc = p.Doc
		}
		qs = append(qs, whole.Query{ID: p.ID, Kind: p.Kind, Lang: p.Lang, Bucket: p.Bucket, Source: p.Source, Positive: p.Duplicate,
			Doc: doc, NotDoc: p.NotDoc, Title: p.Query.Title, Body: p.Query.Body})
		as = append(as, answer(res.Checks[i]))
	}
	for i, pr := range set.Probes {
		qs = append(qs, whole.Query{ID: pr.ID, Kind: pr.Kind, Lang: pr.Lang, Bucket: pr.Bucket, Source: pr.Source, Unstored: true,
			Doc: pr.Doc, Title: pr.Query.Title, Body: pr.Query.Body})
		as = append(as, answer(res.ProbeChecks[i]))
	}
	texts, docs := make([]string, len(stored)), make([]string, len(stored))
	for i, s := range stored {
		texts[i], docs[i] = s.Title+"\n"+s.Body, s.Doc
	}
	jd := judge.New(texts, docs, judge.MinDocs)
	rs := whole.Judge(jd, stored, qs, as)
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
	m := whole.Meta{Agreement: agreement, Stored: len(stored), TemplateLines: jd.TemplateLines(), MinDocs: judge.MinDocs, Sources: sources}
	order := append(pairs.Kinds(), pairs.ProbeKinds...)
	if err := whole.WriteSection(&b, m, rs, order, stored); err != nil {
		return "", err
	}
	return b.String(), nil
}
