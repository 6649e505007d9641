package judge

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Labelled is one hand-labelled hit of the published sample
// (testdata/labelled-hits.jsonl): both texts whole, the lines of them the
// run's stored corpus has more than once (with their document counts), an editor's
// label, and the criterion's verdict.
type Labelled struct {
	// Set is "choice" (the sample MinDocs was chosen on) or "validation"
	// (drawn afterwards, from the run with the chosen MinDocs, and
	// labelled before its verdicts were compared).
	Set    string `json:"set"`
	Query  string `json:"query"`
	Stored string `json:"stored"`
	Kind   string `json:"kind"`
	// QueryText and StoredText are title and body, joined by a newline.
	QueryText  string `json:"query_text"`
	StoredText string `json:"stored_text"`
	// LineDocs holds, for every normalized line of either text found in at
	// least two documents of the run's stored corpus, that number: the
	// judge's template at any MinDocs can be rebuilt from it.
	LineDocs map[string]int `json:"line_docs"`
	// Label is the editor's reading: "same" (the same document, edited),
	// "excerpt" (the query is a part of the stored document), "contains"
	// (the stored document is a part of the query: a quotation, an
	// earlier mail quoted in a reply), "template" (different content
	// sharing furniture), "related" (different documents on the same
	// subject sharing passages). Duplicate is the editor's verdict under
	// the default policy: same or excerpt.
	Label     string `json:"label"`
	Duplicate bool   `json:"duplicate"`
	Note      string `json:"note,omitempty"`
	// Verdict is the criterion's answer when the sample was drawn.
	Verdict Verdict `json:"verdict"`
}

// ReadLabelled reads a labelled sample.
func ReadLabelled(r io.Reader) ([]Labelled, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var out []Labelled
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l Labelled
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("judge: labelled sample line %d: %w", line, err)
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

// Agreement recomputes the criterion on every labelled hit (template:
// the hit's lines in at least minDocs stored documents) and counts the
// hits where the criterion's verdict (Correct of its relation) equals the
// editor's.
func Agreement(sample []Labelled, minDocs int) (agree int, verdicts []Verdict) {
	for _, l := range sample {
		v := FromCounts(l.LineDocs, minDocs).RelateTexts(l.QueryText, l.StoredText)
		verdicts = append(verdicts, v)
		if Correct(v.Relation) == l.Duplicate {
			agree++
		}
	}
	return agree, verdicts
}

//go:embed testdata/labelled-hits.jsonl
var sampleFile []byte

// Sample returns the published hand-labelled sample.
func Sample() ([]Labelled, error) { return ReadLabelled(bytes.NewReader(sampleFile)) }

// SampleAgreement is the agreement of the criterion (at MinDocs) with the
// hand labels of each set of the sample: agreeing hits and hits.
func SampleAgreement() (map[string][2]int, error) {
	sample, err := Sample()
	if err != nil {
		return nil, err
	}
	out := map[string][2]int{}
	for _, l := range sample {
		c := out[l.Set]
		a, _ := Agreement([]Labelled{l}, MinDocs)
		c[0] += a
		c[1]++
		out[l.Set] = c
	}
	return out, nil
}
