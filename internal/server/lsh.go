package server

import (
	"context"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/decide"
	"github.com/simdex/simdex/kvindex"
)

// docLookuper is the index's lookup that returns hits with their stored
// documents and, when the index keeps LSH band rows, the documents sharing
// a band with the query at any simhash distance (*kvindex.Index). An index
// without it is checked by the pigeonhole lookup and confirmHits.
type docLookuper interface {
	LookupDocuments(ctx context.Context, qs []kvindex.Query, opt kvindex.LookupOptions) ([]kvindex.DocLookupResult, error)
}

// lookupText checks text queries (each with a sketch) in one pass: the
// index rows within opt.K and, for queries the rule can accept at any
// distance (Rule.AnyDistance: with the alignment clause on, every text), the band rows, read together; the candidates'
// docs cells in one more read; then the decision rule, and only then the
// limit (so rejected candidates never crowd out duplicates). ok is false
// when the index cannot do this (the caller falls back to Lookup and
// confirmHits).
func (s *Server) lookupText(ctx context.Context, rs []resolved, opt kvindex.LookupOptions) (out []kvindex.LookupResult, ok bool, err error) {
	dl, ok := s.ix.(docLookuper)
	if !ok {
		return nil, false, nil
	}
	rule := s.cfg.rule()
	qs := make([]kvindex.Query, len(rs))
	for i, r := range rs {
		qs[i] = kvindex.Query{Fingerprint: r.fp, ExactHash: r.exact}
		if rule.AnyDistance(r.chars) {
			// A longer text also looks up its sentences' text keys: a
			// short original inside it is found (and the rule's
			// alignment judges it).
			qs[i].Bands = fingerprint.QueryBands(r.bands, r.chars, r.text)
		}
	}
	res, err := dl.LookupDocuments(ctx, qs, opt)
	if err != nil {
		return nil, true, err
	}
	out = make([]kvindex.LookupResult, len(rs))
	for i, r := range rs {
		q := decide.Side{Sketch: r.sketch, Chars: r.chars, ExactHash: r.exact, Text: r.text}
		kept := res[i].Hits[:0:0]
		for _, h := range res[i].Hits {
			d := res[i].Docs[h.ID]
			// Hits within k are judged at their distance; band hits beyond
			// it only by the clauses that ignore the distance.
			s := decide.SideOf(d)
			if h.Exact || h.Distance <= opt.K && rule.Duplicate(q, s, h.Distance) || h.Distance > opt.K && rule.AtAnyDistance(q, s) {
				kept = append(kept, h)
			}
		}
		lr := kvindex.LookupResult{Hits: kept, Candidates: res[i].Candidates + res[i].BandCandidates}
		if opt.Limit > 0 && len(kept) > opt.Limit {
			lr.Hits, lr.Truncated = kept[:opt.Limit:opt.Limit], true
		}
		out[i] = lr
	}
	return out, true, nil
}
