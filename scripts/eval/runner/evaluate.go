package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/scripts/eval/metrics"
	"github.com/simdex/simdex/scripts/eval/pairs"
)

// Service is what Evaluate needs from simdex; *Client is the real one.
type Service interface {
	InsertBatch(ctx context.Context, docs []Doc) ([]Inserted, error)
	CheckBatch(ctx context.Context, qs []Query, k, limit int) ([]Checked, error)
}

// Config tunes Evaluate. Start from DefaultConfig.
type Config struct {
	// Batch is the number of items per batch request (the server's
	// default limit is 1000).
	Batch int
	// Limit is the most hits a check returns; it must be large enough
	// that a query's partner is not cut off by other hits (Result.Truncated
	// counts the checks that were cut).
	Limit int
	// Logger gets progress; nil discards it.
	Logger *slog.Logger
	// Sources sends each text's source (pairs.DocSource): stored
	// documents carry it as their source attribute and checks name it, so
	// the service learns each source's template. Off for a server that
	// does not know a check's source field.
	Sources bool
}

// DefaultConfig returns the settings the benchmark runs with.
func DefaultConfig() Config { return Config{Batch: 250, Limit: 1000, Sources: true} }

// Validate reports the first unusable setting.
func (c Config) Validate() error {
	if c.Batch < 1 || c.Limit < 1 {
		return fmt.Errorf("runner: bad config: batch %d, limit %d: want >= 1", c.Batch, c.Limit)
	}
	return nil
}

// Result is Evaluate's output.
type Result struct {
	Outcomes []metrics.Outcome
	// Stored is the number of distinct originals inserted.
	Stored int
	// K is the k the service checked with (its default).
	K int
	// Truncated counts checks whose hit list was cut at Limit.
	Truncated int
	// Checks are the service's answers for the pairs' queries (in pair
	// order) and ProbeChecks for the whole-corpus probes (in probe order).
	Checks, ProbeChecks []Checked
	// Background is the number of whole-corpus documents stored besides
	// the originals.
	Background int
}

// Evaluate stores every distinct original of ps (by Original.ID) with
// batch inserts, then checks every query with batch checks at the
// service's default k, and records for each pair the fingerprint
// distance, whether and at what distance the check returned the pair's
// own original, and the check's duplicate flag. The index should be empty
// at the start: anything else stored can only add hits.
func Evaluate(ctx context.Context, svc Service, ps []pairs.Pair, cfg Config) (Result, error) {
	return EvaluateWhole(ctx, svc, ps, pairs.WholeSet{}, cfg)
}

// EvaluateWhole is Evaluate for the whole-corpus benchmark: it also stores
// set.Stored (ids not already among the originals) and checks set.Probes,
// and keeps every check's full answer (Result.Checks, Result.ProbeChecks)
// so that every hit can be judged.
func EvaluateWhole(ctx context.Context, svc Service, ps []pairs.Pair, set pairs.WholeSet, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	source := func(s string) string {
		if !cfg.Sources {
			return ""
		}
		return s
	}
	var docs []Doc
	docOf := map[string]string{} // stored id -> corpus document it was made from
	for _, p := range ps {
		if _, ok := docOf[p.Original.ID]; !ok {
			docOf[p.Original.ID] = p.Doc
			docs = append(docs, Doc{ID: p.Original.ID, Title: p.Original.Title, Text: p.Original.Body, Attrs: sourceAttrs(source(p.OriginalSource))})
		}
	}
	originals := len(docs)
	for _, d := range set.Stored {
		if _, ok := docOf[d.ID]; !ok {
			docOf[d.ID] = d.Doc
			docs = append(docs, Doc{ID: d.ID, Title: d.Title, Text: d.Body, Attrs: sourceAttrs(source(d.SourceKey))})
		}
	}
	stored := make(map[string]Inserted, len(docs))
	for i := 0; i < len(docs); i += cfg.Batch {
		chunk := docs[i:min(i+cfg.Batch, len(docs))]
		res, err := svc.InsertBatch(ctx, chunk)
		if err != nil {
			return Result{}, fmt.Errorf("runner: insert originals %d..%d: %w", i, i+len(chunk)-1, err)
		}
		for j, r := range res {
			stored[chunk[j].ID] = r
		}
		if (i/cfg.Batch)%20 == 0 {
			log.Info("storing originals", "done", i+len(chunk), "of", len(docs))
		}
	}
	out := Result{Stored: originals, Background: len(docs) - originals, K: -1}
	for i := 0; i < len(ps); i += cfg.Batch {
		chunk := ps[i:min(i+cfg.Batch, len(ps))]
		qs := make([]Query, len(chunk))
		for j, p := range chunk {
			qs[j] = Query{Title: p.Query.Title, Text: p.Query.Body, Source: source(p.QuerySource)}
		}
		res, err := svc.CheckBatch(ctx, qs, -1, cfg.Limit)
		if err != nil {
			return Result{}, fmt.Errorf("runner: check queries %d..%d: %w", i, i+len(chunk)-1, err)
		}
		for j, p := range chunk {
			c := res[j]
			if c.Problem == "" {
				if out.K >= 0 && c.K != out.K {
					return Result{}, fmt.Errorf("%w: checks answered with k %d and %d", ErrServer, out.K, c.K)
				}
				out.K = c.K
				if c.Truncated {
					out.Truncated++
				}
			}
			o, err := outcome(p, stored[p.Original.ID], c, docOf)
			if err != nil {
				return Result{}, err
			}
			out.Outcomes = append(out.Outcomes, o)
			out.Checks = append(out.Checks, c)
		}
		if (i/cfg.Batch)%20 == 0 {
			log.Info("checking queries", "done", i+len(chunk), "of", len(ps))
		}
	}
	for i := 0; i < len(set.Probes); i += cfg.Batch {
		chunk := set.Probes[i:min(i+cfg.Batch, len(set.Probes))]
		qs := make([]Query, len(chunk))
		for j, p := range chunk {
			qs[j] = Query{Title: p.Query.Title, Text: p.Query.Body, Source: source(p.SourceKey)}
		}
		res, err := svc.CheckBatch(ctx, qs, -1, cfg.Limit)
		if err != nil {
			return Result{}, fmt.Errorf("runner: check probes %d..%d: %w", i, i+len(chunk)-1, err)
		}
		for _, c := range res {
			if c.Problem == "" && c.Truncated {
				out.Truncated++
			}
		}
		out.ProbeChecks = append(out.ProbeChecks, res...)
	}
	if out.K < 0 && len(ps) > 0 {
		return Result{}, errors.New("runner: no check succeeded")
	}
	return out, nil
}

// outcome combines a pair with the service's answers for its two sides.
func outcome(p pairs.Pair, orig Inserted, q Checked, docOf map[string]string) (metrics.Outcome, error) {
	o := metrics.Outcome{
		PairID: p.ID, Duplicate: p.Duplicate, Kind: p.Kind, Lang: p.Lang, Source: p.Source, Bucket: p.Bucket, SizeClass: p.SizeClass(), Size: p.Size,
		Distance: -1, PartnerHit: -1, CopyHit: -1, AnyHit: q.Duplicate,
	}
	switch {
	case orig.Problem != "" && q.Problem != "":
		o.Failure = "both: " + orig.Problem
	case orig.Problem != "":
		o.Failure = "original: " + orig.Problem
	case q.Problem != "":
		o.Failure = "query: " + q.Problem
	default:
		a, err := fingerprint.Parse(orig.Fingerprint)
		if err != nil {
			return o, fmt.Errorf("%w: original %s: fingerprint: %v", ErrServer, p.Original.ID, err)
		}
		b, err := fingerprint.Parse(q.Fingerprint)
		if err != nil {
			return o, fmt.Errorf("%w: query of %s: fingerprint: %v", ErrServer, p.ID, err)
		}
		o.Distance = fingerprint.Distance(a, b)
	}
	for _, h := range q.Duplicates {
		if h.ID == p.Original.ID && (o.PartnerHit < 0 || h.Distance < o.PartnerHit) {
			o.PartnerHit, o.Exact = h.Distance, h.Exact
		}
		if d, ok := docOf[h.ID]; ok && d == p.Doc && (o.CopyHit < 0 || h.Distance < o.CopyHit) {
			o.CopyHit = h.Distance
		}
	}
	return o, nil
}
