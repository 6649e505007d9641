package pairs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/scripts/eval/corpus"
	"github.com/simdex/simdex/scripts/eval/textutil"
)

// Config controls Generate. Start from DefaultConfig.
type Config struct {
	// Seed drives every random choice: which documents, which site
	// templates, which words are edited. Another seed gives other pairs
	// from the same corpus.
	Seed uint64
	// Split selects documents by a fixed hash of their id, independent of
	// Seed: "dev" (70%), "test" (the other 30%) or "all". Tune on dev,
	// report on test, and no tuning decision has seen a test document.
	// dev and test also draw site names, navigation, footers, ads,
	// related-list headings and synonyms from disjoint halves of the
	// built-in vocabulary.
	Split string
	// Kinds enables pair kinds by name (see Kinds); empty enables all.
	// Leaving some out of tuning and measuring them afterwards checks
	// that a change generalizes to edits it was not fitted to.
	Kinds []string
	// PerCell is the most originals drawn per (source, language, length
	// bucket) cell, so no source or bucket swamps the others.
	PerCell int
	// Positives and Negatives are the pairs made per original.
	Positives, Negatives int
	// Templates is the number of site templates drawn per language.
	Templates int
}

// DefaultConfig is the configuration docs/QUALITY.md reports on.
func DefaultConfig() Config {
	return Config{Seed: 1, Split: "all", PerCell: 250, Positives: 3, Negatives: 2, Templates: 24}
}

// Validate reports the first unusable setting, wrapped in ErrBadConfig.
func (c Config) Validate() error {
	switch {
	case c.Split != "all" && c.Split != "dev" && c.Split != "test":
		return fmt.Errorf("%w: split %q not all, dev or test", ErrBadConfig, c.Split)
	case c.PerCell < 1:
		return fmt.Errorf("%w: per-cell %d < 1", ErrBadConfig, c.PerCell)
	case c.Positives < 0 || c.Negatives < 0 || c.Positives+c.Negatives == 0:
		return fmt.Errorf("%w: positives %d, negatives %d: want >= 0 and not both 0", ErrBadConfig, c.Positives, c.Negatives)
	case c.Templates < 2:
		return fmt.Errorf("%w: templates %d < 2", ErrBadConfig, c.Templates)
	}
	for _, k := range c.Kinds {
		if _, ok := kindByName[k]; !ok {
			return fmt.Errorf("%w: unknown kind %q (have %s)", ErrBadConfig, k, strings.Join(Kinds(), ", "))
		}
	}
	return nil
}

// InSplit reports whether the document id belongs to split.
func InSplit(id, split string) bool { return corpus.InSplit(id, split) }

// IsFresh reports whether, under seed, document id is fresh: never
// stored, only ever a query (a quarter of the documents).
func IsFresh(seed uint64, id string) bool {
	return xxhash.Sum64String(fmt.Sprintf("fresh:%d:%s", seed, id))%4 == 0
}

// gen holds what the edits draw on.
type gen struct {
	cfg       Config
	byLang    map[string][]corpus.Doc        // every selected document, donors of sentences, titles, words
	fresh     map[string][]corpus.Doc        // documents never stored, by "source/topic" and by "source"
	templates map[string][]template          // by language
	shingles  map[string]map[uint64]struct{} // body 5-gram sets by document id, filled lazily
	vocab     vocab                          // boilerplate and synonyms of the split
}

// shingleSet returns d's body 5-gram set (hashed), computing it once.
func (g *gen) shingleSet(d corpus.Doc) map[uint64]struct{} {
	s, ok := g.shingles[d.ID]
	if !ok {
		s = textutil.HashedShingles(d.Body, 5)
		g.shingles[d.ID] = s
	}
	return s
}

// Generate makes pairs from docs. Documents of the split are divided (by
// Seed) into originals, which are stored in the index, and fresh ones,
// which only ever appear as the query side of negative pairs, so a
// negative's query can never hit itself. The output order is
// deterministic for a given corpus and Config.
func Generate(docs []corpus.Doc, cfg Config) ([]Pair, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &gen{cfg: cfg, byLang: map[string][]corpus.Doc{}, fresh: map[string][]corpus.Doc{}, templates: map[string][]template{}, shingles: map[string]map[uint64]struct{}{}, vocab: newVocab(cfg.Split)}
	enabled := map[string]bool{}
	for _, k := range cfg.Kinds {
		enabled[k] = true
	}
	cells := map[string][]corpus.Doc{}
	sorted := slices.Clone(docs)
	slices.SortFunc(sorted, func(a, b corpus.Doc) int { return strings.Compare(a.ID, b.ID) })
	for _, d := range sorted {
		if err := d.Validate(); err != nil {
			return nil, err
		}
		if !InSplit(d.ID, cfg.Split) {
			continue
		}
		g.byLang[d.Lang] = append(g.byLang[d.Lang], d)
		if IsFresh(cfg.Seed, d.ID) {
			g.fresh[d.Source+"/"+d.Topic] = append(g.fresh[d.Source+"/"+d.Topic], d)
			g.fresh[d.Source] = append(g.fresh[d.Source], d)
			continue
		}
		cell := d.Source + "/" + d.Lang + "/" + d.Bucket()
		cells[cell] = append(cells[cell], d)
	}
	tr := rand.New(rand.NewPCG(cfg.Seed, 0x7e3))
	for _, lang := range []string{"en", "zh"} {
		for i := range cfg.Templates {
			g.templates[lang] = append(g.templates[lang], newTemplate(tr, g.vocab, lang, fmt.Sprintf("%s%02d", lang, i)))
		}
	}
	var out []Pair
	used := map[string]int{} // pairs made per kind, to spread kinds evenly
	for _, cell := range sortedKeys(cells) {
		ds := cells[cell]
		r := rand.New(rand.NewPCG(cfg.Seed, xxhash.Sum64String("cell:"+cell)))
		r.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
		if len(ds) > cfg.PerCell {
			ds = ds[:cfg.PerCell]
		}
		for _, d := range ds {
			for _, positive := range []bool{true, false} {
				want := cfg.Positives
				if !positive {
					want = cfg.Negatives
				}
				tried := map[string]bool{}
				for made := 0; made < want; {
					k, ok := g.nextKind(d, positive, enabled, used, tried)
					if !ok {
						break
					}
					tried[k.name] = true
					pr := rand.New(rand.NewPCG(cfg.Seed, xxhash.Sum64String(d.ID+"/"+k.name)))
					p, ok := k.make(g, pr, d)
					if !ok {
						continue
					}
					p.ID = d.ID + "|" + k.name
					p.Kind, p.Duplicate = k.name, k.positive
					p.Lang, p.Source, p.Topic, p.Bucket, p.Doc = d.Lang, d.Source, d.Topic, d.Bucket(), d.ID
					// A query made from another document (a negative's
					// partner) is of the same source and topic as d.
					p.OriginalSource, p.QuerySource = textSource(p.Original, p.Detail, false, d), textSource(p.Query, p.Detail, true, d)
					switch {
					case k.positive:
						p.QueryDoc = d.ID
					case strings.HasPrefix(p.Detail, "other="):
						p.QueryDoc, _, _ = strings.Cut(strings.TrimPrefix(p.Detail, "other="), ",")
					default: // a copy of d whose content differs (a key word replaced)
						p.NotDoc = d.ID
					}
					sim := textutil.Overlap(p.Original.Title+"\n"+p.Original.Body, p.Query.Title+"\n"+p.Query.Body)
					p.Size = math.Round((1-sim)*1000) / 1000
					out = append(out, p)
					used[k.name]++
					made++
				}
			}
		}
	}
	return out, nil
}

// nextKind picks, among the enabled kinds of the right polarity that apply
// to d and were not tried on it yet, the one used least so far (ties in
// Kinds order), so every kind gets about the same number of pairs.
func (g *gen) nextKind(d corpus.Doc, positive bool, enabled map[string]bool, used map[string]int, tried map[string]bool) (kindSpec, bool) {
	best, found := kindSpec{}, false
	for _, k := range kinds {
		if k.positive != positive || tried[k.name] || (len(enabled) > 0 && !enabled[k.name]) {
			continue
		}
		if k.applies != nil && !k.applies(d) {
			continue
		}
		if !found || used[k.name] < used[best.name] {
			best, found = k, true
		}
	}
	return best, found
}

func raw(d corpus.Doc) Text { return Text{ID: d.ID, Title: d.Title, Body: d.Body} }

// template draws one of the language's templates, other than not (an id).
func (g *gen) template(r *rand.Rand, lang, not string) template {
	ts := g.templates[lang]
	for {
		t := ts[r.IntN(len(ts))]
		if t.id != not {
			return t
		}
	}
}

// donor draws another document of the same language.
func (g *gen) donor(r *rand.Rand, d corpus.Doc) corpus.Doc {
	ds := g.byLang[d.Lang]
	for range 20 {
		o := ds[r.IntN(len(ds))]
		if o.ID != d.ID {
			return o
		}
	}
	return d
}

// freshPartner draws a fresh (never stored) document for a negative pair
// from the pool key ("source/topic" or "source"), preferring the same
// length bucket and, among up to 25 candidates, the one sharing the most
// text with d without being a near-copy of it (5-gram overlap < 0.5).
func (g *gen) freshPartner(r *rand.Rand, d corpus.Doc, key string) (corpus.Doc, bool) {
	pool := g.fresh[key]
	if len(pool) == 0 {
		return corpus.Doc{}, false
	}
	var best corpus.Doc
	bestScore, found := -1.0, false
	for range min(25, 2*len(pool)) {
		c := pool[r.IntN(len(pool))]
		if c.ID == d.ID || c.Lang != d.Lang {
			continue
		}
		ov := textutil.HashedJaccard(g.shingleSet(c), g.shingleSet(d))
		if ov >= 0.5 {
			continue
		}
		score := ov
		if c.Bucket() == d.Bucket() {
			score++
		}
		if score > bestScore {
			best, bestScore, found = c, score, true
		}
	}
	return best, found
}
