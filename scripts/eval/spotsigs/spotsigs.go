// Package spotsigs is a reference implementation of SpotSigs (Theobald,
// Siddharth, Paepcke: "SpotSigs: Robust and Efficient Near Duplicate
// Detection in Large Web Collections", SIGIR 2008), the peer the quality
// benchmark measures simdex's template handling against. It shares no code
// with simdex's fingerprints or decision rule.
//
// A document's spot signatures are taken at every occurrence of an
// antecedent, a stop word from a small fixed list: the antecedent followed
// by a chain of the next Chain content words, every Distance-th one (stop
// words are skipped and not counted). "at a rally to kick off a weeklong
// campaign" with the antecedent "a", Distance 1 and Chain 2 gives
// "a:rally:kick" and "a:weeklong:campaign". Natural-language text is dense
// in antecedents, navigation bars and link lists are not, so the signatures
// favour a page's running text over its furniture. Two documents are near
// duplicates when the Jaccard similarity of their signature sets is at
// least a threshold tau; Index finds every such stored document exactly.
//
// Tokens: HTML markup is removed (tags, comments, the content of script and
// style elements; entities decoded; no element is dropped for being page
// furniture), text is NFKC-normalized, traditional Chinese characters are
// folded to simplified ones (the benchmark's script-variant table, as the
// judge does) and lower-cased; runs of Han characters are segmented into
// words by gse (its embedded simplified and traditional dictionaries,
// dictionary only), every other run of letters and digits is a word,
// everything else separates words.
package spotsigs

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/cespare/xxhash/v2"
	"github.com/go-ego/gse"
	"golang.org/x/net/html"
	"golang.org/x/text/unicode/norm"

	"github.com/simdex/simdex/scripts/eval/pairs"
)

// Config says how signatures are taken.
type Config struct {
	// Distance is the spot distance d: the chain takes every Distance-th
	// content word after the antecedent.
	Distance int
	// Chain is the chain length c: content words per signature.
	Chain int
	// Antecedents are the words a signature starts at.
	Antecedents []string
	// Stop are further words skipped (not counted) in chains; the
	// antecedents are skipped too.
	Stop []string
	// Plain skips the text preparation before tokenizing (markup removal
	// and script folding): NFKC and lower case only.
	Plain bool
}

// English antecedents: articles and the forms of the verbs be, can, will,
// have and do (with shall), the set the paper reports the best F1 with.
var EnglishAntecedents = []string{
	"a", "an", "the",
	"is", "are", "am", "was", "were", "be", "been", "being",
	"can", "could", "will", "would", "shall", "should",
	"have", "has", "had", "having",
	"do", "does", "did", "done", "doing",
}

// ChineseAntecedents are frequent Chinese function words (as gse segments
// them: only a standalone word is an antecedent, not 的 inside 目的).
var ChineseAntecedents = []string{
	"的", "了", "是", "在", "和", "有", "与", "对", "将", "为", "被", "这", "也", "就", "都", "而", "及", "并",
}

// EnglishStop and ChineseStop are the further stop words skipped in
// chains: pronouns, prepositions, conjunctions and particles.
var (
	EnglishStop = strings.Fields(`about above after again against all also although among and another any
as at because before below between both but by each either else even ever every few for from further
he her here hers herself him himself his how however i if in into it its itself just me more most much
must my myself neither no nor not now of off on once one only or other our ours ourselves out over own
same she so some such than that these they this those though through thus to too under until up upon
us very we what whatever when where whether which while who whom whose why with within without yet you
your yours yourself there their theirs them themselves then may might said says`)
	ChineseStop = strings.Fields(`个 之 于 以 从 把 等 或 其 中 上 下 不 没 我 你 您 他 她 它 们 我们 你们 他们 她们
它们 着 过 吗 呢 吧 啊 呀 要 会 能 可 可以 如果 因为 所以 但 但是 还 又 到 让 给 向 由 使 该 此 那 那么 这个 那个
一个 以及 或者 即 用 则 之后 之前 时 后 前 里 如 若 虽然 而且 并且 因此 于是 以便 其中 某 每 各 所 地 得`)
)

// DefaultConfig is the benchmark's configuration: spot distance 2, chain
// length 3, the English and Chinese antecedents and stop words above.
func DefaultConfig() Config {
	return Config{
		Distance:    2,
		Chain:       3,
		Antecedents: slices.Concat(EnglishAntecedents, ChineseAntecedents),
		Stop:        slices.Concat(EnglishStop, ChineseStop),
	}
}

// Validate reports a configuration that cannot take signatures.
func (c Config) Validate() error {
	if c.Distance < 1 || c.Chain < 1 || len(c.Antecedents) == 0 {
		return fmt.Errorf("spotsigs: need distance >= 1, chain >= 1 and antecedents, got d=%d c=%d with %d antecedents", c.Distance, c.Chain, len(c.Antecedents))
	}
	return nil
}

// Extractor takes the spot signatures of texts. It is safe for concurrent
// use.
type Extractor struct {
	cfg  Config
	ante map[string]bool
	stop map[string]bool
	seg  *gse.Segmenter
}

// New loads gse's embedded dictionaries (about two seconds) and returns an
// extractor for cfg.
func New(cfg Config) (*Extractor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	seg := &gse.Segmenter{NotLoadHMM: true, SkipLog: true}
	if err := seg.LoadDictEmbed("zh"); err != nil {
		return nil, fmt.Errorf("spotsigs: load gse dictionary: %w", err)
	}
	return newWith(cfg, seg), nil
}

// WithConfig returns an extractor for another configuration sharing e's
// segmenter.
func (e *Extractor) WithConfig(cfg Config) (*Extractor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newWith(cfg, e.seg), nil
}

func newWith(cfg Config, seg *gse.Segmenter) *Extractor {
	e := &Extractor{cfg: cfg, ante: map[string]bool{}, stop: map[string]bool{}, seg: seg}
	for _, w := range cfg.Antecedents {
		e.ante[w] = true
		e.stop[w] = true
	}
	for _, w := range cfg.Stop {
		e.stop[w] = true
	}
	return e
}

// Config returns the extractor's configuration.
func (e *Extractor) Config() Config { return e.cfg }

// Tokens returns text's words: markup removed, NFKC, traditional Chinese
// folded to simplified, lower case, Han runs segmented by gse, other runs
// of letters and digits as they are.
func (e *Extractor) Tokens(text string) []string {
	if e.cfg.Plain {
		text = strings.ToLower(norm.NFKC.String(text))
	} else {
		text = strings.ToLower(pairs.FoldTraditional(norm.NFKC.String(StripMarkup(text))))
	}
	var out []string
	rs := []rune(text)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.Is(unicode.Han, r):
			j := i
			for j < len(rs) && unicode.Is(unicode.Han, rs[j]) {
				j++
			}
			for _, w := range e.seg.Cut(string(rs[i:j]), false) {
				if w = strings.TrimSpace(w); w != "" {
					out = append(out, w)
				}
			}
			i = j
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			j := i
			for j < len(rs) && !unicode.Is(unicode.Han, rs[j]) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || unicode.Is(unicode.Mn, rs[j])) {
				j++
			}
			out = append(out, string(rs[i:j]))
			i = j
		default:
			i++
		}
	}
	return out
}

// StripMarkup returns text without HTML markup: tags and comments become
// line breaks, the content of script and style elements is dropped,
// entities are decoded. A text without '<' is returned as it is.
func StripMarkup(text string) string {
	if !strings.Contains(text, "<") {
		return text
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(text))
	skip := ""
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			if skip == "" {
				b.Write(z.Text())
			}
		case html.StartTagToken:
			name, _ := z.TagName()
			if n := string(name); n == "script" || n == "style" {
				skip = n
			}
			b.WriteByte('\n')
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == skip {
				skip = ""
			}
			b.WriteByte('\n')
		default:
			b.WriteByte('\n')
		}
	}
}

// Spots returns text's spot signatures in text order, repeats kept, each
// as the antecedent and its chain joined by ":" (e.g. "a:rally:kick"). An
// antecedent followed by fewer than Chain content words at the spot
// distance gives a shorter chain, one with none gives nothing.
func (e *Extractor) Spots(text string) []string { return e.SpotsOf(e.Tokens(text)) }

// SpotsOf is Spots on words Tokens returned (with the same Plain).
func (e *Extractor) SpotsOf(toks []string) []string {
	// content[i]: the index in toks of the i-th content word; next[j]: the
	// number of content words before toks[j].
	var content []int
	next := make([]int, len(toks)+1)
	for j, t := range toks {
		next[j] = len(content)
		if !e.stop[t] {
			content = append(content, j)
		}
	}
	next[len(toks)] = len(content)
	var out []string
	d, c := e.cfg.Distance, e.cfg.Chain
	for j, t := range toks {
		if !e.ante[t] {
			continue
		}
		first := next[j+1] // the first content word after the antecedent
		var b strings.Builder
		b.WriteString(t)
		n := 0
		for k := 1; k <= c; k++ {
			at := first + k*d - 1
			if at >= len(content) {
				break
			}
			b.WriteByte(':')
			b.WriteString(toks[content[at]])
			n++
		}
		if n > 0 {
			out = append(out, b.String())
		}
	}
	return out
}

// Signature returns the set of text's spot signatures, hashed.
func (e *Extractor) Signature(text string) Set { return e.SignatureOf(e.Tokens(text)) }

// SignatureOf is Signature on words Tokens returned (with the same Plain).
func (e *Extractor) SignatureOf(toks []string) Set {
	spots := e.SpotsOf(toks)
	s := make(Set, 0, len(spots))
	for _, sp := range spots {
		s = append(s, xxhash.Sum64String(sp))
	}
	return NewSet(s)
}

// Set is a set of hashed signatures: sorted, without repeats.
type Set []uint64

// NewSet sorts xs and drops repeats, in place.
func NewSet(xs []uint64) Set {
	slices.Sort(xs)
	return Set(slices.Compact(xs))
}

// Intersection is the number of signatures a and b share.
func Intersection(a, b Set) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// Jaccard is |a ∩ b| / |a ∪ b|, 0 when both are empty.
func Jaccard(a, b Set) float64 {
	return jaccard(Intersection(a, b), len(a), len(b))
}

func jaccard(inter, na, nb int) float64 {
	if u := na + nb - inter; u > 0 {
		return float64(inter) / float64(u)
	}
	return 0
}
