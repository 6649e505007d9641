package fingerprint

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestIdenticalTextDistanceZero(t *testing.T) {
	f := testFP(t)
	for _, td := range loadTexts(t) {
		a := mustFP(t, f, td.doc)
		// A fresh copy of the strings, so nothing can depend on identity.
		b := mustFP(t, f, Document{Title: strings.Clone(td.doc.Title), Body: strings.Clone(td.doc.Body)})
		if Distance(a.Simhash, b.Simhash) != 0 || a.ExactHash != b.ExactHash || a.TitleSimhash != b.TitleSimhash {
			t.Errorf("%s: identical text fingerprints differently: %+v vs %+v", td.name, a, b)
		}
	}
}

var digitsRE = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// Edits that touch only stop words, numbers and punctuation must not move a
// single bit: those are filtered before features exist.
func TestStopWordNumberPunctuationEditsDistanceZero(t *testing.T) {
	f := testFP(t)
	edits := []struct {
		name string
		fn   func(string) string
	}{
		{"numbers", func(s string) string {
			return digitsRE.ReplaceAllStringFunc(s, func(n string) string { return fmt.Sprint(len(n)*7 + 3) })
		}},
		{"punctuation", strings.NewReplacer("，", "、", "。", "！", ". ", "; ", ", ", " - ", "“", "「", "”", "」").Replace},
		{"en stop words", strings.NewReplacer(" the ", " this ", " a ", " the ", " and ", " or ", " will ", " would ").Replace},
		// Chinese stop-word edits are chosen so they do not change how gse
		// segments the neighbouring characters: "空调和座椅" with 和 -> 与
		// becomes 空调/与/座椅 instead of 空/调和/座椅 and rightly moves bits.
		{"zh stop words", strings.NewReplacer("的", "之", "也", "亦", "已经", "早已").Replace},
		{"markup and spacing", func(s string) string {
			return "<div>" + strings.ReplaceAll(strings.ReplaceAll(s, "\n\n", "</div>\n\n<div>"), " ", "  ") + "</div>"
		}},
	}
	for _, td := range loadTexts(t) {
		base := mustFP(t, f, td.doc)
		for _, e := range edits {
			d := td.doc
			d.Body = e.fn(d.Body)
			if d.Body == td.doc.Body {
				continue
			}
			r := mustFP(t, f, d)
			if dist := Distance(base.Simhash, r.Simhash); dist != 0 {
				c, _ := f.Compare(td.doc, d, 5)
				t.Errorf("%s / %s: distance %d, want 0; differing features %v", td.name, e.name, dist, c.Differences)
			}
		}
	}
}

// sentences splits a body into sentences, keeping the terminators.
func sentences(body string) []string {
	var out []string
	start := 0
	for i, r := range body {
		if r == '。' || r == '！' || r == '？' || (r == '.' && i+1 < len(body) && (body[i+1] == ' ' || body[i+1] == '\n')) {
			end := i + len(string(r))
			out = append(out, body[start:end])
			start = end
		}
	}
	if start < len(body) {
		out = append(out, body[start:])
	}
	return out
}

// oneSentenceEditMax is the largest distance a one-sentence replacement in
// an article of 750-1,650 characters may cause. Observed with recipe 1 over
// 77 sentences of the 7 long test articles: distance 1-16, median 7, mean
// 7.1, 90th percentile 11 (see this test's log line). That is what simhash
// theory predicts: replacing ~7% of an article's weight moves ~7 of 64 bits.
const oneSentenceEditMax = 20

func TestOneSentenceEditSmallDistance(t *testing.T) {
	f := testFP(t)
	texts := longTexts(t)
	var dists []int
	for i, td := range texts {
		base := mustFP(t, f, td.doc)
		ss := sentences(td.doc.Body)
		// The replacement sentence comes from an unrelated article in the
		// same language.
		donor := sentences(texts[(i+3)%len(texts)].doc.Body)
		for k, s := range ss {
			if len([]rune(strings.TrimSpace(s))) < 15 {
				continue
			}
			repl := donor[k%len(donor)]
			d := td.doc
			d.Body = strings.Replace(d.Body, s, strings.TrimLeft(repl, "\n "), 1)
			r := mustFP(t, f, d)
			dist := Distance(base.Simhash, r.Simhash)
			dists = append(dists, dist)
			if dist > oneSentenceEditMax {
				t.Errorf("%s sentence %d (%d chars of %d): distance %d > %d", td.name, k, len([]rune(s)), len([]rune(td.doc.Body)), dist, oneSentenceEditMax)
			}
		}
	}
	slices.Sort(dists)
	sum := 0
	for _, d := range dists {
		sum += d
	}
	t.Logf("one-sentence edits: %d edits, distance min %d, median %d, mean %.1f, max %d", len(dists), dists[0], dists[len(dists)/2], float64(sum)/float64(len(dists)), dists[len(dists)-1])
}

// corpus generates n varied documents from large word lists: Chinese words
// from the jieba IDF table, English-like words from syllables. Seeded, so
// every run sees the same corpus.
func corpus(t *testing.T, f *Fingerprinter, n int) []Result {
	t.Helper()
	zh := make([]string, 0, len(f.words))
	for w, v := range f.words {
		if v != stopWord && len([]rune(w)) >= 2 {
			zh = append(zh, w)
		}
	}
	slices.Sort(zh)
	onsets := []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "st", "pl", "gr"}
	vowels := []string{"a", "e", "i", "o", "u", "ai", "ou", "ea"}
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]Result, 0, n)
	for i := 0; len(out) < n; i++ {
		var b strings.Builder
		words := 30 + rng.IntN(60)
		for range words {
			if i%2 == 0 {
				b.WriteString(zh[rng.IntN(len(zh))])
				b.WriteString("，")
			} else {
				for range 2 + rng.IntN(2) {
					b.WriteString(onsets[rng.IntN(len(onsets))])
					b.WriteString(vowels[rng.IntN(len(vowels))])
				}
				b.WriteString(" ")
			}
		}
		r, err := f.Fingerprint(Document{Body: b.String()})
		if err != nil {
			continue // a rare all-filtered draw
		}
		out = append(out, r)
	}
	return out
}

func TestUnrelatedArticlesAbout32(t *testing.T) {
	f := testFP(t)
	var real []Result
	for _, td := range longTexts(t) {
		real = append(real, mustFP(t, f, td.doc))
	}
	mean := func(rs []Result) (float64, int) {
		sum, n := 0, 0
		for i := range rs {
			for j := i + 1; j < len(rs); j++ {
				sum += Distance(rs[i].Simhash, rs[j].Simhash)
				n++
			}
		}
		return float64(sum) / float64(n), n
	}
	m, n := mean(real)
	t.Logf("unrelated test articles: mean distance %.1f over %d pairs", m, n)
	if m < 26 || m > 38 {
		t.Errorf("unrelated test articles: mean distance %.1f, want about 32 (26-38 for %d pairs)", m, n)
	}
	gen := corpus(t, f, 300)
	m, n = mean(gen)
	t.Logf("generated corpus: mean distance %.2f over %d pairs", m, n)
	if m < 31 || m > 33 {
		t.Errorf("generated corpus: mean distance %.2f, want 31-33 over %d pairs", m, n)
	}
}

func TestBitBalance(t *testing.T) {
	f := testFP(t)
	rs := corpus(t, f, 1000)
	lo, hi := 1.0, 0.0
	for b := range 64 {
		set := 0
		for _, r := range rs {
			if uint64(r.Simhash)&(1<<b) != 0 {
				set++
			}
		}
		frac := float64(set) / float64(len(rs))
		lo, hi = min(lo, frac), max(hi, frac)
		if frac < 0.40 || frac > 0.60 {
			t.Errorf("bit %d set in %.1f%% of %d fingerprints, want 40-60%%", b, 100*frac, len(rs))
		}
	}
	t.Logf("bits set in %.1f%%-%.1f%% of %d fingerprints", 100*lo, 100*hi, len(rs))
}
