package whole

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/simdex/simdex/scripts/eval/judge"
)

const (
	sig   = "-- \nJane Roe\nAcme Corp.\nusers mailing list"
	bodyA = "The committee met on Tuesday to discuss the budget for the coming year and agreed to postpone the vote."
	bodyB = "Rain is expected over the weekend in the north, with snow on the higher ground by Sunday evening."
)

func fixture() ([]Stored, []Query, []Answer) {
	stored := []Stored{
		{ID: "A", Doc: "A", Source: "brown", Body: bodyA},
		{ID: "A@t1", Doc: "A", Source: "brown", Body: "Site header\n" + bodyA + "\nSite footer"},
		{ID: "M1", Doc: "M1", Source: "mail", Body: "Thanks, the patch works.\n" + sig},
		{ID: "M2", Doc: "M2", Source: "mail", Body: "I am away until Monday.\n" + sig},
		{ID: "M3", Doc: "M3", Source: "mail", Body: "See the attached minutes.\n" + sig},
		{ID: "Q", Doc: "Q", Source: "quote", Body: bodyB},
	}
	queries := []Query{
		// An edited copy of A: both stored copies are correct by provenance.
		{ID: "p1", Kind: "typos", Lang: "en", Bucket: "short", Source: "brown", Positive: true, Doc: "A", Body: bodyA + " Indeed."},
		// A copy of A with a fact changed: hits on copies of A are wrong.
		{ID: "n1", Kind: "neg_keyword", Lang: "en", Bucket: "short", Source: "brown", NotDoc: "A", Body: strings.Replace(bodyA, "Tuesday", "Friday", 1)},
		// A never-stored mail sharing only the signature with M1.
		{ID: "u1", Kind: "unstored", Lang: "en", Bucket: "short", Source: "mail", Unstored: true, Doc: "U1", Body: "Can someone review my change?\n" + sig},
		// A never-stored text quoting the stored quotation.
		{ID: "u2", Kind: "quoted", Lang: "en", Bucket: "medium", Source: "sotu", Unstored: true, Doc: "U2", Body: "As one reader put it: " + bodyB + " The council, however, decided to keep the roads open all week."},
		// A never-stored text that is (a part of) a stored one: correct by content.
		{ID: "u3", Kind: "unstored", Lang: "en", Bucket: "short", Source: "brown", Unstored: true, Doc: "U3", Body: "The committee met on Tuesday to discuss the budget for the coming year"},
		// A positive the service missed.
		{ID: "p2", Kind: "truncate", Lang: "zh", Bucket: "long", Source: "lohelp", Positive: true, Doc: "Z", Body: "某个文档"},
	}
	answers := []Answer{
		{Duplicate: true, Hits: []Hit{{ID: "A"}, {ID: "A@t1", Relation: judge.NearIdentical}}},
		{Duplicate: true, Hits: []Hit{{ID: "A"}}},
		{Duplicate: true, Hits: []Hit{{ID: "M1", Relation: judge.NearIdentical}}},
		{Duplicate: true, Hits: []Hit{{ID: "Q", Relation: judge.StoredIsExcerpt}}},
		{Duplicate: true, Hits: []Hit{{ID: "A"}}},
		{},
	}
	return stored, queries, answers
}

func judged(t *testing.T) []QueryResult {
	t.Helper()
	stored, queries, answers := fixture()
	texts, docs := make([]string, len(stored)), make([]string, len(stored))
	for i, s := range stored {
		texts[i], docs[i] = s.Title+"\n"+s.Body, s.Doc
	}
	return Judge(judge.New(texts, docs, judge.MinDocs), stored, queries, answers)
}

func TestJudge(t *testing.T) {
	rs := judged(t)
	tests := []struct {
		query    string
		correct  []bool
		basis    []string
		found    bool
		falseDup bool
	}{
		{"p1", []bool{true, true}, []string{"provenance", "provenance"}, true, false},
		{"n1", []bool{false}, []string{"changed"}, false, true},
		{"u1", []bool{false}, []string{"content"}, false, true},
		{"u2", []bool{false}, []string{"content"}, false, true},
		{"u3", []bool{true}, []string{"content"}, false, false},
		{"p2", nil, nil, false, false},
	}
	for i, tt := range tests {
		r := rs[i]
		if r.Query.ID != tt.query {
			t.Fatalf("result %d is %s, want %s", i, r.Query.ID, tt.query)
		}
		if len(r.Hits) != len(tt.correct) {
			t.Fatalf("%s: %d hits, want %d", tt.query, len(r.Hits), len(tt.correct))
		}
		for j, h := range r.Hits {
			if h.Correct != tt.correct[j] || h.Basis != tt.basis[j] {
				t.Errorf("%s hit %s: correct %v basis %s (%+v), want %v %s", tt.query, h.Stored, h.Correct, h.Basis, h.Judge, tt.correct[j], tt.basis[j])
			}
		}
		if r.Found != tt.found || r.FalseDuplicate() != tt.falseDup {
			t.Errorf("%s: found %v false duplicate %v, want %v %v", tt.query, r.Found, r.FalseDuplicate(), tt.found, tt.falseDup)
		}
	}
	if v := rs[3].Hits[0].Judge.Relation; v != judge.StoredIsExcerpt {
		t.Errorf("quoting query: judge relation %s, want %s", v, judge.StoredIsExcerpt)
	}
}

func TestCounts(t *testing.T) {
	rs := judged(t)
	tot := Total(rs)
	want := Counts{Queries: 6, Hits: 6, CorrectHits: 3, Positives: 2, Found: 1, Flagged: 5, FalseDup: 3, Unstored: 3, UnstoredFalseDup: 2}
	if tot != want {
		t.Fatalf("Total = %+v, want %+v", tot, want)
	}
	tests := []struct {
		name      string
		got, want float64
	}{
		{"hit precision", tot.HitPrecision(), 0.5},
		{"recall", tot.Recall(), 0.5},
		{"query precision", tot.QueryPrecision(), 0.4},
		{"never-stored rate", tot.UnstoredRate(), 2.0 / 3},
		{"empty hit precision", Counts{}.HitPrecision(), 1},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	cells := Tally(rs, cellOf)
	if c := cells["en/short"]; c.Queries != 4 || c.Unstored != 2 || c.UnstoredFalseDup != 1 {
		t.Errorf("en/short = %+v", c)
	}
}

func TestWriteSection(t *testing.T) {
	rs := judged(t)
	var b strings.Builder
	m := Meta{Stored: 6, MinDocs: judge.MinDocs, Sources: map[string]string{"A": "brown", "A@t1": "brown", "M1": "mail", "Q": "quote"},
		Agreement: map[string][2]int{"choice": {8, 10}}}
	stored, _, _ := fixture()
	if err := WriteSection(&b, m, rs, []string{"typos", "neg_keyword", "unstored", "quoted"}, stored); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"## Whole-corpus quality",
		"| overall: hit precision >= 0.98, recall >= 0.95 | P 0.500 (3 of 6 hits), R 0.500 | **no** |",
		"| en/short: never-stored called duplicates <= 1% | 50.0% (1 of 2) | **no** |",
		"8 of 10 hits of the choice set (0.800)",
		"| content: stored_is_excerpt | 1 |",
		"| mail | mail | 1 |",
		"| stored_is_excerpt | 0 | 0 | 1 | 0 |",
		"- **mail → mail, content: overlap** (1):",
		"  - `u1` → `M1` (R 0.00, QC 0.00, SC 0.00; service: near_identical)",
		"    stored: Thanks, the patch works. / --  / Jane Roe",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteWrongHits(t *testing.T) {
	stored, _, _ := fixture()
	rs := judged(t)
	var b bytes.Buffer
	if err := WriteWrongHits(&b, rs, stored); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var w WrongHit
		if err := json.Unmarshal([]byte(l), &w); err != nil {
			t.Fatal(err)
		}
		if w.StoredText == "" || w.QueryText == "" || w.Correct {
			t.Errorf("wrong hit %+v lacks texts or is correct", w)
		}
		got = append(got, w.Query+">"+w.Stored)
	}
	if want := "n1>A u1>M1 u2>Q"; strings.Join(got, " ") != want {
		t.Errorf("wrong hits %v, want %s", got, want)
	}
}

func TestKeep(t *testing.T) {
	rs := judged(t)
	p1 := rs[0] // two correct hits, both on copies of its source
	if len(p1.Hits) != 2 || !p1.Found || p1.Correct != 2 {
		t.Fatalf("fixture changed: %+v", p1)
	}
	one := p1.Keep(func(h int) bool { return h == 1 })
	if len(one.Hits) != 1 || one.Hits[0].Stored != "A@t1" || one.Correct != 1 || !one.Found || !one.Duplicate {
		t.Errorf("Keep(second hit) = %+v", one)
	}
	none := p1.Keep(func(int) bool { return false })
	if len(none.Hits) != 0 || none.Correct != 0 || none.Found || none.Duplicate {
		t.Errorf("Keep(nothing) = %+v", none)
	}
	// A never-stored query keeps its false duplicate, and loses it.
	u1 := rs[2]
	if k := u1.Keep(func(int) bool { return true }); !k.FalseDuplicate() || k.Found {
		t.Errorf("Keep(all) of a never-stored false duplicate = %+v", k)
	}
	if k := u1.Keep(func(int) bool { return false }); k.FalseDuplicate() {
		t.Errorf("Keep(nothing) of a never-stored false duplicate is still one: %+v", k)
	}
	// Counting kept results agrees with counting the originals when all
	// hits are kept and every answer with hits said duplicate.
	var all []QueryResult
	for _, r := range rs {
		all = append(all, r.Keep(func(int) bool { return true }))
	}
	if got, want := Total(all), Total(rs); got != want {
		t.Errorf("Total of kept = %+v, want %+v", got, want)
	}
}

func TestWriteTable(t *testing.T) {
	rs := judged(t)
	tot := Total(rs)
	var b strings.Builder
	WriteTable(&b, "By cell", &tot, Tally(rs, func(r QueryResult) string { return r.Query.Lang + "/" + r.Query.Bucket }), Cells())
	out := b.String()
	for _, want := range []string{"\n### By cell\n", "| all | 6 |", "| en/short | 4 |", "| zh/long | 1 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "| zh/long") > strings.Index(out, "| en/short") {
		t.Errorf("rows not in Cells order:\n%s", out)
	}
}
