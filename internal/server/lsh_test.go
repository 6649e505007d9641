package server

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/simdex/simdex/fingerprint"
)

// A long near-copy whose simhash is beyond the index's K (a sentence
// dropped, one added) is found through the LSH band rows and confirmed by
// the rule's Jaccard clause: check, batch check and insert-if-unique all
// call it a duplicate, with its true distance; an unrelated long text is
// not.
func TestLongNearCopyBeyondKFoundByBands(t *testing.T) {
	e := newRuleEnv(t)
	fpr := sharedFingerprinter(t)
	raw, err := os.ReadFile("../../fingerprint/testdata/texts/en_desal.txt")
	if err != nil {
		t.Fatal(err)
	}
	orig := string(raw)
	fo, err := fpr.Fingerprint(fingerprint.Document{Body: orig})
	if err != nil {
		t.Fatal(err)
	}
	copyText, dist := bandNearCopy(t, fpr, orig, e.cfg.Layout.K)
	other, err := os.ReadFile("../../fingerprint/testdata/texts/en_rail.txt")
	if err != nil {
		t.Fatal(err)
	}

	if r := e.do("POST", "/v1/documents", map[string]any{"id": "orig", "text": orig}); r.status != http.StatusCreated {
		t.Fatalf("insert: %d %s", r.status, r.body)
	}
	var c checkResponse
	r := e.do("POST", "/v1/check", map[string]any{"text": copyText})
	r.json(t, &c)
	if r.status != 200 || !c.Duplicate || len(c.Duplicates) != 1 || c.Duplicates[0].ID != "orig" || c.Duplicates[0].Distance != dist {
		t.Fatalf("check of the near-copy (distance %d): %d %+v, want orig at distance %d", dist, r.status, c, dist)
	}
	c = checkResponse{}
	e.do("POST", "/v1/check", map[string]any{"text": string(other)}).json(t, &c)
	if c.Duplicate {
		t.Errorf("an unrelated long text was called a duplicate: %+v", c.Duplicates)
	}

	var bc batchCheckResponse
	r = e.do("POST", "/v1/check/batch", map[string]any{"items": []map[string]any{{"text": copyText}, {"text": string(other)}, {"fingerprint": fo.Simhash.String()}}})
	r.json(t, &bc)
	if r.status != 200 || len(bc.Results) != 3 || !bc.Results[0].Duplicate || bc.Results[1].Duplicate || !bc.Results[2].Duplicate {
		t.Fatalf("batch: %d %s; want near-copy yes, unrelated no, own fingerprint yes", r.status, r.body)
	}
	if !bc.Results[2].ExactDuplicate && bc.Results[2].Duplicates[0].Distance != 0 {
		t.Errorf("bare own fingerprint: %+v", bc.Results[2])
	}

	var ins insertResponse
	r = e.do("POST", "/v1/documents", map[string]any{"id": "copy", "text": copyText, "mode": "insert-if-unique"})
	r.json(t, &ins)
	if ins.Stored || ins.DuplicateOf != "orig" {
		t.Errorf("insert-if-unique of the near-copy: %d %+v, want a duplicate of orig", r.status, ins)
	}
	d, err := e.ix.Get(t.Context(), "orig")
	if want := fingerprint.NumBands + len(fingerprint.DocTextKeys(fo.Text, fo.Chars)); err != nil || len(d.Bands) != want {
		t.Errorf("stored orig: %d band hashes (%v), want %d", len(d.Bands), err, want)
	}
}

// bandNearCopy returns an edit of text (one sentence dropped, one added)
// whose simhash is more than k bits away while it keeps most features and
// shares an LSH band with text: the first such edit in a fixed order, so
// the test is deterministic.
func bandNearCopy(t *testing.T, fpr Fingerprinter, text string, k int) (string, int) {
	t.Helper()
	fo, err := fpr.Fingerprint(fingerprint.Document{Body: text})
	if err != nil {
		t.Fatal(err)
	}
	sentences := strings.SplitAfter(text, ". ")
	for drop := range sentences {
		v := strings.Join(append(append([]string{}, sentences[:drop]...), sentences[drop+1:]...), "") +
			" Officials added that the plan would be reviewed again next spring after public hearings."
		fv, err := fpr.Fingerprint(fingerprint.Document{Body: v})
		if err != nil {
			t.Fatal(err)
		}
		d := fingerprint.Distance(fo.Simhash, fv.Simhash)
		if d > k && fingerprint.Jaccard(fo.Sketch, fv.Sketch) >= 0.75 && fingerprint.SharesBand(fo.Bands, fv.Bands) {
			return v, d
		}
	}
	t.Fatal("test text: no one-sentence edit lands beyond K with a shared band")
	return "", 0
}
