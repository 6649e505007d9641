package pairs

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/simdex/simdex/scripts/eval/corpus"
	"github.com/simdex/simdex/scripts/eval/textutil"
)

var (
	wordsEN = strings.Fields("council river market budget school police winter harvest railway museum teacher senate tariff " +
		"bridge hospital engine garden letter province treaty vessel factory library courtyard election weather " +
		"orchestra highway village soldier merchant")
	wordsZH = []string{"设置", "选择", "文档", "显示", "单击", "窗口", "表格", "数据", "图表", "页面", "幻灯片", "工具栏",
		"对话框", "菜单", "格式", "单元格", "字体", "打印", "保存", "模板", "样式", "链接", "区域", "函数"}
)

// synthCorpus makes a small corpus of made-up documents: two sources, two
// topics each, both languages, all three length buckets.
func synthCorpus(n int) []corpus.Doc {
	r := rand.New(rand.NewPCG(7, 7))
	sentence := func(lang string) string {
		k := 5 + r.IntN(8)
		var ws []string
		for range k {
			if lang == "zh" {
				ws = append(ws, wordsZH[r.IntN(len(wordsZH))])
			} else {
				ws = append(ws, wordsEN[r.IntN(len(wordsEN))])
			}
		}
		if lang == "zh" {
			return strings.Join(ws, "的") + "。"
		}
		s := strings.Join(ws, " ")
		return strings.ToUpper(s[:1]) + s[1:] + fmt.Sprintf(" in %d.", 1900+r.IntN(100))
	}
	var docs []corpus.Doc
	for i := range n {
		lang := []string{"en", "zh"}[i%2]
		src := []string{"alpha", "beta"}[(i/2)%2]
		target := []int{120, 350, 1200}[(i/4)%3]
		var paras []string
		var cur []string
		total := 0
		for total < target {
			s := sentence(lang)
			cur = append(cur, s)
			total += len([]rune(s))
			if len(cur) == 3 {
				paras = append(paras, textutil.Join(lang, cur))
				cur = nil
			}
		}
		if len(cur) > 0 {
			paras = append(paras, textutil.Join(lang, cur))
		}
		docs = append(docs, corpus.Doc{
			ID: fmt.Sprintf("%s:%03d", src, i), Source: src, Lang: lang, Topic: fmt.Sprintf("topic%d", i%3),
			Title: fmt.Sprintf("Title %d %s", i, wordsEN[i%len(wordsEN)]), Body: strings.Join(paras, "\n\n"),
		})
	}
	return docs
}

func generate(t *testing.T, docs []corpus.Doc, cfg Config) []Pair {
	t.Helper()
	ps, err := Generate(docs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func TestGenerateDeterministic(t *testing.T) {
	docs := synthCorpus(120)
	cfg := DefaultConfig()
	a := generate(t, docs, cfg)
	// Input order does not matter either.
	rev := slices.Clone(docs)
	slices.Reverse(rev)
	b := generate(t, rev, cfg)
	if !slices.EqualFunc(a, b, func(x, y Pair) bool { return x == y }) {
		t.Fatal("same corpus and config gave different pairs")
	}
	cfg.Seed = 2
	c := generate(t, docs, cfg)
	if slices.EqualFunc(a, c, func(x, y Pair) bool { return x == y }) {
		t.Fatal("another seed gave the same pairs")
	}
}

func TestGeneratePairs(t *testing.T) {
	docs := synthCorpus(240)
	byID := map[string]corpus.Doc{}
	for _, d := range docs {
		byID[d.ID] = d
	}
	ps := generate(t, docs, DefaultConfig())
	kinds := map[string]int{}
	origIDs := map[string]bool{}
	for _, p := range ps {
		origIDs[strings.SplitN(p.Original.ID, "@", 2)[0]] = true
	}
	for _, p := range ps {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		kinds[p.Kind]++
		base := strings.SplitN(p.Original.ID, "@", 2)[0]
		if base != p.Doc {
			t.Errorf("%s: doc %q, original %q", p.ID, p.Doc, p.Original.ID)
		}
		d, ok := byID[base]
		if !ok {
			t.Fatalf("%s: original %s is no corpus document", p.ID, p.Original.ID)
		}
		if p.Lang != d.Lang || p.Bucket != d.Bucket() || p.Source != d.Source {
			t.Errorf("%s: labels %s/%s/%s, document is %s/%s/%s", p.ID, p.Lang, p.Bucket, p.Source, d.Lang, d.Bucket(), d.Source)
		}
		if p.Original == (Text{ID: p.Original.ID, Title: p.Query.Title, Body: p.Query.Body}) {
			t.Errorf("%s: query equals original", p.ID)
		}
		if !strings.Contains(p.Original.Body, d.Body) {
			t.Errorf("%s: original does not contain the document's body", p.ID)
		}
		q := p.Query.Body
		switch p.Kind {
		case "mirror":
			if !strings.Contains(q, d.Body) || q == d.Body {
				t.Errorf("mirror: body not wrapped unchanged: %q", q)
			}
		case "html":
			if !strings.HasPrefix(q, "<!DOCTYPE html>") || !strings.Contains(q, "<article>") {
				t.Errorf("html: not a page: %.200q", q)
			}
			for _, para := range strings.Split(d.Body, "\n") {
				esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(strings.TrimSpace(para))
				if esc != "" && !strings.Contains(q, "<p>"+esc+"</p>") {
					t.Errorf("html: paragraph %q not in the page", para)
				}
			}
		case "ads":
			blocks := slices.Concat(adsEN, adsZH, relatedEN, relatedZH)
			found := false
			for _, l := range strings.Split(q, "\n") {
				found = found || slices.Contains(blocks, l)
			}
			if !found {
				t.Errorf("ads: no block inserted: %q", q)
			}
		case "numbers":
			if textutil.Overlap(q, d.Body) > 0.95 && strings.ContainsAny(d.Body, "0123456789") && q == d.Body {
				t.Errorf("numbers: unchanged")
			}
		case "sentence_drop", "truncate":
			if len([]rune(q)) >= len([]rune(d.Body))+len("……阅读全文 … Read more") {
				t.Errorf("%s: query not shorter: %d vs %d", p.Kind, len(q), len(d.Body))
			}
		case "sentence_add":
			if len(q) <= len(d.Body) {
				t.Errorf("sentence_add: query not longer")
			}
		case "trad":
			if p.Lang != "zh" || q == d.Body {
				t.Errorf("trad: %s doc, changed=%v", p.Lang, q != d.Body)
			}
		case "width":
			if !strings.ContainsFunc(q, func(r rune) bool { return r >= 0xFF01 && r <= 0xFF5E }) {
				t.Errorf("width: no full-width characters")
			}
		case "title":
			if q != d.Body || p.Query.Title == d.Title {
				t.Errorf("title: body changed or title not")
			}
		case "neg_topic", "neg_template", "neg_boilerplate":
			other := strings.SplitN(strings.TrimPrefix(p.Detail, "other="), ",", 2)[0]
			o, ok := byID[other]
			if !ok || o.ID == d.ID || o.Source != d.Source {
				t.Errorf("%s: partner %q not another document of source %s", p.ID, other, d.Source)
			}
			if p.Kind == "neg_topic" && o.Topic != d.Topic {
				t.Errorf("neg_topic: topics %s and %s", o.Topic, d.Topic)
			}
			// A negative's query is never stored, so it cannot hit itself.
			if origIDs[o.ID] {
				t.Errorf("%s: query document %s is also stored as an original", p.ID, o.ID)
			}
			if !strings.Contains(q, o.Body) {
				t.Errorf("%s: query does not contain the other document", p.ID)
			}
		case "neg_keyword":
			if d.Bucket() != corpus.Short {
				t.Errorf("neg_keyword on a %s document", d.Bucket())
			}
			if wordDiff(p.Lang, d.Body, q) != 1 {
				t.Errorf("neg_keyword: %q vs %q differ in %d words", d.Body, q, wordDiff(p.Lang, d.Body, q))
			}
		}
	}
	for _, k := range Kinds() {
		if kinds[k] == 0 {
			t.Errorf("no %s pairs", k)
		}
	}
}

// wordDiff counts positions where the word sequences of a and b differ
// (Latin words; for Chinese, characters, so one replaced two-character
// word counts as 1 when it replaces one or two characters).
func wordDiff(lang, a, b string) int {
	if lang == "zh" {
		ra, rb := []rune(a), []rune(b)
		if len(ra) != len(rb) {
			return -1
		}
		first, last := -1, -1
		for i := range ra {
			if ra[i] != rb[i] {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		if first < 0 {
			return 0
		}
		if last-first <= 1 {
			return 1
		}
		return 2
	}
	wa, wb := strings.Fields(a), strings.Fields(b)
	if len(wa) != len(wb) {
		return -1
	}
	n := 0
	for i := range wa {
		if wa[i] != wb[i] {
			n++
		}
	}
	return n
}

func TestGenerateSplitAndKinds(t *testing.T) {
	docs := synthCorpus(240)
	cfg := DefaultConfig()
	cfg.Split = "dev"
	dev := generate(t, docs, cfg)
	cfg.Split = "test"
	test := generate(t, docs, cfg)
	docsOf := func(ps []Pair) map[string]bool {
		m := map[string]bool{}
		for _, p := range ps {
			m[strings.SplitN(p.Original.ID, "@", 2)[0]] = true
			if o, ok := strings.CutPrefix(p.Detail, "other="); ok {
				m[strings.SplitN(o, ",", 2)[0]] = true
			}
		}
		return m
	}
	dd, td := docsOf(dev), docsOf(test)
	if len(dd) == 0 || len(td) == 0 {
		t.Fatalf("dev %d docs, test %d docs", len(dd), len(td))
	}
	for id := range dd {
		if td[id] {
			t.Errorf("document %s in both dev and test pairs", id)
		}
	}
	cfg = DefaultConfig()
	cfg.Kinds = []string{"typos", "neg_topic"}
	for _, p := range generate(t, docs, cfg) {
		if p.Kind != "typos" && p.Kind != "neg_topic" {
			t.Errorf("kind %s made with Kinds=%v", p.Kind, cfg.Kinds)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
	}{
		{"split", func(c *Config) { c.Split = "train" }},
		{"per cell", func(c *Config) { c.PerCell = 0 }},
		{"no pairs", func(c *Config) { c.Positives, c.Negatives = 0, 0 }},
		{"negative count", func(c *Config) { c.Positives = -1 }},
		{"templates", func(c *Config) { c.Templates = 1 }},
		{"unknown kind", func(c *Config) { c.Kinds = []string{"typo"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.edit(&cfg)
			if err := cfg.Validate(); !errors.Is(err, ErrBadConfig) {
				t.Errorf("Validate = %v, want ErrBadConfig", err)
			}
			if _, err := Generate(synthCorpus(4), cfg); !errors.Is(err, ErrBadConfig) {
				t.Errorf("Generate = %v, want ErrBadConfig", err)
			}
		})
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
}

func TestEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	if s, n := changeNumbers(r, "In 1999 there were 42 ships and 7 carts."); n != 3 || s == "In 1999 there were 42 ships and 7 carts." || len(s) != len("In 1999 there were 42 ships and 7 carts.") {
		t.Errorf("changeNumbers: %q, %d", s, n)
	}
	if s, n := toTraditional("这个设置显示文档"); s != "這個設置顯示文檔" || n != 5 {
		t.Errorf("toTraditional: %q, %d", s, n)
	}
	if s, n := toFullWidth("ab 1!", func() bool { return true }); s != "ａｂ １！" || n != 4 {
		t.Errorf("toFullWidth: %q, %d", s, n)
	}
	if s, n := synonymize(newVocab("all"), "en", "They said the city is big."); s != "They stated the town is large." || n != 3 {
		t.Errorf("synonymize en: %q, %d", s, n)
	}
	if s, n := synonymize(newVocab("all"), "zh", "如果需要，单击按钮。"); s != "假如需，点击按钮。" || n != 3 {
		t.Errorf("synonymize zh: %q, %d", s, n)
	}
	// dev and test vocabularies are disjoint halves.
	dev, test := newVocab("dev"), newVocab("test")
	for _, lang := range []string{"en", "zh"} {
		for name, lists := range map[string][2][]string{
			"site": {dev.site[lang], test.site[lang]}, "nav": {dev.nav[lang], test.nav[lang]}, "foot": {dev.foot[lang], test.foot[lang]},
			"ads": {dev.ads[lang], test.ads[lang]}, "related": {dev.related[lang], test.related[lang]},
		} {
			if len(lists[0]) == 0 || len(lists[1]) == 0 {
				t.Errorf("%s %s: empty half", lang, name)
			}
			for _, x := range lists[0] {
				if slices.Contains(lists[1], x) {
					t.Errorf("%s %s: %q in both halves", lang, name, x)
				}
			}
		}
		for k := range dev.synonyms[lang] {
			if _, ok := test.synonyms[lang][k]; ok {
				t.Errorf("synonym %q in both halves", k)
			}
		}
	}
	// Every traditional form differs from its simplified one.
	for s, tr := range s2t {
		if s == tr || !unicode.Is(unicode.Han, s) || !unicode.Is(unicode.Han, tr) {
			t.Errorf("bad pair %c %c", s, tr)
		}
	}
}

func TestReadWrite(t *testing.T) {
	ps := generate(t, synthCorpus(60), DefaultConfig())
	var buf bytes.Buffer
	if err := Write(&buf, ps); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, ps, func(a, b Pair) bool { return a == b }) {
		t.Error("round trip changed the pairs")
	}
}

const goodLine = `{"id":"p","duplicate":true,"kind":"typos","size":0.1,"lang":"en","source":"s","bucket":"short","doc":"d","original":{"id":"o","body":"x"},"query":{"id":"q","body":"y"}}`

func TestReadBad(t *testing.T) {
	tests := []struct{ name, in string }{
		{"not json", "{"},
		{"unknown kind", strings.Replace(goodLine, `"typos"`, `"typo"`, 1)},
		{"label contradicts kind", strings.Replace(goodLine, `"duplicate":true`, `"duplicate":false`, 1)},
		{"bad bucket", strings.Replace(goodLine, `"short"`, `"tiny"`, 1)},
		{"bad lang", strings.Replace(goodLine, `"en"`, `"de"`, 1)},
		{"size out of range", strings.Replace(goodLine, `0.1`, `1.5`, 1)},
		{"empty original id", strings.Replace(goodLine, `"id":"o"`, `"id":""`, 1)},
		{"empty doc", strings.Replace(goodLine, `"doc":"d"`, `"doc":""`, 1)},
		{"empty query", strings.Replace(goodLine, `"body":"y"`, `"body":" "`, 1)},
		{"duplicate pair id", goodLine + "\n" + goodLine},
		{"original text differs", goodLine + "\n" + strings.Replace(strings.Replace(goodLine, `"id":"p"`, `"id":"p2"`, 1), `"body":"x"`, `"body":"z"`, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Read(strings.NewReader(tt.in)); !errors.Is(err, ErrBadPair) {
				t.Errorf("Read = %v, want ErrBadPair", err)
			}
		})
	}
	if ps, err := Read(strings.NewReader(goodLine + "\n\n")); err != nil || len(ps) != 1 {
		t.Errorf("good line: %v, %d pairs", err, len(ps))
	}
}

func FuzzRead(f *testing.F) {
	f.Add(goodLine)
	f.Add(goodLine + "\n" + goodLine)
	f.Add(`{"id":"p","kind":"neg_topic","lang":"zh","bucket":"long","doc":"d","original":{"id":"o","body":"正文"},"query":{"body":"别的"}}`)
	f.Add("{\"id\":\"\xff\"}")
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := Read(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrBadPair) {
				t.Fatalf("error not ErrBadPair: %v", err)
			}
			return
		}
		for _, p := range ps {
			if err := p.Validate(); err != nil {
				t.Fatalf("Read returned an invalid pair: %v", err)
			}
		}
	})
}

func BenchmarkGenerate(b *testing.B) {
	docs := synthCorpus(240)
	cfg := DefaultConfig()
	n := 0
	for b.Loop() {
		ps, err := Generate(docs, cfg)
		if err != nil {
			b.Fatal(err)
		}
		n += len(ps)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "pairs/s")
}
