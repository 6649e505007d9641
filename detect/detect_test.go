package detect_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/detect"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/testmails"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/pebblestore"
)

var (
	fpOnce sync.Once
	fpr    *fingerprint.Fingerprinter
	fpErr  error
)

func fingerprinter(t testing.TB) *fingerprint.Fingerprinter {
	fpOnce.Do(func() { fpr, fpErr = fingerprint.New(fingerprint.DefaultConfig()) })
	if fpErr != nil {
		t.Fatal(fpErr)
	}
	return fpr
}

// env is a real embedded index with the judge every route uses.
type env struct {
	ix  *kvindex.Index
	det *detect.Detector
	fp  *fingerprint.Fingerprinter
}

func newEnv(t *testing.T) *env {
	fp := fingerprinter(t)
	judge := detect.Judge{Rule: decide.DefaultRule(), Sketcher: fp}
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := kvindex.Open(context.Background(), st, kvindex.Config{Layout: fingerprint.DefaultLayout, RecipeVersion: fingerprint.RecipeVersion, Confirm: judge.Confirm})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return &env{ix: ix, det: detect.New(ix, judge), fp: fp}
}

func (e *env) doc(t *testing.T, id, text string, at time.Time) (kvindex.Document, detect.Query) {
	r, err := e.fp.Fingerprint(fingerprint.Document{Body: text})
	if err != nil {
		t.Fatal(err)
	}
	rule := decide.DefaultRule()
	d := kvindex.Document{ID: id, Fingerprint: r.Simhash, ExactHash: r.ExactHash, Sketch: r.Sketch, Chars: r.Chars, Bands: r.Bands,
		Text: rule.KeepText(r.Chars, r.Text, kvindex.MaxTextBytes), Body: r.Text, Time: at}
	return d, detect.QueryOf(r)
}

// mail is a short reply on a list: its own body, then the author's
// signature and the list's footer, the same under every mail.
func mail(body string) string { return testmails.Load().ShortMail(body) }

// bodies are the stored mails' bodies.
var bodies = testmails.Load().Bodies

// TestTemplateAndRoutesAgree stores one author's mails (bodies differ, the
// signature and list footer are the same) and asks, on every route, about
// a new mail with the same template and a copy of a stored one: the new
// mail is no duplicate of anything, the copy is a duplicate of its
// original only, and check, batch check and insert-if-unique agree.
func TestTemplateAndRoutesAgree(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i, b := range bodies {
		d, _ := e.doc(t, fmt.Sprintf("mail/%d", i), mail(b), t0.Add(time.Duration(i)*time.Hour))
		if _, err := e.ix.Insert(ctx, d, kvindex.InsertAlways, 3); err != nil {
			t.Fatal(err)
		}
	}
	newMail := mail("The meeting about the test farm budget moves to the small room on the third floor.")
	copyMail := "Re: " + mail(bodies[2])
	for _, tc := range []struct {
		name, text string
		want       string // the duplicate's id, "" for none
	}{
		{"new mail, same template", newMail, ""},
		{"copy of mail 2", copyMail, "mail/2"},
	} {
		_, q := e.doc(t, "q", tc.text, t0.Add(time.Hour*24))
		// Check and batch check.
		for _, batch := range [][]detect.Query{{q}, {q, q}} {
			res, err := e.det.Check(ctx, batch, detect.Options{Lookup: kvindex.LookupOptions{K: 3, Limit: 100}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				var got []string
				for _, h := range r.Duplicates {
					got = append(got, h.ID)
				}
				if want := tc.want; want == "" && len(got) != 0 || want != "" && (len(got) != 1 || got[0] != want) {
					t.Errorf("%s: check found %v, want %q", tc.name, got, want)
				}
				if len(r.Template) < 3 {
					t.Errorf("%s: template %q, want the signature and footer lines", tc.name, r.Template)
				}
				for _, l := range r.Template {
					if strings.Contains(l, "test farm") || strings.Contains(l, "signing key") {
						t.Errorf("%s: a body sentence taken for template: %q", tc.name, l)
					}
				}
				// Each hit says which of the template sentences it shares:
				// the stored mail has the same signature and footer.
				for _, h := range r.Duplicates {
					if len(h.Template) == 0 {
						t.Errorf("%s: hit %s lists no shared template sentence", tc.name, h.ID)
					}
					for _, l := range h.Template {
						if !slices.Contains(r.Template, l) {
							t.Errorf("%s: hit %s lists %q, not in the answer's template %q", tc.name, h.ID, l, r.Template)
						}
					}
				}
			}
		}
		// Insert-if-unique, decided inside the index's locks by the same
		// judge.
		d, _ := e.doc(t, "new/"+tc.name, tc.text, t0.Add(time.Hour*24))
		res, err := e.ix.Insert(ctx, d, kvindex.InsertIfUnique, 3)
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == "" && !res.Stored || tc.want != "" && (res.Stored || res.Original == nil || res.Original.ID != tc.want) {
			t.Errorf("%s: insert-if-unique stored %v, original %+v; want duplicate of %q", tc.name, res.Stored, res.Original, tc.want)
		}
		if res.Stored {
			if err := e.ix.Delete(ctx, d.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestWithoutTemplateKnowledge shows what the template detection fixes:
// the same new mail judged without the key counts is a duplicate of every
// stored mail of the author.
func TestWithoutTemplateKnowledge(t *testing.T) {
	e := newEnv(t)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var stored []kvindex.Document
	for i, b := range bodies {
		d, _ := e.doc(t, fmt.Sprintf("mail/%d", i), mail(b), t0)
		stored = append(stored, d)
	}
	nd, _ := e.doc(t, "new", mail("The meeting about the test farm budget moves to the small room on the third floor."), t0)
	blind := detect.Judge{Rule: decide.DefaultRule()}.Confirm(nd, kvindex.KeyCounts{}, 3)
	n := 0
	for _, s := range stored {
		if blind(s, fingerprint.Distance(nd.Fingerprint, s.Fingerprint)) {
			n++
		}
	}
	if n == 0 {
		t.Skip("the template alone does not make these mails duplicates under the rule; nothing to show")
	}
	keyDocs := map[uint64]int{}
	for _, k := range nd.Bands.TextKeys() {
		keyDocs[k] = 0 // as the index reports every key it looked up
		for _, s := range stored {
			for _, sk := range s.Bands.TextKeys() {
				if sk == k {
					keyDocs[k]++
				}
			}
		}
	}
	seeing := detect.Judge{Rule: decide.DefaultRule(), Sketcher: e.fp}.Confirm(nd, kvindex.KeyCounts{Docs: keyDocs}, 3)
	for _, s := range stored {
		if seeing(s, fingerprint.Distance(nd.Fingerprint, s.Fingerprint)) {
			t.Errorf("with the key counts, the new mail is still a duplicate of %s", s.ID)
		}
	}
}

// TestStoredPairsSeeTheTemplate: routes that judge two stored documents
// found within k of each other (a seen filter's near pairs, a load's dedup
// report) learn the first side's template from its text-key rows, as a
// check of its text does: a stored new mail of the author is no duplicate
// of her other mails, on ConfirmPairs as on a check, while a stored copy
// of one is a duplicate of it. A judge without template knowledge (no
// Sketcher) confirms the near pair: the texts exercise the template.
func TestStoredPairsSeeTheTemplate(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	m := testmails.Load()
	mail, bodies, newBody := m.Mail, m.Bodies, m.New
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var stored []kvindex.Document
	for i, b := range bodies {
		d, _ := e.doc(t, fmt.Sprintf("mail/%d", i), mail(b), t0.Add(time.Duration(i)*time.Hour))
		if _, err := e.ix.Insert(ctx, d, kvindex.InsertAlways, 3); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, d)
	}
	newMail, newQ := e.doc(t, "new", mail(newBody), t0.Add(24*time.Hour))
	copyMail, _ := e.doc(t, "copy", "Re: "+mail(bodies[2]), t0.Add(25*time.Hour))
	for _, d := range []kvindex.Document{newMail, copyMail} {
		if _, err := e.ix.Insert(ctx, d, kvindex.InsertAlways, 3); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.det.Check(ctx, []detect.Query{newQ}, detect.Options{Lookup: kvindex.LookupOptions{K: 3, Limit: 100}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res[0].Duplicates {
		if h.ID != "new" {
			t.Errorf("check of the new mail: duplicate of %s", h.ID)
		}
	}
	sides, err := e.det.StoredSides(ctx, e.ix, []kvindex.Document{newMail})
	if err != nil {
		t.Fatal(err)
	}
	if s := sides["new"]; len(s.Template.Keys) < 3 || s.Template.Chars == 0 {
		t.Errorf("stored new mail: template %+v, want the signature and footer sentences", s.Template)
	}
	// The pairs a route finds within k: the new mail and its near
	// neighbours, the copy and its original.
	var pairs []detect.Pair
	for _, s := range stored {
		if d := fingerprint.Distance(newMail.Fingerprint, s.Fingerprint); d <= 3 {
			pairs = append(pairs, detect.Pair{DocID: "new", Fingerprint: newMail.Fingerprint, Other: s.Fingerprint, Distance: d, K: 3})
		}
	}
	if len(pairs) == 0 {
		t.Fatal("test texts: no stored mail within 3 bits of the new one")
	}
	near := len(pairs)
	d := fingerprint.Distance(copyMail.Fingerprint, stored[2].Fingerprint)
	pairs = append(pairs, detect.Pair{DocID: "copy", Fingerprint: copyMail.Fingerprint, Other: stored[2].Fingerprint, Distance: d, K: max(d, 3)})
	got, err := e.det.ConfirmPairs(ctx, pairs)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pairs[:near] {
		if got[i] {
			t.Errorf("new mail and the stored mail at distance %d: confirmed as duplicates; they share only the template", p.Distance)
		}
	}
	if !got[near] {
		t.Errorf("copy of mail/2: not confirmed as its duplicate")
	}
	blind, err := detect.New(e.ix, detect.Judge{Rule: decide.DefaultRule()}).ConfirmPairs(ctx, pairs[:near])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(blind, true) {
		t.Error("without template knowledge no near pair is confirmed either: the test texts do not exercise the template")
	}
}
