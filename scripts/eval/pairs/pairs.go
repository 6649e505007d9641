// Package pairs generates the labelled document pairs of simdex's
// detection-quality benchmark from a corpus (package corpus): positive
// pairs made by the edits that create near-duplicates on the web, and hard
// negative pairs. Generation is seeded and deterministic; Config.Split,
// Config.Seed and Config.Kinds select held-out documents, sites and edits,
// so a recipe tuned on one set can be checked on another.
//
// Pairs are written as JSON Lines at run time and never committed.
package pairs

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// ErrBadPair is returned (wrapped) for a pair that fails Pair.Validate,
// for example a malformed line of a pairs file.
var ErrBadPair = errors.New("pairs: bad pair")

// ErrBadConfig is returned (wrapped) by Config.Validate.
var ErrBadConfig = errors.New("pairs: bad config")

// Text is one side of a pair, as the service sees it.
type Text struct {
	// ID is the document id used in the index. Originals that several
	// pairs share (the raw corpus document) share the id; an original
	// made for one pair (a page wrapped in a site template) has its own.
	ID    string `json:"id"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

// Pair is one labelled benchmark item: Original is stored in the index,
// Query is checked against it.
type Pair struct {
	ID string `json:"id"`
	// Duplicate is the label: true for a near-duplicate (positive) pair.
	Duplicate bool `json:"duplicate"`
	// Kind is the edit (positive) or the kind of hard negative; see Kinds.
	Kind string `json:"kind"`
	// Detail says what the edit did, e.g. "typos=3" or "template=t07".
	Detail string `json:"detail,omitempty"`
	// Size is how much text differs between the two sides: 1 minus the
	// Jaccard similarity of their character 5-gram sets (title and body).
	// 0 for copies, near 1 for unrelated texts.
	Size float64 `json:"size"`
	// Lang, Source, Topic and Bucket describe the original corpus document
	// (Bucket by the length of its body).
	Lang   string `json:"lang"`
	Source string `json:"source"`
	Topic  string `json:"topic,omitempty"`
	Bucket string `json:"bucket"`
	// Doc is the corpus document Original was made from. Several stored
	// originals can share it (the bare document, copies in site
	// templates); a hit on any of them finds "the same article".
	Doc string `json:"doc"`
	// QueryDoc is the corpus document Query was made from: Doc for a
	// positive pair, the other (never stored) document for a negative one,
	// "" when Query is not any corpus document's content (a copy of Doc
	// with a fact changed; NotDoc then names Doc). The whole-corpus judge
	// calls a hit on any stored copy of QueryDoc correct, and a hit on a
	// stored copy of NotDoc wrong.
	QueryDoc string `json:"query_doc,omitempty"`
	NotDoc   string `json:"not_doc,omitempty"`
	// Original goes into the index; Query is checked against it.
	Original Text `json:"original"`
	Query    Text `json:"query"`
	// OriginalSource and QuerySource are the sources a publisher would
	// name for each side (DocSource; "" for none): the original is stored
	// with it as its source attribute, the query checked naming it.
	OriginalSource string `json:"original_source,omitempty"`
	QuerySource    string `json:"query_source,omitempty"`
}

// SizeClass groups Size for reports: "tiny" (< 0.05), "small" (< 0.2),
// "medium" (< 0.5), "large".
func (p Pair) SizeClass() string {
	switch {
	case p.Size < 0.05:
		return "tiny"
	case p.Size < 0.2:
		return "small"
	case p.Size < 0.5:
		return "medium"
	}
	return "large"
}

// Validate reports a pair the runner cannot use.
func (p Pair) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrBadPair, p.ID, fmt.Sprintf(format, a...))
	}
	switch {
	case p.ID == "":
		return fmt.Errorf("%w: empty id", ErrBadPair)
	case p.Original.ID == "":
		return bad("empty original id")
	case p.Doc == "":
		return bad("empty doc")
	case strings.TrimSpace(p.Original.Body) == "" || strings.TrimSpace(p.Query.Body) == "":
		return bad("empty body")
	case p.Lang != "zh" && p.Lang != "en":
		return bad("lang %q not zh or en", p.Lang)
	case p.Bucket != "short" && p.Bucket != "medium" && p.Bucket != "long":
		return bad("bucket %q not short, medium or long", p.Bucket)
	case !(p.Size >= 0 && p.Size <= 1):
		return bad("size %v not in [0, 1]", p.Size)
	case !utf8.ValidString(p.Original.Title + p.Original.Body + p.Query.Title + p.Query.Body):
		return bad("invalid UTF-8")
	}
	k, ok := kindByName[p.Kind]
	if !ok {
		return bad("unknown kind %q", p.Kind)
	}
	if k.positive != p.Duplicate {
		return bad("kind %q with duplicate=%v", p.Kind, p.Duplicate)
	}
	return nil
}

// Write writes pairs as JSON Lines.
func Write(w io.Writer, ps []Pair) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, p := range ps {
		if err := enc.Encode(p); err != nil {
			return fmt.Errorf("pairs: write %s: %w", p.ID, err)
		}
	}
	return bw.Flush()
}

// Read reads and validates JSON Lines written by Write. Pair ids must be
// unique, and pairs that share an original id must agree on its text
// (the runner stores each original once).
func Read(r io.Reader) ([]Pair, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var ps []Pair
	ids := map[string]bool{}
	origs := map[string]Text{}
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var p Pair
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrBadPair, line, err)
		}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if ids[p.ID] {
			return nil, fmt.Errorf("%w: line %d: duplicate id %q", ErrBadPair, line, p.ID)
		}
		ids[p.ID] = true
		if o, ok := origs[p.Original.ID]; ok && o != p.Original {
			return nil, fmt.Errorf("%w: line %d: original %q differs from an earlier pair's", ErrBadPair, line, p.Original.ID)
		}
		origs[p.Original.ID] = p.Original
		ps = append(ps, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("pairs: read: %w", err)
	}
	return ps, nil
}

// Kinds lists the pair kinds, positives first, in report order.
func Kinds() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.name
	}
	return out
}

// IsPositive reports whether kind names a positive (near-duplicate) kind.
func IsPositive(kind string) bool { return kindByName[kind].positive }

// Describe is a one-line description of a kind, for reports.
func Describe(kind string) string { return kindByName[kind].doc }

var kindByName = func() map[string]kindSpec {
	m := map[string]kindSpec{}
	for _, k := range kinds {
		m[k.name] = k
	}
	return m
}()

// sortedKeys returns the keys of m sorted.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
