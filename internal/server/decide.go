package server

import (
	"context"

	"github.com/simdex/simdex/internal/decide"
	"github.com/simdex/simdex/kvindex"
)

// rule is the decision rule in force: Config.Rule, or the default when the
// configuration left it zero.
func (c Config) rule() decide.Rule {
	if c.Rule == (decide.Rule{}) {
		return decide.DefaultRule()
	}
	return c.Rule
}

// documentReader reads several documents at once (*kvindex.Index); an Index
// without it is read one document at a time.
type documentReader interface {
	Documents(ctx context.Context, ids []string) (map[string]kvindex.Document, error)
}

// confirmHits applies the decision rule (package decide) to the hits a
// lookup found within k: it reads the hits' stored sketches in one call and
// keeps the hits the rule calls duplicates, in their order. A query without
// a sketch (a bare fingerprint) is judged by distance alone, without reads.
// Insert paths get the same rule through kvindex.Config.Confirm.
func (s *Server) confirmHits(ctx context.Context, q resolved, hits []kvindex.Hit) ([]kvindex.Hit, error) {
	if len(hits) == 0 {
		return hits, nil
	}
	rule := s.cfg.rule()
	qs := decide.Side{Sketch: q.sketch, Chars: q.chars, ExactHash: q.exact, Text: q.text}
	if len(q.sketch) == 0 {
		kept := hits[:0:0]
		for _, h := range hits {
			if rule.Duplicate(qs, decide.Side{}, h.Distance) || h.Exact {
				kept = append(kept, h)
			}
		}
		return kept, nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	docs, err := s.readDocuments(ctx, ids)
	if err != nil {
		return nil, err
	}
	kept := hits[:0:0]
	for _, h := range hits {
		d, ok := docs[h.ID]
		if !ok {
			continue // deleted since the lookup
		}
		if h.Exact || rule.Duplicate(qs, decide.SideOf(d), h.Distance) {
			kept = append(kept, h)
		}
	}
	return kept, nil
}

func (s *Server) readDocuments(ctx context.Context, ids []string) (map[string]kvindex.Document, error) {
	if r, ok := s.ix.(documentReader); ok {
		return r.Documents(ctx, ids)
	}
	out := make(map[string]kvindex.Document, len(ids))
	for _, id := range ids {
		d, err := s.ix.Get(ctx, id)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[id] = d
	}
	return out, nil
}
