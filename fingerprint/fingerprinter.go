package fingerprint

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/go-ego/gse"
)

// RecipeVersion identifies the fingerprint recipe (normalization,
// tokenization, filtering, weighting, hashing, and DefaultConfig). It changes
// whenever any step changes the output for some input; the golden tests in
// testdata/golden.json enforce that. Fingerprints from different recipes are
// not comparable.
const RecipeVersion uint32 = 4

var (
	// ErrLowInformation means the document has nothing to fingerprint; it
	// is only returned wrapped in ErrEmpty. (A body with too few content
	// words for a simhash is a low-information document, Result.
	// LowInformation, not an error.)
	ErrLowInformation = errors.New("fingerprint: low information")
	// ErrEmpty means the body normalizes to nothing (empty, whitespace,
	// markup or boilerplate only). Errors carrying it also match
	// ErrLowInformation, so callers that only check that one are covered.
	ErrEmpty = errors.New("fingerprint: empty document")
	// ErrInvalidUTF8 means the title or body is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("fingerprint: invalid UTF-8")
	// ErrTooLarge means len(Title)+len(Body) exceeds Config.MaxBytes.
	ErrTooLarge = errors.New("fingerprint: document too large")
	// ErrBadLang means Document.Lang is not "", "zh" or "en".
	ErrBadLang = errors.New("fingerprint: unknown language hint")
)

// Document is the input to Fingerprint.
type Document struct {
	Title string
	Body  string
	// Lang is a hint: "" (detect per run of text), "zh" or "en". The
	// tokenizer already treats Han and Latin runs separately, so the hint
	// does not change the output of recipe 1; it is validated and kept for
	// later recipes.
	Lang string
}

// Feature is one weighted feature: a content word, or two adjacent content
// words joined by a space (a bigram).
type Feature struct {
	Text   string  `json:"text"`
	Weight float64 `json:"weight"`
}

// Result is what a document fingerprints to.
type Result struct {
	// Simhash is the weighted simhash of the body; body features that also
	// occur in the title are boosted by Config.TitleBoost.
	Simhash Fingerprint `json:"simhash"`
	// TitleSimhash is the simhash of the title alone; 0 (and TitleFeatures
	// 0) when the title has no features.
	TitleSimhash Fingerprint `json:"title_simhash"`
	// ExactHash is xxhash64 of the normalized body (see Normalize).
	ExactHash uint64 `json:"exact_hash"`
	// Features is the number of distinct features (words and bigrams) in
	// Simhash; Words the number of distinct content words among them.
	Features      int `json:"features"`
	Words         int `json:"words"`
	TitleFeatures int `json:"title_features"`
	// Top lists the heaviest body features, heaviest first (ties by text).
	Top []Feature `json:"top"`
	// Recipe is RecipeVersion.
	Recipe uint32 `json:"recipe"`
	// Chars is the number of characters (runes) in the normalized body.
	Chars int `json:"chars"`
	// Sketch is the bottom-k MinHash sketch of the body's distinct
	// features (see Sketch); the second check on candidates compares it.
	Sketch Sketch `json:"sketch,omitempty"`
	// Bands is the LSH band signature of the same features (see Bands):
	// the index finds candidates by it beyond the simhash distance. Nil
	// when the body has no features. The body's text keys (DocTextKeys)
	// follow the NumBands band hashes.
	Bands Bands `json:"bands,omitempty"`
	// Text is the normalized body (what ExactHash hashes and Chars
	// counts): the decision rule aligns short texts word by word with it.
	Text string `json:"-"`
	// LowInformation: the body has fewer than Config.MinFeatures distinct
	// content words (a one-line quote of common words, an emoji, a
	// number). Its Simhash stands for the exact text (ExactHash, odd), not
	// for its features: only exact and near-exact matching (the text keys
	// and the alignment of short texts) applies to it.
	LowInformation bool `json:"low_information,omitempty"`
}

//go:embed stopwords_en.txt
var stopwordsEN string

//go:embed stopwords_zh_extra.txt
var stopwordsZHExtra string

// Fingerprinter turns documents into fingerprints. Build one with New (it
// loads dictionaries, about 1.5 s and a few hundred MiB) and share it: all
// methods are safe for concurrent use.
type Fingerprinter struct {
	cfg Config
	seg *gse.Segmenter // read-only after New
	// words maps jieba's IDF words to their IDF and every stop word (zh and
	// en) to stopWord: one lookup per token. Read-only after New.
	words map[string]float64
	// stop holds just the stop words: small enough to stay in cache for
	// the per-word test on Latin text. Read-only after New.
	stop    map[string]struct{}
	meanIDF float64
	// tokenIDF parallels seg.Dict.Tokens: the weight class of every
	// dictionary token, so the hot path needs neither a POS string test
	// nor a map lookup per Han word (the maps are large and cache-cold).
	// 0 means "not a feature" (stop word or non-content POS). Read-only.
	tokenIDF []float64
	scratch  sync.Pool // *scratch, per-call working memory
}

// New loads gse's embedded Chinese dictionary and stop words and parses
// jieba's IDF table (gse.ZhIdf) once.
func New(cfg Config) (*Fingerprinter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// The IDF table parses while gse builds its dictionary: this goroutine
	// is owned by New, which always joins it through idfc.
	type idfResult struct {
		m    map[string]float64
		mean float64
		err  error
	}
	idfc := make(chan idfResult, 1)
	go func() {
		m, mean, err := parseIDF(gse.ZhIdf)
		idfc <- idfResult{m, mean, err}
	}()
	// "zh" is gse's simplified and traditional dictionaries together: both
	// scripts segment into words.
	seg := &gse.Segmenter{NotLoadHMM: true, SkipLog: true}
	errDict := seg.LoadDictEmbed("zh")
	errStop := seg.LoadStopEmbed()
	idf := <-idfc
	switch {
	case errDict != nil:
		return nil, fmt.Errorf("fingerprint: load gse dictionary: %w", errDict)
	case errStop != nil:
		return nil, fmt.Errorf("fingerprint: load gse stop words: %w", errStop)
	case idf.err != nil:
		return nil, idf.err
	}
	f := &Fingerprinter{cfg: cfg, seg: seg, words: idf.m, meanIDF: idf.mean,
		stop: make(map[string]struct{}, len(seg.StopWordMap)+512)}
	for w := range seg.StopWordMap {
		f.stop[w] = struct{}{}
	}
	for _, list := range []string{stopwordsEN, stopwordsZHExtra} {
		for _, l := range strings.Split(list, "\n") {
			l = strings.TrimSpace(l)
			if l != "" && !strings.HasPrefix(l, "#") {
				f.stop[l] = struct{}{}
			}
		}
	}
	for w := range f.stop {
		f.words[w] = stopWord
	}
	toks := seg.Dict.Tokens
	f.tokenIDF = make([]float64, len(toks))
	for i := range toks {
		if !keepPOS(toks[i].Pos()) {
			continue
		}
		idf, ok := f.words[toks[i].Text()]
		switch {
		case !ok:
			f.tokenIDF[i] = f.meanIDF
		case idf != stopWord:
			f.tokenIDF[i] = idf
		}
	}
	f.scratch.New = func() any { return newScratch() }
	return f, nil
}

// Config returns the configuration f was built with.
func (f *Fingerprinter) Config() Config { return f.cfg }

// stopWord marks a stop word in Fingerprinter.words (IDFs are positive).
const stopWord = -1.0

// parseIDF reads jieba's "word idf" lines.
func parseIDF(text string) (map[string]float64, float64, error) {
	m := make(map[string]float64, 280000)
	sum := 0.0
	for len(text) > 0 {
		var line string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, ""
		}
		line = strings.TrimSpace(line)
		sp := strings.LastIndexByte(line, ' ')
		if sp <= 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) {
			continue
		}
		w := strings.TrimSpace(line[:sp])
		if _, dup := m[w]; !dup {
			sum += v
		}
		m[w] = v
	}
	if len(m) == 0 {
		return nil, 0, errors.New("fingerprint: empty IDF table")
	}
	return m, sum / float64(len(m)), nil
}

// tfWeight is sublinear term frequency, 1 + ln(tf): a word repeated ten
// times counts 3.3 times, not 10, so one repeated word cannot outvote the
// rest of the document.
func tfWeight(tf int) float64 {
	if tf == 1 {
		return 1 // most features; skips the logarithm
	}
	return 1 + math.Log(float64(tf))
}

// feature accumulates one distinct feature of a document.
type feature struct {
	hash   uint64
	a, b   string // b is "" for a word, the second word of a bigram otherwise
	tf     int
	idf    float64
	lead   bool
	weight float64
}

// scratch is per-call working memory, pooled to keep the hot path light.
type scratch struct {
	idx       map[uint64]int32
	feats     []feature
	title     map[uint64]struct{}
	buf       []byte
	textB     []byte
	hashBuf   []byte
	sketchBuf []uint32
	prev      string
	prevIDF   float64
	leadLeft  int
}

func newScratch() *scratch {
	return &scratch{idx: make(map[uint64]int32, 256), title: make(map[uint64]struct{}, 32)}
}

func (s *scratch) reset() {
	clear(s.idx)
	s.feats = s.feats[:0]
	s.prev, s.prevIDF = "", 0
}

// maxHanRun bounds one gse call (runes): its memory is proportional to the
// run, and real text has punctuation far more often than this.
const maxHanRun = 2000

// Fingerprint computes doc's Result. Errors: ErrInvalidUTF8, ErrTooLarge,
// ErrBadLang and ErrEmpty (which also matches ErrLowInformation).
func (f *Fingerprinter) Fingerprint(doc Document) (Result, error) {
	res, _, err := f.run(doc, false)
	return res, err
}

// Features returns every body feature of doc with its final weight,
// heaviest first (ties by text), along with the Result; for explanations and
// tools, not the hot path.
func (f *Fingerprinter) Features(doc Document) (Result, []Feature, error) {
	return f.run(doc, true)
}

func (f *Fingerprinter) run(doc Document, all bool) (Result, []Feature, error) {
	res := Result{Recipe: RecipeVersion}
	if len(doc.Title)+len(doc.Body) > f.cfg.MaxBytes {
		return res, nil, fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, len(doc.Title)+len(doc.Body), f.cfg.MaxBytes)
	}
	if !utf8.ValidString(doc.Body) || !utf8.ValidString(doc.Title) {
		return res, nil, ErrInvalidUTF8
	}
	switch doc.Lang {
	case "", "zh", "en":
	default:
		return res, nil, fmt.Errorf("%w: %q", ErrBadLang, doc.Lang)
	}
	s := f.scratch.Get().(*scratch)
	defer f.scratch.Put(s)

	// Title first: its feature hashes drive the title boost.
	clear(s.title)
	if doc.Title != "" {
		s.reset()
		s.leadLeft = 0
		f.extract(s, normalize(doc.Title))
		if len(s.feats) > 0 {
			for i := range s.feats {
				ft := &s.feats[i]
				ft.weight = tfWeight(ft.tf) * ft.idf
				s.title[ft.hash] = struct{}{}
			}
			res.TitleSimhash = simhash(s.feats)
			res.TitleFeatures = len(s.feats)
		}
	}

	body := normalize(doc.Body)
	if doc.Title != "" {
		body = dropHeadline(body, normalize(doc.Title))
	}
	res.ExactHash = xxhash.Sum64String(body)
	res.Chars = utf8.RuneCountInString(body)
	res.Text = body
	if body == "" {
		return res, nil, fmt.Errorf("%w (%w: 0 features)", ErrEmpty, ErrLowInformation)
	}
	s.reset()
	s.leadLeft = f.cfg.LeadChars
	f.extract(s, body)
	for i := range s.feats {
		ft := &s.feats[i]
		w := tfWeight(ft.tf) * ft.idf
		if ft.lead {
			w *= f.cfg.LeadBoost
		}
		if _, ok := s.title[ft.hash]; ok {
			w *= f.cfg.TitleBoost
		}
		ft.weight = w
		if ft.b == "" {
			res.Words++
		}
	}
	res.Features = len(s.feats)
	res.Sketch, s.sketchBuf = buildSketch(s.feats, s.sketchBuf)
	res.Bands = buildBands(s.feats)
	if res.Bands != nil {
		res.Bands = append(res.Bands, DocTextKeys(body, res.Chars)...)
	}
	if res.Words < f.cfg.MinFeatures {
		// Too few content words for a simhash to mean anything: the
		// fingerprint stands for the exact normalized text, so a copy is
		// found at distance 0 and near-exact copies through the text keys
		// (the decision rule aligns such texts; it never reads their
		// sketches).
		res.LowInformation = true
		res.Simhash = Fingerprint(res.ExactHash | 1)
	} else {
		res.Simhash = simhash(s.feats)
	}

	n := f.cfg.TopFeatures
	if all {
		n = len(s.feats)
	}
	top := topFeatures(s.feats, n)
	if !all {
		res.Top = top
		return res, nil, nil
	}
	res.Top = top[:min(len(top), f.cfg.TopFeatures)]
	return res, top, nil
}

// extract tokenizes normalized text into s.feats.
func (f *Fingerprinter) extract(s *scratch, text string) {
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isHan(r):
			start, runes := i, 0
			for i < len(text) && runes < maxHanRun {
				r, size := utf8.DecodeRuneInString(text[i:])
				if !isHan(r) {
					break
				}
				i += size
				runes++
			}
			f.hanRun(s, text[start:i])
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			start := i
			i += size
			for i < len(text) {
				r, size := utf8.DecodeRuneInString(text[i:])
				if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) {
					if isHan(r) {
						break
					}
					i += size
					continue
				}
				// An apostrophe inside a word ("don't") belongs to it.
				if r == '\'' && i+1 < len(text) {
					if r2, _ := utf8.DecodeRuneInString(text[i+1:]); unicode.IsLetter(r2) && !isHan(r2) {
						i += size
						continue
					}
				}
				break
			}
			f.latinWord(s, text[start:i])
		default:
			i += size
		}
	}
}

// isHan reports whether r is a Han character (fast path for the common
// non-Han runes below U+2E80).
func isHan(r rune) bool {
	if r >= 0x4E00 && r <= 0x9FFF { // CJK Unified Ideographs: nearly all Chinese text
		return true
	}
	return r >= 0x2E80 && unicode.Is(unicode.Han, r)
}

// keepPOS reports whether a gse part-of-speech tag marks a content word:
// nouns and names (n*), verbs (v*), adjectives (a*), idioms (i, l),
// abbreviations (j) and Latin words gse knows (eng).
func keepPOS(pos string) bool {
	if pos == "" {
		return false
	}
	switch pos[0] {
	case 'n', 'v', 'a', 'i', 'l', 'j':
		return true
	case 'e':
		return pos == "eng"
	}
	return false
}

// hanRun segments a run of Han characters with gse (dictionary shortest
// path, no HMM) and keeps content words.
func (f *Fingerprinter) hanRun(s *scratch, run string) {
	s.textB = append(s.textB[:0], run...)
	for _, sg := range f.seg.Segment(s.textB) {
		tok := sg.Token()
		if tok == nil {
			continue
		}
		w := run[sg.Start():sg.End()]
		var idf float64
		if i, ok := f.tokenIndex(tok); ok {
			idf = f.tokenIDF[i]
		} else {
			// Not a dictionary token: gse made a one-character pseudo
			// token (POS "x") for a character its dictionary lacks.
			idf = f.slowIDF(tok.Pos(), w)
		}
		if idf == 0 {
			continue
		}
		f.addWord(s, w, idf)
	}
}

// tokenIndex returns the index of tok in the dictionary's token slice, if
// tok points into it (gse returns &Dict.Tokens[i] for dictionary words).
// Pointer arithmetic instead of a map: the slice never moves after New.
func (f *Fingerprinter) tokenIndex(tok *gse.Token) (int, bool) {
	toks := f.seg.Dict.Tokens
	if len(toks) == 0 {
		return 0, false
	}
	size := unsafe.Sizeof(toks[0])
	off := uintptr(unsafe.Pointer(tok)) - uintptr(unsafe.Pointer(&toks[0]))
	if off >= uintptr(len(toks))*size || off%size != 0 {
		return 0, false
	}
	return int(off / size), true
}

// slowIDF is the weight class of a word that is not a dictionary token:
// 0 for stop words and non-content POS, else its IDF or the mean.
func (f *Fingerprinter) slowIDF(pos, w string) float64 {
	if !keepPOS(pos) {
		return 0
	}
	idf, ok := f.words[w]
	switch {
	case !ok:
		return f.meanIDF
	case idf == stopWord:
		return 0
	}
	return idf
}

// latinWord filters one Latin (or other non-Han script) word: drops words
// of one character, words starting with a digit (numbers, "10km", "3rd"),
// and stop words; strips a possessive "'s".
func (f *Fingerprinter) latinWord(s *scratch, w string) {
	w = strings.TrimSuffix(w, "'s")
	r, size := utf8.DecodeRuneInString(w)
	if size == len(w) || unicode.IsNumber(r) {
		return
	}
	if _, stop := f.stop[w]; stop {
		return
	}
	// Latin words get the mean IDF: no English IDF table ships with gse, so
	// term frequency alone ranks them.
	f.addWord(s, w, f.meanIDF)
}

// addWord adds a content word and, when bigrams are on, the bigram it forms
// with the previous content word.
func (f *Fingerprinter) addWord(s *scratch, w string, idf float64) {
	lead := s.leadLeft > 0
	if lead {
		s.leadLeft -= utf8.RuneCountInString(w)
	}
	s.add(xxhash.Sum64String(w), w, "", idf, lead)
	if s.prev != "" && f.cfg.BigramWeight > 0 {
		s.hashBuf = append(append(append(s.hashBuf[:0], s.prev...), 0x1f), w...)
		s.add(xxhash.Sum64(s.hashBuf), s.prev, w, (idf+s.prevIDF)/2*f.cfg.BigramWeight, lead)
	}
	s.prev, s.prevIDF = w, idf
}

func (s *scratch) add(h uint64, a, b string, idf float64, lead bool) {
	if i, ok := s.idx[h]; ok {
		ft := &s.feats[i]
		ft.tf++
		ft.lead = ft.lead || lead
		return
	}
	s.idx[h] = int32(len(s.feats))
	s.feats = append(s.feats, feature{hash: h, a: a, b: b, tf: 1, idf: idf, lead: lead})
}

// simhash is the weighted bit vote: each feature adds its weight to the
// bits set in its hash and subtracts it from the others; a bit of the
// result is 1 where the total is positive. Features are visited in document
// order, so the float sums (and ties) are the same on every run.
func simhash(feats []feature) Fingerprint {
	var v [64]float64
	for i := range feats {
		h, w := feats[i].hash, feats[i].weight
		// Branch-free: the hash bits are random, so an if per bit would
		// mispredict half the time. Adding -w or +w is the same sum.
		sw := [2]float64{-w, w}
		for b := range 64 {
			v[b] += sw[(h>>b)&1]
		}
	}
	var out uint64
	for b := range 64 {
		if v[b] > 0 {
			out |= 1 << b
		}
	}
	return Fingerprint(out)
}

func (ft *feature) text() string {
	if ft.b == "" {
		return ft.a
	}
	return ft.a + " " + ft.b
}

// heavier orders features: weight descending, then text (first word, then
// second) ascending, so the order is total and the same on every run.
func heavier(a, b *feature) bool {
	if a.weight != b.weight {
		return a.weight > b.weight
	}
	if a.a != b.a {
		return a.a < b.a
	}
	return a.b < b.b
}

// topFeatures returns the n heaviest features in heavier order. For small
// n it keeps a sorted window instead of sorting every feature.
func topFeatures(feats []feature, n int) []Feature {
	n = min(n, len(feats))
	if n <= 0 {
		return nil
	}
	var order []int32
	if n <= 64 {
		order = make([]int32, 0, n)
		for i := range feats {
			ft := &feats[i]
			if len(order) == n && !heavier(ft, &feats[order[n-1]]) {
				continue
			}
			j := len(order)
			if j < n {
				order = append(order, 0)
			} else {
				j--
			}
			for j > 0 && heavier(ft, &feats[order[j-1]]) {
				order[j] = order[j-1]
				j--
			}
			order[j] = int32(i)
		}
	} else {
		order = make([]int32, len(feats))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(x, y int32) int {
			if heavier(&feats[x], &feats[y]) {
				return -1
			}
			if heavier(&feats[y], &feats[x]) {
				return 1
			}
			return 0
		})
		order = order[:n]
	}
	out := make([]Feature, n)
	for i, k := range order {
		ft := &feats[k]
		out[i] = Feature{Text: strings.Clone(ft.text()), Weight: math.Round(ft.weight*1e6) / 1e6}
	}
	return out
}

// dropHeadline removes body lines that repeat the title (a page's <h1>, or
// the title with a site name around it): the title has its own simhash, and
// whether a copy repeats it in the body says nothing about the body.
func dropHeadline(body, title string) string {
	if title == "" || strings.IndexByte(title, '\n') >= 0 || !strings.Contains(body, title) {
		return body
	}
	var b strings.Builder
	for line := range strings.Lines(body) {
		l := strings.TrimSuffix(line, "\n")
		if isHeadline(l, title) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	if b.Len() == 0 {
		return body // the body is just the headline: keep it
	}
	return b.String()
}

// maxHeadlineExtra bounds what a headline line may hold besides the title:
// a site or section name.
const maxHeadlineExtra = 40

// isHeadline reports whether line l is title, alone or with a site name
// around it ("big news - daily tribune"), rather than text that uses the
// title's words: the title must stand as a whole word (no letter, digit or
// Han character joined to it: a short title such as "删除" is a word that
// the page's sentences use, "从表格中删除选中的列。" is not a headline), and
// what is left must be short and hold no sentence mark.
func isHeadline(l, title string) bool {
	i := strings.Index(l, title)
	if i < 0 || len(l) > len(title)+maxHeadlineExtra {
		return false
	}
	before, after := l[:i], l[i+len(title):]
	if r, _ := utf8.DecodeLastRuneInString(before); before != "" && joins(r) {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(after); after != "" && joins(r) {
		return false
	}
	return !sentence(before) && !sentence(after)
}

// sentence reports whether s holds a sentence mark (a '.' only before a
// space: "example.com" is a site name).
func sentence(s string) bool {
	return strings.ContainsAny(s, "。！？!?；;") || strings.Contains(s, ". ")
}

// joins reports whether r continues a word it touches.
func joins(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || isHan(r)
}
