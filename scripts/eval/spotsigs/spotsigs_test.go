package spotsigs

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

var (
	extOnce sync.Once
	ext     *Extractor
	extErr  error
)

// extractor loads gse once for the package's tests.
func extractor(t *testing.T, cfg Config) *Extractor {
	t.Helper()
	extOnce.Do(func() { ext, extErr = New(DefaultConfig()) })
	if extErr != nil {
		t.Fatal(extErr)
	}
	e, err := ext.WithConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSpotsEnglish(t *testing.T) {
	// The paper's example: antecedent "a", spot distance 1, chain 2, stop
	// words skipped.
	paper := Config{Distance: 1, Chain: 2, Antecedents: []string{"a"}, Stop: []string{"to", "off", "for", "the"}}
	def := DefaultConfig()
	for _, tc := range []struct {
		cfg  Config
		text string
		want []string
	}{
		{paper, "At a rally to kick off a weeklong campaign for the South Carolina primary", []string{"a:rally:kick", "a:weeklong:campaign"}},
		// Distance 2, chain 3: every second content word after the
		// antecedent ("is", "over", "the", "that", "in" are stop words).
		{def, "The quick brown fox is jumping over the lazy dog that was sleeping in the sun near the old barn.",
			[]string{"the:brown:jumping:dog", "is:lazy:sleeping:near", "the:dog:sun:old", "was:sun:old", "the:near:barn", "the:barn"}},
		// NFKC and lower case; punctuation separates words; an antecedent
		// at the end gives nothing.
		{def, "ＴＨＥ Ｆｕｌｌ-width text, said the", []string{"the:width"}},
		{def, "", nil},
		// Markup removed: tags separate words, script and style
		// contents are dropped, entities decoded.
		{def, "<p>The <b>cat</b> was on the mat &amp; <i>the</i> dog</p><script>var the = a.b;</script><style>a{}</style>",
			[]string{"the:mat", "was:dog", "the:dog"}},
		{def, "no antecedent here at all", nil},
	} {
		if got := extractor(t, tc.cfg).Spots(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Spots(%q) with d=%d c=%d = %q, want %q", tc.text, tc.cfg.Distance, tc.cfg.Chain, got, tc.want)
		}
	}
}

func TestSpotsChinese(t *testing.T) {
	d1 := Config{Distance: 1, Chain: 2, Antecedents: ChineseAntecedents, Stop: ChineseStop}
	plain := d1
	plain.Plain = true
	for _, tc := range []struct {
		cfg  Config
		text string
		toks []string
		want []string
	}{
		// gse words; 上 is a stop word, skipped in chains.
		{d1, "在工具栏上单击的按钮是用来插入表格的。",
			[]string{"在", "工具栏", "上", "单击", "的", "按钮", "是", "用来", "插入", "表格", "的"},
			[]string{"在:工具栏:单击", "的:按钮:用来", "是:用来:插入"}},
		// Traditional characters are folded to simplified ones first.
		{d1, "這個對話框將關閉並且保存所有的更改。",
			[]string{"这个", "对话框", "将", "关闭", "并且", "保存", "所有", "的", "更改"},
			[]string{"将:关闭:保存", "的:更改"}},
		// Plain: no folding; gse's traditional dictionary segments them.
		{plain, "這個對話框將關閉並且保存所有的更改。",
			[]string{"這個", "對話框", "將", "關閉", "並且", "保存", "所有", "的", "更改"},
			[]string{"的:更改"}},
		// Mixed text: Latin words between Han runs.
		{DefaultConfig(), "单击 OK 按钮的时候，对话框将关闭并且保存所有的更改。",
			nil, []string{"的:对话框:保存:更改", "将:保存:更改"}},
	} {
		e := extractor(t, tc.cfg)
		if tc.toks != nil {
			if got := e.Tokens(tc.text); !slices.Equal(got, tc.toks) {
				t.Errorf("Tokens(%q) = %q, want %q", tc.text, got, tc.toks)
			}
		}
		if got := e.Spots(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Spots(%q) = %q, want %q (tokens %q)", tc.text, got, tc.want, e.Tokens(tc.text))
		}
	}
}

func TestSignatureAndJaccard(t *testing.T) {
	e := extractor(t, Config{Distance: 1, Chain: 1, Antecedents: EnglishAntecedents, Stop: EnglishStop})
	const text = "The cat was on the mat and the dog was in the yard, the cat was on the mat."
	a := e.Signature(text)
	if !slices.IsSorted(a) || len(slices.Compact(slices.Clone(a))) != len(a) {
		t.Fatalf("Signature not a sorted set: %v", a)
	}
	if n := len(e.Spots(text)); len(a) != 6 || n != 9 {
		t.Errorf("%d signatures of %d spots %q, want 6 of 9 (the:cat, was:mat and the:mat twice)", len(a), n, e.Spots(text))
	}
	for _, tc := range []struct {
		a, b Set
		want float64
	}{
		{Set{1, 2, 3}, Set{2, 3, 4}, 0.5},
		{Set{1, 2, 3}, Set{1, 2, 3}, 1},
		{Set{1}, Set{2}, 0},
		{nil, nil, 0},
		{Set{1, 2, 3, 4}, Set{4}, 0.25},
		{NewSet([]uint64{5, 1, 5, 3}), Set{1, 3, 5, 7, 9}, 0.6},
	} {
		if got := Jaccard(tc.a, tc.b); got != tc.want {
			t.Errorf("Jaccard(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := Jaccard(tc.b, tc.a); got != tc.want {
			t.Errorf("Jaccard(%v, %v) = %v, want %v (not symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestSearchMatchesBruteForce builds a fake corpus of families of
// overlapping sets (near copies, excerpts, shared furniture, unrelated sets,
// sizes from 1 to 300) and checks that Search returns exactly the sets a
// brute-force comparison puts at or above tau, at several tau.
func TestSearchMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	furniture := make(Set, 40)
	for i := range furniture {
		furniture[i] = uint64(1_000_000 + i)
	}
	var sets []Set
	next := uint64(1)
	fresh := func(n int) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = next
			next++
		}
		return out
	}
	for range 120 {
		base := fresh(1 + rng.IntN(150))
		sets = append(sets, NewSet(slices.Clone(base)))
		for range rng.IntN(5) {
			v := slices.Clone(base)
			// drop some, add some, maybe add furniture
			rng.Shuffle(len(v), func(i, j int) { v[i], v[j] = v[j], v[i] })
			v = v[:len(v)-rng.IntN(len(v)/2+1)]
			v = append(v, fresh(rng.IntN(len(base)/2+1))...)
			if rng.IntN(3) == 0 {
				v = append(v, furniture[:rng.IntN(len(furniture))]...)
			}
			sets = append(sets, NewSet(v))
		}
	}
	sets = append(sets, nil, Set{furniture[0]}, NewSet(slices.Clone(furniture)))
	ix := NewIndex(sets)
	queries := append(slices.Clone(sets), NewSet(fresh(10)), NewSet(append(fresh(3), furniture[:5]...)))
	total := 0
	for _, tau := range []float64{0.1, 0.3, 0.44, 0.6, 0.9, 1} {
		for qi, q := range queries {
			got := ix.Search(q, tau)
			want := BruteForce(sets, q, tau)
			if !slices.Equal(got, want) {
				t.Fatalf("tau %v query %d (size %d): Search %v, brute force %v", tau, qi, len(q), got, want)
			}
			for _, m := range got {
				if m.Jaccard < tau {
					t.Fatalf("tau %v: match %v below tau", tau, m)
				}
			}
			total += len(got)
		}
	}
	if total < 1000 {
		t.Errorf("only %d matches over all queries: the fake corpus does not exercise the search", total)
	}
}

func TestSizeWindow(t *testing.T) {
	for _, tc := range []struct {
		n      int
		tau    float64
		lo, hi int
	}{
		{10, 0.5, 5, 20},
		{10, 0.44, 5, 22},
		{3, 0.3, 1, 10},
		{7, 1, 7, 7},
	} {
		if lo, hi := SizeWindow(tc.n, tc.tau); lo != tc.lo || hi != tc.hi {
			t.Errorf("SizeWindow(%d, %v) = %d, %d, want %d, %d", tc.n, tc.tau, lo, hi, tc.lo, tc.hi)
		}
	}
	// The window never drops a set that can reach tau.
	for n := 1; n < 60; n++ {
		for m := 1; m < 200; m++ {
			for _, tau := range []float64{0.3, 0.44, 0.6} {
				if float64(min(n, m))/float64(max(n, m)) >= tau {
					if lo, hi := SizeWindow(n, tau); m < lo || m > hi {
						t.Fatalf("SizeWindow(%d, %v) = [%d, %d] drops size %d", n, tau, lo, hi, m)
					}
				}
			}
		}
	}
}
