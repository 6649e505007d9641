// Package corpus builds the plain-text document collection the quality
// benchmark draws its pairs from: Chinese LibreOffice help pages, Brown
// corpus texts and State of the Union speeches, cut into article-sized
// pieces, de-duplicated and labelled with a length bucket.
//
// The corpus is generated at run time from installed packages (see
// scripts/eval/install.sh) and never committed.
package corpus

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// Length buckets, by the number of characters (runes) of a document body.
const (
	Short  = "short"  // fewer than ShortMax characters
	Medium = "medium" // ShortMax..LongMin characters
	Long   = "long"   // more than LongMin characters
)

// Bucket boundaries in characters, as the issue defines them: long is more
// than 500 characters, short fewer than 200.
const (
	ShortMax = 200
	LongMin  = 500
)

// ErrBadDoc is returned (wrapped) for a document that fails Doc.Validate,
// for example a malformed line in a corpus file.
var ErrBadDoc = errors.New("corpus: bad document")

// Doc is one plain-text document of the corpus.
type Doc struct {
	// ID is unique in the corpus and stable across builds from the same
	// packages: source, file and piece number.
	ID string `json:"id"`
	// Source is "lohelp", "brown" or "sotu".
	Source string `json:"source"`
	// Lang is "zh" or "en".
	Lang string `json:"lang"`
	// Topic groups documents about the same subject within a source: the
	// help module (swriter, scalc...), the Brown category (news,
	// editorial...), the SOTU speaker. Hard negatives are drawn within it.
	Topic string `json:"topic"`
	Title string `json:"title"`
	Body  string `json:"body"`
	// ContentChars, when set, is the length in characters of the
	// document's own text without its furniture (a mail's signature and
	// list footer, a site's header, byline and footer); Bucket uses it.
	ContentChars int `json:"content_chars,omitempty"`
}

// Chars is the length of the body in characters.
func (d Doc) Chars() int { return utf8.RuneCountInString(d.Body) }

// Bucket is the document's length bucket (Short, Medium or Long).
// A document with furniture is bucketed by ContentChars.
func (d Doc) Bucket() string {
	if d.ContentChars > 0 {
		return BucketOf(d.ContentChars)
	}
	return BucketOf(d.Chars())
}

// BucketOf maps a length in characters to its bucket.
func BucketOf(chars int) string {
	switch {
	case chars < ShortMax:
		return Short
	case chars > LongMin:
		return Long
	default:
		return Medium
	}
}

// Validate reports a document that the rest of the benchmark cannot use.
func (d Doc) Validate() error {
	switch {
	case d.ID == "":
		return fmt.Errorf("%w: empty id", ErrBadDoc)
	case d.Lang != "zh" && d.Lang != "en":
		return fmt.Errorf("%w: %s: lang %q not zh or en", ErrBadDoc, d.ID, d.Lang)
	case strings.TrimSpace(d.Body) == "":
		return fmt.Errorf("%w: %s: empty body", ErrBadDoc, d.ID)
	case !utf8.ValidString(d.Title) || !utf8.ValidString(d.Body):
		return fmt.Errorf("%w: %s: invalid UTF-8", ErrBadDoc, d.ID)
	}
	return nil
}

// Write writes docs as JSON Lines, one document a line.
func Write(w io.Writer, docs []Doc) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("corpus: write %s: %w", d.ID, err)
		}
	}
	return bw.Flush()
}

// Read reads JSON Lines written by Write. Every document is validated and
// ids must be unique; errors name the line.
func Read(r io.Reader) ([]Doc, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var docs []Doc
	seen := map[string]bool{}
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var d Doc
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrBadDoc, line, err)
		}
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if seen[d.ID] {
			return nil, fmt.Errorf("%w: line %d: duplicate id %q", ErrBadDoc, line, d.ID)
		}
		seen[d.ID] = true
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("corpus: read: %w", err)
	}
	return docs, nil
}

// Dedup drops documents whose normalized body (case-folded, whitespace
// collapsed) equals an earlier document's, and returns how many it
// dropped. Help pages in particular repeat whole pages under several
// names; without this, a "negative" pair could be two copies of one text.
func Dedup(docs []Doc) ([]Doc, int) {
	seen := make(map[uint64]bool, len(docs))
	out := docs[:0:0]
	for _, d := range docs {
		h := xxhash.Sum64String(strings.Join(strings.Fields(strings.ToLower(d.Body)), " "))
		if seen[h] {
			continue
		}
		seen[h] = true
		out = append(out, d)
	}
	return out, len(docs) - len(out)
}

// InSplit reports whether the document id belongs to split: "dev" (70% of
// ids, by a fixed hash), "test" (the rest) or "all".
func InSplit(id, split string) bool {
	if split == "all" {
		return true
	}
	dev := xxhash.Sum64String("simdex-eval-split:"+id)%10 < 7
	return dev == (split == "dev")
}
