// Package whole judges every hit of every check against the whole stored
// corpus, not only a pair's own original, and computes the whole-corpus
// figures of docs/QUALITY.md: hit precision, recall of edited copies,
// false duplicates, and the share of never-stored documents called
// duplicates, by language and length bucket, source and kind.
//
// A hit is judged by provenance first (the query was made from the corpus
// document the stored document was made from: correct; the query is a
// copy of it with a fact changed: wrong), and otherwise by the content
// criterion of package judge, which uses nothing of simdex's own code.
package whole

import (
	"github.com/simdex/simdex/scripts/eval/judge"
)

// Stored is one stored document: its id, the corpus document it was made
// from, and its text.
type Stored struct {
	ID, Doc, Source string
	Title, Body     string
}

// Query is one checked text with what is known of its provenance.
type Query struct {
	ID, Kind, Lang, Bucket, Source string
	// Positive: an edited copy of a stored document (a positive pair's
	// query); recall counts it.
	Positive bool
	// Unstored: a never-stored document (a probe); the false-duplicate
	// rate of never-stored documents counts it.
	Unstored bool
	// Doc is the corpus document the query was made from ("" when it is
	// no document's content); a hit on a stored copy of Doc is correct.
	// A hit on a stored copy of NotDoc is wrong.
	Doc, NotDoc string
	Title, Body string
}

// Hit is one document a check returned, with the service's own account
// when it gave one.
type Hit struct {
	ID       string
	Relation string // the service's relation, "" when absent
	Clause   string
}

// Answer is the service's answer to one query.
type Answer struct {
	Duplicate bool
	Hits      []Hit
	Failure   string // e.g. "low-information": the check failed
}

// Judged is one hit with its verdict.
type Judged struct {
	Query   int    `json:"-"`
	Stored  string `json:"stored"`
	Correct bool   `json:"correct"`
	// Basis is "provenance" (the query was made from the stored document's
	// corpus document), "changed" (a copy of it with a fact changed) or
	// "content" (the judge's criterion).
	Basis string `json:"basis"`
	// Judge is the content criterion's verdict, computed for every hit.
	Judge           judge.Verdict `json:"judge"`
	ServiceRelation string        `json:"service_relation,omitempty"`
	Clause          string        `json:"clause,omitempty"`
	// SameDoc: the stored document was made from the query's Doc (a
	// positive query's hit on it finds its source).
	SameDoc bool `json:"-"`
}

// QueryResult is one query's judged answer.
type QueryResult struct {
	Query     Query
	Duplicate bool
	Failure   string
	Hits      []Judged
	// Found: a positive query's hits include a stored copy of its Doc.
	Found bool
	// Correct is the number of correct hits.
	Correct int
}

// FalseDuplicate: the service said duplicate and no hit is correct.
func (q QueryResult) FalseDuplicate() bool { return q.Duplicate && q.Correct == 0 }

// Judge judges every hit of answers (aligned with queries) against the
// stored corpus; j holds the corpus's template lines (judge.New over the
// stored texts, title and body joined by a newline).
func Judge(j *judge.Judge, stored []Stored, queries []Query, answers []Answer) []QueryResult {
	byID := make(map[string]*Stored, len(stored))
	for i := range stored {
		byID[stored[i].ID] = &stored[i]
	}
	grams := map[string]judge.Set{}
	out := make([]QueryResult, len(queries))
	for i, q := range queries {
		a := answers[i]
		r := QueryResult{Query: q, Duplicate: a.Duplicate, Failure: a.Failure}
		var qs judge.Set
		for _, h := range a.Hits {
			s, ok := byID[h.ID]
			jh := Judged{Query: i, Stored: h.ID, ServiceRelation: h.Relation, Clause: h.Clause}
			if qs == nil {
				qs = j.Shingles(q.Title + "\n" + q.Body)
			}
			if ok {
				xs, ok := grams[h.ID]
				if !ok {
					xs = j.Shingles(s.Title + "\n" + s.Body)
					grams[h.ID] = xs
				}
				jh.Judge = judge.Relate(qs, xs)
			}
			switch {
			case !ok:
				jh.Basis, jh.Judge.Relation = "unknown", judge.Overlap
			case q.Doc != "" && s.Doc == q.Doc:
				jh.Basis, jh.Correct = "provenance", true
			case q.NotDoc != "" && s.Doc == q.NotDoc:
				jh.Basis = "changed"
			default:
				jh.Basis, jh.Correct = "content", judge.Correct(jh.Judge.Relation)
			}
			if jh.Correct {
				r.Correct++
			}
			if ok && s.Doc == q.Doc {
				jh.SameDoc = true
				if q.Positive {
					r.Found = true
				}
			}
			r.Hits = append(r.Hits, jh)
		}
		out[i] = r
	}
	return out
}

// Keep returns r with only the hits keep selects (by their position in
// r.Hits), Correct and Found recomputed and Duplicate true when a hit is
// left: the answer of a detector that says "duplicate" exactly when it
// returns a hit, at a stricter threshold.
func (r QueryResult) Keep(keep func(i int) bool) QueryResult {
	out := QueryResult{Query: r.Query, Failure: r.Failure}
	for i, h := range r.Hits {
		if !keep(i) {
			continue
		}
		out.Hits = append(out.Hits, h)
		if h.Correct {
			out.Correct++
		}
		if h.SameDoc && r.Query.Positive {
			out.Found = true
		}
	}
	out.Duplicate = len(out.Hits) > 0
	return out
}

// Counts are the whole-corpus figures of a group of queries.
type Counts struct {
	Queries, Hits, CorrectHits int
	Positives, Found           int
	Flagged, FalseDup          int // queries answered duplicate; of those, with no correct hit
	Unstored, UnstoredFalseDup int
}

// Add counts one query.
func (c *Counts) Add(r QueryResult) {
	c.Queries++
	c.Hits += len(r.Hits)
	c.CorrectHits += r.Correct
	if r.Query.Positive {
		c.Positives++
		if r.Found {
			c.Found++
		}
	}
	if r.Duplicate {
		c.Flagged++
		if r.FalseDuplicate() {
			c.FalseDup++
		}
	}
	if r.Query.Unstored {
		c.Unstored++
		if r.FalseDuplicate() {
			c.UnstoredFalseDup++
		}
	}
}

// HitPrecision is correct hits / all hits (1 when there are none).
func (c Counts) HitPrecision() float64 { return ratio(c.CorrectHits, c.Hits, 1) }

// Recall is the share of positive queries whose source was found.
func (c Counts) Recall() float64 { return ratio(c.Found, c.Positives, 0) }

// QueryPrecision is the share of queries answered duplicate with at least
// one correct hit.
func (c Counts) QueryPrecision() float64 { return ratio(c.Flagged-c.FalseDup, c.Flagged, 1) }

// UnstoredRate is the share of never-stored documents called duplicates
// with no correct hit.
func (c Counts) UnstoredRate() float64 { return ratio(c.UnstoredFalseDup, c.Unstored, 0) }

func ratio(a, b int, empty float64) float64 {
	if b == 0 {
		return empty
	}
	return float64(a) / float64(b)
}

// Tally groups results by key ("" drops a result).
func Tally(rs []QueryResult, key func(QueryResult) string) map[string]Counts {
	m := map[string]Counts{}
	for _, r := range rs {
		k := key(r)
		if k == "" {
			continue
		}
		c := m[k]
		c.Add(r)
		m[k] = c
	}
	return m
}

// Total counts every result.
func Total(rs []QueryResult) Counts {
	var c Counts
	for _, r := range rs {
		c.Add(r)
	}
	return c
}
