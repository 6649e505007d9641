package fingerprint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The dictionaries take seconds to load (more under -race): every test in
// the package shares one Fingerprinter with the default config.
var (
	sharedOnce sync.Once
	sharedFP   *Fingerprinter
	sharedErr  error
)

func testFP(tb testing.TB) *Fingerprinter {
	tb.Helper()
	sharedOnce.Do(func() { sharedFP, sharedErr = New(DefaultConfig()) })
	if sharedErr != nil {
		tb.Fatalf("New: %v", sharedErr)
	}
	return sharedFP
}

// textDoc is one test text from testdata/texts: first line title, blank
// line, then the body.
type textDoc struct {
	name string
	doc  Document
}

func loadTexts(tb testing.TB) []textDoc {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "texts", "*.txt"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no test texts: %v", err)
	}
	slices.Sort(paths)
	var out []textDoc
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		title, body, ok := strings.Cut(string(b), "\n\n")
		if !ok {
			tb.Fatalf("%s: want a title line, a blank line, then the body", p)
		}
		out = append(out, textDoc{
			name: strings.TrimSuffix(filepath.Base(p), ".txt"),
			doc:  Document{Title: title, Body: body},
		})
	}
	return out
}

// longTexts are the article-length texts (over 700 characters).
func longTexts(tb testing.TB) []textDoc {
	var out []textDoc
	for _, td := range loadTexts(tb) {
		if len([]rune(td.doc.Body)) > 700 {
			out = append(out, td)
		}
	}
	return out
}

func mustFP(tb testing.TB, f *Fingerprinter, d Document) Result {
	tb.Helper()
	r, err := f.Fingerprint(d)
	if err != nil {
		tb.Fatalf("Fingerprint(%.40q): %v", d.Body, err)
	}
	return r
}
