package metrics

import (
	"bytes"
	"flag"
	"math"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestCounts(t *testing.T) {
	tests := []struct {
		name       string
		c          Counts
		p, r, f1   float64
		fpr        float64
		n          int
		nanP, nanR bool
	}{
		{name: "perfect", c: Counts{TP: 5, TN: 5}, p: 1, r: 1, f1: 1, fpr: 0, n: 10},
		{name: "mixed", c: Counts{TP: 6, FP: 2, TN: 8, FN: 4}, p: 0.75, r: 0.6, f1: 2 * 0.75 * 0.6 / 1.35, fpr: 0.2, n: 20},
		{name: "nothing called", c: Counts{TN: 3, FN: 2}, nanP: true, r: 0, fpr: 0, n: 5},
		{name: "all wrong", c: Counts{FP: 3, FN: 2}, p: 0, r: 0, f1: 0, fpr: 1, n: 5},
		{name: "no positives", c: Counts{FP: 1, TN: 3}, p: 0, nanR: true, fpr: 0.25, n: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			if c.N() != tt.n {
				t.Errorf("N = %d", c.N())
			}
			check := func(what string, got, want float64, nan bool) {
				if nan {
					if !math.IsNaN(got) {
						t.Errorf("%s = %v, want NaN", what, got)
					}
					return
				}
				if math.Abs(got-want) > 1e-12 {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			check("precision", c.Precision(), tt.p, tt.nanP)
			check("recall", c.Recall(), tt.r, tt.nanR)
			check("FP rate", c.FPRate(), tt.fpr, false)
			if !tt.nanP && !tt.nanR {
				check("F1", c.F1(), tt.f1, false)
			} else if !math.IsNaN(c.F1()) {
				t.Errorf("F1 = %v, want NaN", c.F1())
			}
		})
	}
}

func TestAdd(t *testing.T) {
	var c Counts
	for _, d := range []struct{ label, pred bool }{{true, true}, {true, false}, {false, true}, {false, false}, {true, true}} {
		c.Add(d.label, d.pred)
	}
	if c != (Counts{TP: 2, FN: 1, FP: 1, TN: 1}) {
		t.Errorf("counts %+v", c)
	}
}

// sample is a small hand-labelled set of outcomes.
func sample() []Outcome {
	return []Outcome{
		{PairID: "a", Size: 0.02, Duplicate: true, Kind: "typos", Lang: "en", Source: "brown", Bucket: "long", SizeClass: "tiny", Distance: 0, PartnerHit: 0, CopyHit: 0, AnyHit: true, Exact: true},
		{PairID: "b", Size: 0.1, Duplicate: true, Kind: "typos", Lang: "en", Source: "brown", Bucket: "short", SizeClass: "small", Distance: 2, PartnerHit: 2, CopyHit: 2, AnyHit: true},
		{PairID: "c", Size: 0.6, Duplicate: true, Kind: "mirror", Lang: "zh", Source: "lohelp", Bucket: "long", SizeClass: "large", Distance: 7, PartnerHit: -1, CopyHit: -1, AnyHit: false},
		{PairID: "d", Size: 0.3, Duplicate: true, Kind: "mirror", Lang: "zh", Source: "lohelp", Bucket: "short", SizeClass: "medium", Distance: -1, PartnerHit: -1, CopyHit: -1, Failure: "query: low-information"},
		{PairID: "e", Size: 0.9, Duplicate: false, Kind: "neg_topic", Lang: "en", Source: "brown", Bucket: "long", SizeClass: "large", Distance: 30, PartnerHit: -1, CopyHit: -1},
		{PairID: "f", Size: 0.15, Duplicate: false, Kind: "neg_keyword", Lang: "zh", Source: "lohelp", Bucket: "short", SizeClass: "small", Distance: 3, PartnerHit: 3, CopyHit: 3, AnyHit: true},
		{PairID: "g", Size: 0.12, Duplicate: false, Kind: "neg_keyword", Lang: "en", Source: "brown", Bucket: "short", SizeClass: "small", Distance: 5, PartnerHit: -1, CopyHit: -1, AnyHit: true},
	}
}

func TestRulesAndTally(t *testing.T) {
	os := sample()
	if got := Total(os, PartnerWithin(3)); got != (Counts{TP: 2, FN: 2, FP: 1, TN: 2}) {
		t.Errorf("k=3: %+v", got)
	}
	if got := Total(os, PartnerWithin(1)); got != (Counts{TP: 1, FN: 3, FP: 0, TN: 3}) {
		t.Errorf("k=1: %+v", got)
	}
	if got := Total(os, DistanceWithin(7)); got != (Counts{TP: 3, FN: 1, FP: 2, TN: 1}) {
		t.Errorf("distance k=7: %+v", got)
	}
	if got := Total(os, CopyWithin(3)); got != Total(os, PartnerWithin(3)) {
		t.Errorf("copy rule: %+v", got)
	}
	if got := Total(os, AnyHit); got != (Counts{TP: 2, FN: 2, FP: 2, TN: 1}) {
		t.Errorf("any hit: %+v", got)
	}
	by := Tally(os, PartnerWithin(3), func(o Outcome) string { return o.Bucket })
	if by["short"] != (Counts{TP: 1, FN: 1, FP: 1, TN: 1}) || by["long"] != (Counts{TP: 1, FN: 1, TN: 1}) {
		t.Errorf("by bucket %+v", by)
	}
	skip := Tally(os, PartnerWithin(3), func(o Outcome) string {
		if o.Lang == "zh" {
			return ""
		}
		return "en"
	})
	if len(skip) != 1 || skip["en"].N() != 4 {
		t.Errorf("key \"\" not skipped: %+v", skip)
	}
	// The index answers and the distances agree here.
	for k := 0; k <= 3; k++ {
		if d := Disagreements(os, k); len(d) != 0 {
			t.Errorf("k=%d: %d disagreements", k, len(d))
		}
	}
	bad := append(sample(), Outcome{PairID: "x", Duplicate: true, Distance: 1, PartnerHit: -1, CopyHit: -1})
	if d := Disagreements(bad, 3); len(d) != 1 || d[0].PairID != "x" {
		t.Errorf("missed disagreement: %+v", d)
	}
}

func TestOverlapRule(t *testing.T) {
	// Sizes 0.02, 0.1, 0.6, 0.3 (positives), 0.9, 0.15, 0.12 (negatives).
	if got := Total(sample(), OverlapAtLeast(0.8)); got != (Counts{TP: 2, FN: 2, FP: 2, TN: 1}) {
		t.Errorf("j=0.8: %+v", got)
	}
	if got := Total(sample(), OverlapAtLeast(0.95)); got != (Counts{TP: 1, FN: 3, TN: 3}) {
		t.Errorf("j=0.95: %+v", got)
	}
}

func TestCurve(t *testing.T) {
	os := sample()
	pts := Curve(os, 12, nil)
	if len(pts) != 13 {
		t.Fatalf("%d points", len(pts))
	}
	for i, p := range pts {
		if p.K != i || p.N() != len(os) {
			t.Errorf("point %d: %+v", i, p)
		}
		if i > 0 && (p.TP < pts[i-1].TP || p.FP < pts[i-1].FP) {
			t.Errorf("k=%d: calls went down", i)
		}
		if p != (Point{K: i, Counts: Total(os, DistanceWithin(i))}) {
			t.Errorf("k=%d: curve %+v != rule", i, p)
		}
	}
	short := Curve(os, 3, func(o Outcome) bool { return o.Bucket == "short" })
	if short[3].Counts != (Counts{TP: 1, FN: 1, FP: 1, TN: 1}) {
		t.Errorf("short curve at 3: %+v", short[3])
	}
}

func TestQuantile(t *testing.T) {
	os := sample()
	if q, n := Quantile(os, 0.5, nil); q != 3 || n != 6 {
		t.Errorf("median %d of %d", q, n)
	}
	if q, _ := Quantile(os, 1, nil); q != 30 {
		t.Errorf("max %d", q)
	}
	if q, _ := Quantile(os, 0, nil); q != 0 {
		t.Errorf("min %d", q)
	}
	if q, n := Quantile(os, 0.5, func(o Outcome) bool { return o.Kind == "none" }); q != -1 || n != 0 {
		t.Errorf("empty: %d, %d", q, n)
	}
}

func TestWriteMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	meta := Meta{Command: "scripts/eval/run.sh", Machine: "test machine", Date: "2026-01-01 00:00 UTC", Commit: "abc123",
		Recipe: "1", DefaultK: 3, CurveMax: 5, Pairs: 7, Stored: 6, Notes: []string{"A note."}, Method: "## Method\n\nHow it works.\n"}
	kinds := Kinds{
		Order:    []string{"mirror", "typos", "neg_topic", "neg_keyword"},
		Positive: func(k string) bool { return !strings.HasPrefix(k, "neg_") },
		Describe: func(k string) string { return "about " + k },
	}
	if err := WriteMarkdown(&buf, meta, sample(), kinds); err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/report.golden.md"
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("report differs from %s (go test -update to accept):\n%s", golden, buf.String())
	}
}

func TestF(t *testing.T) {
	if F(math.NaN()) != "–" || F(0.12345) != "0.123" || F(1) != "1.000" {
		t.Error("F formatting")
	}
}

func TestWriteMarkdownPeers(t *testing.T) {
	kinds := Kinds{Order: []string{"mirror"}, Positive: func(string) bool { return true }, Describe: func(string) string { return "" }}
	var plain, with bytes.Buffer
	meta := Meta{DefaultK: 3, CurveMax: 3}
	if err := WriteMarkdown(&plain, meta, sample(), kinds); err != nil {
		t.Fatal(err)
	}
	meta.Peers = []Peer{{Name: "peer: X", Counts: Counts{TP: 3, FP: 1, TN: 2, FN: 1}}}
	if err := WriteMarkdown(&with, meta, sample(), kinds); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "| detector |") {
		t.Error("summary without peers has a detector column")
	}
	for _, want := range []string{"| detector | pairs | TP | FP | TN | FN | precision | recall | F1 |", "| simdex (service answer) | 7 |", "| peer: X | 7 | 3 | 1 | 2 | 1 | 0.750 | 0.750 | 0.750 |"} {
		if !strings.Contains(with.String(), want) {
			t.Errorf("summary with a peer lacks %q", want)
		}
	}
}
