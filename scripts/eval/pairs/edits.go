package pairs

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"

	"github.com/simdex/simdex/scripts/eval/corpus"
	"github.com/simdex/simdex/scripts/eval/textutil"
)

// kindSpec is one pair kind: how to make a pair of it from a document.
type kindSpec struct {
	name     string
	positive bool
	doc      string
	applies  func(d corpus.Doc) bool // nil: every document
	make     func(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool)
}

// kinds is every pair kind, positives first.
var kinds = []kindSpec{
	{name: "mirror", positive: true, doc: "same title and body inside another site's header, navigation and footer (the original bare or in a third site's)", make: mkMirror},
	{name: "html", positive: true, doc: "the page as served: HTML with navigation, script, style, a related-links aside and footer around the article", make: mkHTML},
	{name: "ads", positive: true, doc: "1-3 advertisement or \"related articles\" blocks (titles of other documents) inserted between paragraphs", make: mkAds},
	{name: "numbers", positive: true, doc: "every number changed and a dateline with a date, time and view counter added", make: mkNumbers},
	{name: "sentence_add", positive: true, doc: "one sentence of another document inserted (at most a third of the original's length, or 40 characters)", make: mkSentenceAdd},
	{name: "sentence_drop", positive: true, doc: "one sentence dropped (of at least 3, and at most a third of the text)", applies: func(d corpus.Doc) bool { return len(sentencesOf(d)) >= 3 }, make: mkSentenceDrop},
	{name: "reword", positive: true, doc: "one sentence reworded: words replaced by synonyms, or its clauses swapped", make: mkReword},
	{name: "typos", positive: true, doc: "1-6 typos (letters swapped, dropped, doubled or replaced; a Han character replaced)", make: mkTypos},
	{name: "punct", positive: true, doc: "punctuation restyled (quotes, dashes, full/half-width Chinese punctuation) or a few marks changed", make: mkPunct},
	{name: "width", positive: true, doc: "ASCII letters, digits and punctuation turned full-width (all of a Chinese page, some lines of an English one)", applies: func(d corpus.Doc) bool { return strings.ContainsFunc(d.Body, isASCIIAlnum) }, make: mkWidth},
	{name: "trad", positive: true, doc: "Chinese converted from simplified to traditional characters", applies: func(d corpus.Doc) bool { _, n := toTraditional(d.Body); return d.Lang == "zh" && n > 0 }, make: mkTrad},
	{name: "title", positive: true, doc: "title rewritten: site prefix/suffix, another document's title, or none; body unchanged", make: mkTitle},
	{name: "truncate", positive: true, doc: "only the first 50-90% kept (whole sentences), with a \"read more\" link", applies: func(d corpus.Doc) bool { return len(sentencesOf(d)) >= 2 }, make: mkTruncate},
	{name: "combo", positive: true, doc: "mirror + numbers + typos together, as a scraper's copy", make: mkCombo},
	{name: "neg_topic", positive: false, doc: "a different document of the same source and topic (help module, Brown category, SOTU speaker), the most similar of 25 drawn", make: mkNegTopic},
	{name: "neg_template", positive: false, doc: "two different documents of the same source inside the same site template", make: mkNegTemplate},
	{name: "neg_boilerplate", positive: false, doc: "two different documents of the same source sharing template, ad and \"related articles\" boilerplate", make: mkNegBoilerplate},
	{name: "neg_keyword", positive: false, doc: "a short text (no mail or site furniture) and a copy with one key word replaced by another (a different fact)", applies: func(d corpus.Doc) bool { return d.Bucket() == corpus.Short && d.ContentChars == 0 }, make: mkNegKeyword},
}

// body is a document body as lines of sentences; empty lines are kept so
// join restores paragraph breaks.
type body struct {
	lang  string
	lines [][]string
}

func parse(lang, text string) *body {
	b := &body{lang: lang}
	for _, l := range strings.Split(text, "\n") {
		b.lines = append(b.lines, textutil.Sentences(l))
	}
	return b
}

func (b *body) join() string {
	ls := make([]string, len(b.lines))
	for i, l := range b.lines {
		ls[i] = textutil.Join(b.lang, l)
	}
	return strings.Join(ls, "\n")
}

// where lists (line, sentence) positions of every sentence.
func (b *body) where() [][2]int {
	var w [][2]int
	for i, l := range b.lines {
		for j := range l {
			w = append(w, [2]int{i, j})
		}
	}
	return w
}

func sentencesOf(d corpus.Doc) [][2]int { return parse(d.Lang, d.Body).where() }

func edited(d corpus.Doc, title, text, detail string) (Pair, bool) {
	return Pair{Original: raw(d), Query: Text{ID: d.ID + "~q", Title: title, Body: text}, Detail: detail}, true
}

func mkMirror(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	t := g.template(r, d.Lang, "")
	p, _ := edited(d, d.Title, t.wrap(d.Title, d.Body), "template="+t.id)
	if r.IntN(2) == 0 {
		o := g.template(r, d.Lang, t.id)
		p.Original = Text{ID: d.ID + "@" + o.id, Title: d.Title, Body: o.wrap(d.Title, d.Body)}
		p.Detail += ",original=" + o.id
	}
	return p, true
}

func mkHTML(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	t := g.template(r, d.Lang, "")
	var related []string
	for range 3 + r.IntN(4) {
		related = append(related, g.donor(r, d).Title)
	}
	return edited(d, d.Title, t.html(r, d.Lang, d.Title, d.Body, related), fmt.Sprintf("template=%s,related=%d", t.id, len(related)))
}

func mkAds(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	b := parse(d.Lang, d.Body)
	n := 1 + r.IntN(3)
	var kinds []string
	for range n {
		var block string
		if r.IntN(2) == 0 {
			block, kinds = adBlock(r, g.vocab, d.Lang), append(kinds, "ad")
		} else {
			var titles []string
			for range 3 + r.IntN(4) {
				titles = append(titles, g.donor(r, d).Title)
			}
			block, kinds = relatedBlock(r, g.vocab, d.Lang, titles), append(kinds, "related")
		}
		// Between lines, or inside a one-line body between sentences.
		if len(b.lines) > 1 {
			i := 1 + r.IntN(len(b.lines)-1)
			b.lines = append(b.lines[:i], append([][]string{{block}}, b.lines[i:]...)...)
		} else {
			l := b.lines[0]
			j := r.IntN(len(l) + 1)
			b.lines = [][]string{l[:j], {block}, l[j:]}
		}
	}
	return edited(d, d.Title, b.join(), strings.Join(kinds, "+"))
}

// changeNumbers replaces every run of digits by another number of the
// same length.
func changeNumbers(r *rand.Rand, s string) (string, int) {
	var out strings.Builder
	n := 0
	rs := []rune(s)
	for i := 0; i < len(rs); {
		if rs[i] < '0' || rs[i] > '9' {
			out.WriteRune(rs[i])
			i++
			continue
		}
		j := i
		for j < len(rs) && rs[j] >= '0' && rs[j] <= '9' {
			j++
		}
		for k := i; k < j; k++ {
			d := '0' + rune(r.IntN(10))
			if k == i && j-i > 1 {
				d = '1' + rune(r.IntN(9))
			}
			out.WriteRune(d)
		}
		n++
		i = j
	}
	return out.String(), n
}

func dateline(r *rand.Rand, lang string) string {
	y, m, d, h, mi, v := 2000+r.IntN(26), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), 10+r.IntN(99990)
	if lang == "zh" {
		return fmt.Sprintf("%d年%d月%d日 %02d:%02d 阅读 %d 评论 %d", y, m, d, h, mi, v, r.IntN(500))
	}
	return fmt.Sprintf("Updated %d-%02d-%02d %02d:%02d · %s views · %d comments", y, m, d, h, mi, strconv.Itoa(v), r.IntN(500))
}

func mkNumbers(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	t, n1 := changeNumbers(r, d.Title)
	b, n2 := changeNumbers(r, d.Body)
	return edited(d, t, dateline(r, d.Lang)+"\n"+b, fmt.Sprintf("numbers=%d", n1+n2))
}

func mkSentenceAdd(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	// A sentence small next to the document: a near-duplicate gains a
	// sentence, not a second article.
	limit := max(40, d.Chars()/3)
	s := ""
	for range 20 {
		o := g.donor(r, d)
		ob := parse(o.Lang, o.Body)
		ow := ob.where()
		w := ow[r.IntN(len(ow))]
		if c := ob.lines[w[0]][w[1]]; runeLen(c) <= limit {
			s = c
			break
		}
	}
	if s == "" {
		return Pair{}, false
	}
	b := parse(d.Lang, d.Body)
	at := b.where()
	p := at[r.IntN(len(at))]
	line := b.lines[p[0]]
	j := p[1] + r.IntN(2)
	b.lines[p[0]] = append(line[:j:j], append([]string{s}, line[j:]...)...)
	return edited(d, d.Title, b.join(), fmt.Sprintf("added=%d chars", runeLen(s)))
}

func mkSentenceDrop(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	b := parse(d.Lang, d.Body)
	at := b.where()
	var p [2]int
	ok := false
	for _, i := range r.Perm(len(at)) {
		if runeLen(b.lines[at[i][0]][at[i][1]]) <= d.Chars()/3 {
			p, ok = at[i], true
			break
		}
	}
	if !ok {
		return Pair{}, false
	}
	s := b.lines[p[0]][p[1]]
	line := b.lines[p[0]]
	b.lines[p[0]] = append(line[:p[1]:p[1]], line[p[1]+1:]...)
	return edited(d, d.Title, b.join(), fmt.Sprintf("dropped=%d chars", runeLen(s)))
}

func mkReword(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	b := parse(d.Lang, d.Body)
	at := b.where()
	r.Shuffle(len(at), func(i, j int) { at[i], at[j] = at[j], at[i] })
	// First choice: a sentence with synonyms to swap in.
	for _, p := range at {
		s := b.lines[p[0]][p[1]]
		if t, n := synonymize(g.vocab, d.Lang, s); n > 0 {
			b.lines[p[0]][p[1]] = t
			return edited(d, d.Title, b.join(), fmt.Sprintf("synonyms=%d", n))
		}
	}
	// Else swap the clauses around a comma.
	for _, p := range at {
		s := b.lines[p[0]][p[1]]
		sep := ", "
		if d.Lang == "zh" {
			sep = "，"
		}
		if i := strings.Index(s, sep); i > 0 {
			head, tail := s[:i], s[i+len(sep):]
			end := ""
			if tr := []rune(tail); len(tr) > 0 && unicode.IsPunct(tr[len(tr)-1]) {
				end, tail = string(tr[len(tr)-1]), string(tr[:len(tr)-1])
			}
			b.lines[p[0]][p[1]] = tail + sep + head + end
			return edited(d, d.Title, b.join(), "clauses swapped")
		}
	}
	return Pair{}, false
}

// synonymize replaces the words of s found in the language's synonym
// table (of vocabulary v) and returns how many it replaced.
func synonymize(v vocab, lang, s string) (string, int) {
	n := 0
	syn := v.synonyms[lang]
	if lang == "zh" {
		for _, k := range sortedKeys(syn) {
			if c := strings.Count(s, k); c > 0 {
				s = strings.ReplaceAll(s, k, syn[k])
				n += c
			}
		}
		return s, n
	}
	var out strings.Builder
	word := func(w string) {
		if rep, ok := syn[strings.ToLower(w)]; ok {
			if unicode.IsUpper([]rune(w)[0]) {
				rep = strings.ToUpper(rep[:1]) + rep[1:]
			}
			out.WriteString(rep)
			n++
			return
		}
		out.WriteString(w)
	}
	start := -1
	for i, c := range s {
		if unicode.IsLetter(c) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			word(s[start:i])
			start = -1
		}
		out.WriteRune(c)
	}
	if start >= 0 {
		word(s[start:])
	}
	return out.String(), n
}

// typo applies one random typo to s; false if it found none to make.
func typo(r *rand.Rand, g *gen, d corpus.Doc, s string) (string, bool) {
	// A swap of two equal letters or a letter replaced by itself changes
	// nothing: try again.
	for range 10 {
		if t, ok := typo1(r, g, d, s); ok && t != s {
			return t, true
		}
	}
	return s, false
}

func typo1(r *rand.Rand, g *gen, d corpus.Doc, s string) (string, bool) {
	rs := []rune(s)
	if d.Lang == "zh" {
		var han []int
		for i, c := range rs {
			if unicode.Is(unicode.Han, c) {
				han = append(han, i)
			}
		}
		o := []rune(g.donor(r, d).Body)
		if len(han) == 0 || len(o) == 0 {
			return s, false
		}
		for range 50 {
			c := o[r.IntN(len(o))]
			if i := han[r.IntN(len(han))]; unicode.Is(unicode.Han, c) && c != rs[i] {
				rs[i] = c
				return string(rs), true
			}
		}
		return s, false
	}
	var at []int // letters inside words of 4+ letters
	for i := 1; i+2 < len(rs); i++ {
		if unicode.IsLetter(rs[i-1]) && unicode.IsLetter(rs[i]) && unicode.IsLetter(rs[i+1]) && unicode.IsLetter(rs[i+2]) {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return s, false
	}
	i := at[r.IntN(len(at))]
	switch r.IntN(4) {
	case 0: // swap
		rs[i], rs[i+1] = rs[i+1], rs[i]
	case 1: // drop
		rs = append(rs[:i], rs[i+1:]...)
	case 2: // double
		rs = append(rs[:i+1], rs[i:]...)
	default: // neighbour key
		rs[i] = rune("qwertyuiopasdfghjklzxcvbnm"[r.IntN(26)])
	}
	return string(rs), true
}

func mkTypos(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	n := min(6, 1+d.Chars()/400)
	s := d.Body
	done := 0
	for range n {
		if t, ok := typo(r, g, d, s); ok {
			s, done = t, done+1
		}
	}
	if done == 0 {
		return Pair{}, false
	}
	return edited(d, d.Title, s, fmt.Sprintf("typos=%d", done))
}

var zhHalf = strings.NewReplacer("，", ",", "。", ".", "：", ":", "；", ";", "！", "!", "？", "?", "（", "(", "）", ")", "「", "\"", "」", "\"", "、", ",")

var enRestyle = strings.NewReplacer("\"", "“", "'", "’", " - ", " — ", "--", "—", ", ", " , ")

func mkPunct(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	if r.IntN(2) == 0 {
		// House style of another site, throughout.
		var s string
		if d.Lang == "zh" {
			s = zhHalf.Replace(d.Body)
		} else {
			s = enRestyle.Replace(d.Body)
		}
		if s != d.Body {
			return edited(d, d.Title, s, "restyled")
		}
	}
	// A few local changes: a comma dropped or added, a full stop made "!".
	rs := []rune(d.Body)
	n := 0
	for range 1 + r.IntN(3) {
		i := r.IntN(len(rs))
		switch rs[i] {
		case ',', '，', '、':
			rs = append(rs[:i], rs[i+1:]...)
		case '.', '。':
			rs[i] = map[bool]rune{true: '！', false: '!'}[d.Lang == "zh"]
		case ' ':
			rs = append(rs[:i], append([]rune{','}, rs[i:]...)...)
		default:
			continue
		}
		n++
	}
	if n == 0 {
		rs = append(rs, '!')
		n = 1
	}
	return edited(d, d.Title, string(rs), fmt.Sprintf("marks=%d", n))
}

func mkWidth(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	pick := func() bool { return d.Lang == "zh" || r.IntN(2) == 0 }
	s, n := toFullWidth(d.Body, pick)
	if n == 0 {
		s, n = toFullWidth(d.Body, func() bool { return true })
	}
	t, _ := toFullWidth(d.Title, pick)
	return edited(d, t, s, fmt.Sprintf("fullwidth=%d chars", n))
}

func mkTrad(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	s, n := toTraditional(d.Body)
	t, _ := toTraditional(d.Title)
	return edited(d, t, s, fmt.Sprintf("traditional=%d chars", n))
}

func mkTitle(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	var t, how string
	switch r.IntN(4) {
	case 0:
		site := g.template(r, d.Lang, "").header[0]
		if d.Lang == "zh" {
			t, how = "【转载】"+d.Title+" - "+site, "site"
		} else {
			t, how = "Breaking: "+d.Title+" | "+site, "site"
		}
	case 1:
		t, how = g.donor(r, d).Title, "other title"
	case 2:
		t, how = "", "none"
	default:
		if d.Lang == "zh" {
			t, how = "独家："+d.Title+"（更新）", "decorated"
		} else {
			t, how = strings.ToUpper(d.Title)+" (UPDATED)", "decorated"
		}
	}
	return edited(d, t, d.Body, "title="+how)
}

func mkTruncate(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	b := parse(d.Lang, d.Body)
	at := b.where()
	frac := 0.5 + 0.4*r.Float64()
	limit := int(frac * float64(d.Chars()))
	keep, n := 1, runeLen(b.lines[at[0][0]][at[0][1]])
	for keep < len(at)-1 {
		l := runeLen(b.lines[at[keep][0]][at[keep][1]])
		if n+l > limit {
			break
		}
		n += l
		keep++
	}
	last := at[keep-1]
	b.lines = b.lines[:last[0]+1]
	b.lines[last[0]] = b.lines[last[0]][:last[1]+1]
	more := " … Read more"
	if d.Lang == "zh" {
		more = "……阅读全文"
	}
	return edited(d, d.Title, b.join()+more, fmt.Sprintf("kept=%d/%d sentences", keep, len(at)))
}

func mkCombo(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	s, nn := changeNumbers(r, d.Body)
	typos := 0
	for range 1 + r.IntN(3) {
		if t, ok := typo(r, g, d, s); ok {
			s, typos = t, typos+1
		}
	}
	t := g.template(r, d.Lang, "")
	return edited(d, d.Title, t.wrap(d.Title, dateline(r, d.Lang)+"\n"+s), fmt.Sprintf("template=%s,numbers=%d,typos=%d", t.id, nn, typos))
}

func mkNegTopic(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	o, ok := g.freshPartner(r, d, d.Source+"/"+d.Topic)
	if !ok {
		return Pair{}, false
	}
	return Pair{Original: raw(d), Query: raw(o), Detail: "other=" + o.ID}, true
}

func mkNegTemplate(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	o, ok := g.freshPartner(r, d, d.Source)
	if !ok {
		return Pair{}, false
	}
	t := g.template(r, d.Lang, "")
	return Pair{
		Original: Text{ID: d.ID + "@" + t.id, Title: d.Title, Body: t.wrap(d.Title, d.Body)},
		Query:    Text{ID: o.ID + "@" + t.id, Title: o.Title, Body: t.wrap(o.Title, o.Body)},
		Detail:   "other=" + o.ID + ",template=" + t.id,
	}, true
}

func mkNegBoilerplate(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	o, ok := g.freshPartner(r, d, d.Source)
	if !ok {
		return Pair{}, false
	}
	t := g.template(r, d.Lang, "")
	var titles []string
	for range 5 {
		titles = append(titles, g.donor(r, d).Title)
	}
	extra := "\n" + adBlock(r, g.vocab, d.Lang) + "\n" + relatedBlock(r, g.vocab, d.Lang, titles)
	// The original's id names the template and the seed of the shared
	// blocks, so two pairs never store different texts under one id.
	id := fmt.Sprintf("%s@%s+b%d", d.ID, t.id, r.Uint32())
	return Pair{
		Original: Text{ID: id, Title: d.Title, Body: t.wrap(d.Title, d.Body+extra)},
		Query:    Text{ID: o.ID + "@" + t.id + "+b", Title: o.Title, Body: t.wrap(o.Title, o.Body+extra)},
		Detail:   "other=" + o.ID + ",template=" + t.id,
	}, true
}

// stopEN are words too common to be the "key word" of a text.
var stopEN = map[string]bool{"that": true, "this": true, "with": true, "from": true, "have": true, "were": true,
	"which": true, "their": true, "there": true, "would": true, "about": true, "been": true, "they": true,
	"will": true, "what": true, "when": true, "these": true, "those": true, "into": true, "than": true, "them": true}

func mkNegKeyword(g *gen, r *rand.Rand, d corpus.Doc) (Pair, bool) {
	o := g.donor(r, d)
	if d.Lang == "zh" {
		// Replace a two-character Han word by one from another document.
		pick := func(s string) (int, bool) {
			rs := []rune(s)
			var at []int
			for i := 0; i+1 < len(rs); i++ {
				if unicode.Is(unicode.Han, rs[i]) && unicode.Is(unicode.Han, rs[i+1]) {
					at = append(at, i)
				}
			}
			if len(at) == 0 {
				return 0, false
			}
			return at[r.IntN(len(at))], true
		}
		i, ok1 := pick(d.Body)
		j, ok2 := pick(o.Body)
		if !ok1 || !ok2 {
			return Pair{}, false
		}
		rs, os := []rune(d.Body), []rune(o.Body)
		if rs[i] == os[j] && rs[i+1] == os[j+1] {
			return Pair{}, false
		}
		from := string(rs[i : i+2])
		rs[i], rs[i+1] = os[j], os[j+1]
		return edited(d, d.Title, string(rs), fmt.Sprintf("%s->%s", from, string(os[j:j+2])))
	}
	key := func(s string) []string {
		var ws []string
		for _, w := range textutil.Words(s) {
			if runeLen(w) >= 4 && !stopEN[strings.ToLower(w)] && !strings.ContainsRune(w, '\'') {
				ws = append(ws, w)
			}
		}
		return ws
	}
	mine, theirs := key(d.Body), key(o.Body)
	if len(mine) == 0 || len(theirs) == 0 {
		return Pair{}, false
	}
	from, to := mine[r.IntN(len(mine))], theirs[r.IntN(len(theirs))]
	if strings.EqualFold(from, to) {
		return Pair{}, false
	}
	if unicode.IsUpper([]rune(from)[0]) {
		to = strings.ToUpper(to[:1]) + to[1:]
	} else {
		to = strings.ToLower(to)
	}
	// Replace one whole-word occurrence.
	s := d.Body
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], from)
		if j < 0 {
			break
		}
		j += i
		end := j + len(from)
		beforeOK := j == 0 || !isWordByte(s[j-1])
		afterOK := end == len(s) || !isWordByte(s[end])
		if beforeOK && afterOK {
			return edited(d, d.Title, s[:j]+to+s[end:], from+"->"+to)
		}
		i = end
	}
	return Pair{}, false
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func isASCIIAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
