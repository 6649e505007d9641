package fingerprint

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func shareKey(a, b []uint64) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// TestTextKeys: what a sentence is, which are keyed, and which texts share
// a key (the candidates the containment stage finds).
func TestTextKeys(t *testing.T) {
	const (
		s1 = "the city council approved the new budget on monday."
		s2 = "the vote was close and the mayor thanked the members."
		s3 = "read more."
	)
	for _, tc := range []struct {
		name   string
		a, b   string
		shared bool
	}{
		{"same sentence, other neighbours", s1 + " " + s2, "breaking news from the city hall today. " + s1, true},
		{"sentence inside a longer page, on its own line", s2, "home | news | sport\n" + s1 + "\n" + s2 + "\ncopyright 2026 the daily paper.", true},
		{"numbers changed", "prices rose by 3.5 percent in 2024 across the whole region.", "prices rose by 4.1 percent in 2025 across the whole region.", true},
		{"punctuation is formatting", "\"well,\" she said, \"the decision is yours to make.\"", "well she said the decision is yours to make", true},
		{"cut inside the first sentence, after eight words", s1 + " " + s2, "the city council approved the new budget on", true},
		{"a short boilerplate sentence links nothing", s3 + " the storm closed every school in the north.", s3 + " the harvest came late after a cold and wet spring.", false},
		{"one word changed in every sentence (and in the lead)", s1 + " " + s2, strings.Replace(strings.Replace(s1+" "+s2, "council", "senate", 1), "mayor", "chair", 1), false},
		{"the lead survives a change after it", s1, strings.Replace(s1, "monday", "friday", 1), true},
		{"chinese sentence", "市政府周一批准了新的预算方案。投票结果非常接近。", "本报讯 (记者 王明)\n市政府周一批准了新的预算方案。", true},
		{"chinese short sentence not keyed", "投票结果非常接近。今天的天气很好，大家都出去玩了吧。", "投票结果非常接近。他们明天要去北京参加一个会议。", false},
		{"full-width stops end sentences", "市政府周一批准了新的预算方案！投票结果非常接近", "市政府周一批准了新的预算方案", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ka, kb := TextKeys(normalize(tc.a), MaxQueryTextKeys), TextKeys(normalize(tc.b), MaxQueryTextKeys)
			if got := shareKey(ka, kb); got != tc.shared {
				t.Errorf("share a key: %v, want %v (%d and %d keys)", got, tc.shared, len(ka), len(kb))
			}
		})
	}
}

func TestTextKeysBounds(t *testing.T) {
	if k := TextKeys("read more. share this. 阅读全文。", 10); len(k) != 0 {
		t.Errorf("light sentences: %d keys, want 0", len(k))
	}
	// One sentence lighter than the lead: one key (the sentence); as heavy:
	// the lead and the sentence.
	if k := TextKeys("the storm closed every school today.", 10); len(k) != 1 {
		t.Errorf("one sentence of six words: %d keys, want 1", len(k))
	}
	if k := TextKeys("the storm closed every school in the north.", 10); len(k) != 2 {
		t.Errorf("one sentence of eight words: %d keys, want 2", len(k))
	}
	var b strings.Builder
	b.WriteString("this is sentence number one of a long page. ")
	for i := range 50 {
		b.WriteString("word" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + " stands in a sentence of its own today. ")
	}
	for _, max := range []int{0, 1, MaxShortTextKeys, 40} {
		k := TextKeys(b.String(), max)
		if len(k) != max || len(slices.Compact(slices.Sorted(slices.Values(k)))) != len(k) {
			t.Errorf("max %d: %d keys (distinct: want all)", max, len(k))
		}
	}
	// A text's Result carries its keys after the LSH bands; a longer query
	// given only its LSH bands looks up the keys it would store
	// (DocTextKeys: lead, first and last sentences).
	bands := make(Bands, NumBands)
	got := QueryBands(bands, TextKeyChars, b.String())
	keys := DocTextKeys(b.String(), TextKeyChars)
	if len(got) != NumBands+len(keys) || len(keys) > MaxTextKeys || got.Validate() != nil || got.ValidateQuery() != nil {
		t.Errorf("long query: %d bands", len(got))
	}
	_, sents := Sentences(b.String())
	if !slices.Equal(got.TextKeys(), keys) {
		t.Errorf("long query's keys are not its DocTextKeys")
	}
	// Under the cap every sentence is keyed; over it, the first
	// LongHeadKeys and the last ones.
	for i, s := range sents {
		if !slices.Contains(keys, s.Key) {
			t.Errorf("sentence %d of %d not keyed", i, len(sents))
		}
	}
	b.Reset()
	for i := range 100 {
		b.WriteString("word" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + " stands in a sentence of its own today. ")
	}
	_, sents = Sentences(b.String())
	keys = DocTextKeys(b.String(), TextKeyChars)
	if len(keys) != MaxTextKeys || !slices.Contains(keys, sents[0].Key) || !slices.Contains(keys, sents[LongHeadKeys-1].Key) ||
		slices.Contains(keys, sents[LongHeadKeys+5].Key) || !slices.Contains(keys, sents[len(sents)-1].Key) {
		t.Errorf("100 sentences: %d keys; want the lead, the first %d and the last ones", len(keys), LongHeadKeys)
	}
	short := append(bands, 1, 2)
	if got := QueryBands(short, 50, "x"); !slices.Equal(got, short) {
		t.Errorf("short query: %v", got)
	}
	if got := QueryBands(nil, 50, "x"); got != nil {
		t.Errorf("no bands: %v", got)
	}
}

func FuzzTextKeys(f *testing.F) {
	for _, s := range []string{"", "a. b. c.", "the city council approved the new budget on monday. the vote was close.", "市政府周一批准了新的预算方案。投票结果非常接近。", "3.5.6.7 1,2,3 don't 'x' \xff\xfe", "。。。！！"} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 64
		k := TextKeys(s, n)
		if len(k) > max(n, 0) {
			t.Fatalf("%d keys > max %d", len(k), n)
		}
		if len(slices.Compact(slices.Sorted(slices.Values(k)))) != len(k) {
			t.Fatalf("duplicate keys: %v", k)
		}
		if utf8.ValidString(s) && !slices.Equal(k, TextKeys(s, n)) {
			t.Fatal("not deterministic")
		}
	})
}

// TestKeyCJKFastPath: keyCJK's fast path claims that every code point of
// U+4E00..U+9FFF is Han in the Unicode tables Go ships; a table update that
// breaks that would silently change text keys.
func TestKeyCJKFastPath(t *testing.T) {
	for r := rune(0x4E00); r <= 0x9FFF; r++ {
		if !unicode.Is(unicode.Han, r) {
			t.Fatalf("%U is in the fast path's range but not Han", r)
		}
	}
}
