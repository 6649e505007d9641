package decide

import (
	"slices"
	"strings"

	"github.com/simdex/simdex/fingerprint"
)

// TemplateSpans returns the byte ranges of normalized text that are
// template, given the keys of its template sentences (sorted; see
// Rule.TemplateKeys), in text order, not overlapping:
//
//   - a line whose keyed sentences (fingerprint.Sentences) are all
//     template is template as a whole;
//   - in a line that also holds other keyed sentences, only the template
//     sentences are;
//   - a line without any keyed sentence (a name, a phone number, a
//     separator, a blank line: too light to be keyed, so no row counts
//     it) next to a whole template line is template too, and so on
//     outwards: a signature or footer is a block, and its light lines
//     (which differ between authors) belong to it.
func TemplateSpans(text string, keys []uint64) [][2]int {
	if len(keys) == 0 || text == "" {
		return nil
	}
	type line struct {
		start, end     int
		keyed, tmpl    int
		spans          [][2]int // template sentences of the line
		whole, blockOK bool
	}
	var lines []line
	for at := 0; at <= len(text); {
		end := strings.IndexByte(text[at:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += at
		}
		lines = append(lines, line{start: at, end: end})
		at = end + 1
	}
	_, sents := fingerprint.Sentences(text)
	li := 0
	for _, s := range sents {
		for li < len(lines) && lines[li].end < s.Start {
			li++
		}
		if li == len(lines) {
			break
		}
		l := &lines[li]
		l.keyed++
		if _, ok := slices.BinarySearch(keys, s.Key); ok {
			l.tmpl++
			l.spans = append(l.spans, [2]int{s.Start, s.End})
		}
	}
	for i := range lines {
		lines[i].whole = lines[i].keyed > 0 && lines[i].tmpl == lines[i].keyed
	}
	// Light lines join an adjacent whole template line, outwards, in
	// both directions.
	for i := 1; i < len(lines); i++ {
		if lines[i].keyed == 0 && lines[i-1].whole {
			lines[i].whole = true
		}
	}
	for i := len(lines) - 2; i >= 0; i-- {
		if lines[i].keyed == 0 && lines[i+1].whole {
			lines[i].whole = true
		}
	}
	var out [][2]int
	for _, l := range lines {
		switch {
		case l.whole && l.end > l.start:
			out = append(out, [2]int{l.start, l.end})
		case !l.whole:
			out = append(out, l.spans...)
		}
	}
	return out
}

// stripTemplate returns normalized text without its template spans
// (TemplateSpans), each replaced by a line end.
func stripTemplate(text string, keys []uint64) string {
	spans := TemplateSpans(text, keys)
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	at := 0
	for _, s := range spans {
		b.WriteString(text[at:s[0]])
		b.WriteByte('\n')
		at = s[1]
	}
	b.WriteString(text[at:])
	return b.String()
}
