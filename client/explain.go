package client

import (
	"context"
	"time"
)

// ExplainRequest is the body of Explain: a stored document and, optionally,
// a text to compare it with.
type ExplainRequest struct {
	ID    string        `json:"id"`
	Query *ExplainQuery `json:"query,omitempty"`
	// Policy and K are those the verdict assumes (empty, nil: the
	// server's defaults).
	Policy Policy `json:"policy,omitempty"`
	K      *int   `json:"k,omitempty"`
}

// ExplainQuery is the text an explanation compares with the stored
// document.
type ExplainQuery struct {
	Title string `json:"title,omitempty"`
	Text  string `json:"text"`
	Lang  string `json:"lang,omitempty"`
	// Source is the query's source, as CheckRequest.Source.
	Source string `json:"source,omitempty"`
}

// ExplainSegment is a stretch of a normalized text; a side's segments are
// its whole text, in order.
type ExplainSegment struct {
	Text string `json:"text"`
	// Kind is "same", "changed", "only" or "template"; empty for the
	// punctuation and spacing between words.
	Kind string `json:"kind,omitempty"`
	// Class is how the rule reads a difference: "number", "typo",
	// "sentences", "moved" or "content".
	Class string `json:"class,omitempty"`
	// Step pairs segments of the two sides aligned with each other.
	Step *int `json:"step,omitempty"`
}

// ExplainSide is one text of an explanation.
type ExplainSide struct {
	Fingerprint string `json:"fingerprint"`
	Chars       int    `json:"chars"`
	// TextKept: the normalized text is known.
	TextKept bool             `json:"text_kept"`
	Text     string           `json:"text,omitempty"`
	Segments []ExplainSegment `json:"segments,omitempty"`
}

// Alignment is what the alignment of two texts counts.
type Alignment struct {
	WordsQuery       int `json:"words_query"`
	WordsStored      int `json:"words_stored"`
	Common           int `json:"common"`
	Numbers          int `json:"numbers"`
	Typos            int `json:"typos"`
	Sentences        int `json:"sentences"`
	Moved            int `json:"moved"`
	Changed          int `json:"changed"`
	ChangedSentences int `json:"changed_sentences"`
	OnlyQuery        int `json:"only_query"`
	OnlyStored       int `json:"only_stored"`
}

// ExplainResponse is the stored document's side and, with a query, the
// verdict on the pair and both texts cut into aligned segments.
type ExplainResponse struct {
	ID                string       `json:"id"`
	Time              time.Time    `json:"time"`
	Stored            ExplainSide  `json:"stored"`
	Query             *ExplainSide `json:"query,omitempty"`
	Distance          *int         `json:"distance,omitempty"`
	K                 int          `json:"k"`
	Policy            Policy       `json:"policy,omitempty"`
	Relation          string       `json:"relation,omitempty"`
	Duplicate         bool         `json:"duplicate"`
	Resemblance       float64      `json:"resemblance"`
	QueryContainment  float64      `json:"query_containment"`
	StoredContainment float64      `json:"stored_containment"`
	Clause            string       `json:"clause,omitempty"`
	Template          []string     `json:"template,omitempty"`
	Aligned           bool         `json:"aligned"`
	Alignment         *Alignment   `json:"alignment,omitempty"`
	// Note says why the texts were not aligned.
	Note string `json:"note,omitempty"`
}

// Explain says how a stored document relates to a text, word by word
// (404: IsNotFound).
func (c *Client) Explain(ctx context.Context, req ExplainRequest) (*ExplainResponse, error) {
	return callFor[ExplainResponse](ctx, c, opExplain, c.url(opExplain, nil), req)
}
