package client

import "time"

// Ptr returns a pointer to v, for the optional fields (K, Limit, Since,
// ...) where the zero value means something.
func Ptr[T any](v T) *T { return &v }

// Policy says which relations make a duplicate.
type Policy string

// Policies.
const (
	// PolicyDefault: near-identical documents and a query that is an
	// excerpt of a stored one.
	PolicyDefault Policy = "default"
	// PolicyCopy: also a stored document the query contains.
	PolicyCopy Policy = "copy"
	// PolicyNearIdentical: near-identical documents only.
	PolicyNearIdentical Policy = "near_identical"
)

// InsertMode says whether an insert stores a near-duplicate.
type InsertMode string

// Insert modes.
const (
	// ModeInsert stores the document and reports its near-duplicates.
	ModeInsert InsertMode = "insert"
	// ModeInsertIfUnique stores it only when no stored document is a
	// duplicate; otherwise the answer names the original (DuplicateOf).
	ModeInsertIfUnique InsertMode = "insert-if-unique"
)

// Relations of a hit to the query.
const (
	RelationNearIdentical   = "near_identical"
	RelationQueryIsExcerpt  = "query_is_excerpt"
	RelationStoredIsExcerpt = "stored_is_excerpt"
	RelationOverlap         = "overlap"
)

// Content is a document's text, or a bare fingerprint instead of text
// (16 hex digits, 0x-prefixed hex or an unsigned decimal): give one.
type Content struct {
	Title string `json:"title,omitempty"`
	// Text is the body, plain text or HTML.
	Text string `json:"text,omitempty"`
	// Lang is "zh", "en" or empty (detected).
	Lang        string `json:"lang,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
}

// SearchParams narrow a check; nil fields take the server's defaults (K
// and Limit: the largest allowed).
type SearchParams struct {
	K     *int       `json:"k,omitempty"`
	Since *time.Time `json:"since,omitempty"`
	Until *time.Time `json:"until,omitempty"`
	Limit *int       `json:"limit,omitempty"`
}

// CheckRequest is the body of Check.
type CheckRequest struct {
	Content
	// Source names the query's source (the value its stored documents
	// carry in the index's source attribute, e.g. a site): what many of
	// that source's documents share is then template too. Empty: none.
	Source string `json:"source,omitempty"`
	SearchParams
	Policy Policy `json:"policy,omitempty"`
}

// CheckItem is one query of CheckBatch: its content and, optionally, its
// source (as CheckRequest.Source).
type CheckItem struct {
	Content
	Source string `json:"source,omitempty"`
}

// Hit is a stored document within reach of a query.
type Hit struct {
	ID          string    `json:"id"`
	Fingerprint string    `json:"fingerprint"`
	Distance    int       `json:"distance"`
	Time        time.Time `json:"time"`
	// Exact: same normalized content.
	Exact bool `json:"exact"`
}

// CheckHit is a stored document a check found and how it relates to the
// query.
type CheckHit struct {
	Hit
	Relation          string   `json:"relation"`
	Resemblance       float64  `json:"resemblance"`
	QueryContainment  float64  `json:"query_containment"`
	StoredContainment float64  `json:"stored_containment"`
	Clause            string   `json:"clause,omitempty"`
	Template          []string `json:"template,omitempty"`
}

// CheckResponse is the answer of a check.
type CheckResponse struct {
	Fingerprint    string     `json:"fingerprint"`
	ExactHash      string     `json:"exact_hash,omitempty"`
	Features       int        `json:"features,omitempty"`
	K              int        `json:"k"`
	Policy         Policy     `json:"policy"`
	Matching       string     `json:"matching,omitempty"`
	Duplicate      bool       `json:"duplicate"`
	ExactDuplicate bool       `json:"exact_duplicate"`
	Duplicates     []CheckHit `json:"duplicates"`
	Related        []CheckHit `json:"related,omitempty"`
	Template       []string   `json:"template,omitempty"`
	Candidates     int        `json:"candidates"`
	Truncated      bool       `json:"truncated"`
}

// BatchCheckRequest is the body of CheckBatch: the search parameters and
// policy apply to every item.
type BatchCheckRequest struct {
	Items []CheckItem `json:"items"`
	SearchParams
	Policy Policy `json:"policy,omitempty"`
}

// ItemError is the problem of one item of a batch.
type ItemError struct {
	// Index is the item's position in the request.
	Index   int    `json:"index"`
	Problem *Error `json:"error"`
}

// BatchCheckResponse has one result per item (nil where the item failed)
// and the failed items' problems, by index.
type BatchCheckResponse struct {
	Results []*CheckResponse `json:"results"`
	Errors  []ItemError      `json:"errors"`
}

// DocumentInput is a document to store.
type DocumentInput struct {
	ID string `json:"id"`
	Content
	// Time is the document's time (nil: now).
	Time  *time.Time        `json:"time,omitempty"`
	Attrs map[string]string `json:"attrs,omitempty"`
}

// InsertRequest is the body of InsertDocument.
type InsertRequest struct {
	DocumentInput
	Mode InsertMode `json:"mode,omitempty"`
	// K is the distance of near-duplicates (nil: the layout's K).
	K *int `json:"k,omitempty"`
}

// InsertResponse is the answer of an insert.
type InsertResponse struct {
	ID     string `json:"id"`
	Stored bool   `json:"stored"`
	// Replaced: the id existed and its old version was replaced.
	Replaced    bool   `json:"replaced"`
	Fingerprint string `json:"fingerprint"`
	// DuplicateOf names the original when insert-if-unique did not store.
	DuplicateOf string `json:"duplicate_of,omitempty"`
	Matching    string `json:"matching,omitempty"`
	Original    *Hit   `json:"original,omitempty"`
	Duplicates  []Hit  `json:"duplicates"`
}

// BatchInsertRequest is the body of InsertDocuments: mode and k apply to
// every item.
type BatchInsertRequest struct {
	Items []DocumentInput `json:"items"`
	Mode  InsertMode      `json:"mode,omitempty"`
	K     *int            `json:"k,omitempty"`
}

// BatchInsertResponse has one result per item (nil where the item failed)
// and the failed items' problems, by index.
type BatchInsertResponse struct {
	Results []*InsertResponse `json:"results"`
	Errors  []ItemError       `json:"errors"`
}

// Document is a stored document.
type Document struct {
	ID               string            `json:"id"`
	Fingerprint      string            `json:"fingerprint"`
	TitleFingerprint string            `json:"title_fingerprint,omitempty"`
	ExactHash        string            `json:"exact_hash,omitempty"`
	Time             time.Time         `json:"time"`
	Attrs            map[string]string `json:"attrs,omitempty"`
}

// FingerprintRequest is the body of Fingerprint.
type FingerprintRequest struct {
	Title string `json:"title,omitempty"`
	Text  string `json:"text"`
	Lang  string `json:"lang,omitempty"`
}

// Feature is one of the features that weigh most in a fingerprint.
type Feature struct {
	Text   string  `json:"text"`
	Weight float64 `json:"weight"`
}

// FingerprintResponse is a text's fingerprint and what explains it.
type FingerprintResponse struct {
	Fingerprint      string `json:"fingerprint"`
	TitleFingerprint string `json:"title_fingerprint,omitempty"`
	ExactHash        string `json:"exact_hash"`
	Features         int    `json:"features"`
	TitleFeatures    int    `json:"title_features"`
	Chars            int    `json:"chars"`
	// Recipe is the fingerprint recipe version; fingerprints compare only
	// within one.
	Recipe      int       `json:"recipe"`
	TopFeatures []Feature `json:"top_features"`
}

// StatsOptions are the parameters of Stats.
type StatsOptions struct {
	// Rows is how many of the fullest index rows to report (0..100; nil:
	// the server's 10). Reporting rows scans the index; 0 answers from
	// counters alone.
	Rows *int
}

// Stats are the index's counts and layout.
type Stats struct {
	Documents    int64    `json:"documents"`
	Fingerprints int64    `json:"fingerprints"`
	Layout       Layout   `json:"layout"`
	Recipe       int      `json:"recipe"`
	FullestRows  []RowRef `json:"fullest_rows"`
	IndexRows    int64    `json:"index_rows"`
	IndexBytes   int64    `json:"index_bytes"`
}

// Layout is the index's block layout: B blocks, distances up to K, Tables
// permutation tables.
type Layout struct {
	B      int `json:"b"`
	K      int `json:"k"`
	Tables int `json:"tables"`
}

// RowRef is one of the fullest index rows.
type RowRef struct {
	Table        int    `json:"table"`
	Prefix       string `json:"prefix"`
	Fingerprints int    `json:"fingerprints"`
}

// Status is the answer of Health and Ready.
type Status struct {
	Status string `json:"status"`
	Store  string `json:"store,omitempty"`
}
