package pairs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/scripts/eval/corpus"
	"github.com/simdex/simdex/scripts/eval/textutil"
)

// Whole-corpus probe kinds: queries that are no pair's query.
const (
	// ProbeUnstored is a corpus document that was never stored, as is.
	ProbeUnstored = "unstored"
	// ProbeUnstoredSite is a never-stored document published on the
	// language's site (pairs.NewSite): it shares the site's header, byline
	// pattern and footer with the stored site articles.
	ProbeUnstoredSite = "unstored_site"
	// ProbeQuoted is a never-stored document with a stored short quotation
	// inserted verbatim: the quotation is an excerpt of the query, not a
	// duplicate of it.
	ProbeQuoted = "quoted"
)

// ProbeKinds lists the probe kinds in report order.
var ProbeKinds = []string{ProbeUnstored, ProbeUnstoredSite, ProbeQuoted}

// Stored is a document stored for the whole-corpus benchmark besides the
// pairs' originals: every other document of the split that is not fresh.
type Stored struct {
	Text
	Doc    string `json:"doc"`
	Lang   string `json:"lang"`
	Source string `json:"source"`
	Bucket string `json:"bucket"`
	// SourceKey is the source a publisher would name for it (DocSource).
	SourceKey string `json:"source_key,omitempty"`
}

// Probe is a whole-corpus query made from a never-stored document.
type Probe struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Doc is the (never stored) corpus document the query was made from;
	// Quote is the stored quotation inserted in a ProbeQuoted query.
	Doc    string `json:"doc"`
	Quote  string `json:"quote,omitempty"`
	Lang   string `json:"lang"`
	Source string `json:"source"`
	Bucket string `json:"bucket"`
	Query  Text   `json:"query"`
	// SourceKey is the source a publisher would name for the query
	// (DocSource; the site's for a page on the site).
	SourceKey string `json:"source_key,omitempty"`
}

// WholeSet is what the whole-corpus benchmark adds to the pairs.
type WholeSet struct {
	Stored []Stored
	Probes []Probe
}

// WholeConfig sizes the probes.
type WholeConfig struct {
	// PerCell is the most never-stored documents probed per source,
	// language and length cell (each as is and, for sources without
	// furniture of their own, on the site).
	PerCell int
	// Quoted is the most ProbeQuoted queries per language.
	Quoted int
}

// Whole builds the whole-corpus additions for docs under cfg (the same
// Config the pairs were generated with, so fresh documents agree): every
// non-fresh document of the split not already among the pairs' originals
// is stored, and fresh documents become probes.
func Whole(docs []corpus.Doc, cfg Config, ps []Pair, wc WholeConfig) WholeSet {
	have := map[string]bool{}
	for _, p := range ps {
		have[p.Original.ID] = true
	}
	sorted := slices.Clone(docs)
	slices.SortFunc(sorted, func(a, b corpus.Doc) int { return strings.Compare(a.ID, b.ID) })
	var set WholeSet
	cells := map[string][]corpus.Doc{}
	quotes := map[string][]corpus.Doc{}
	hosts := map[string][]corpus.Doc{}
	for _, d := range sorted {
		if !InSplit(d.ID, cfg.Split) {
			continue
		}
		if !IsFresh(cfg.Seed, d.ID) {
			if d.Source == "quote" {
				quotes[d.Lang] = append(quotes[d.Lang], d)
			}
			if !have[d.ID] {
				set.Stored = append(set.Stored, Stored{Text: raw(d), Doc: d.ID, Lang: d.Lang, Source: d.Source, Bucket: d.Bucket(), SourceKey: DocSource(d)})
			}
			continue
		}
		cells[d.Source+"/"+d.Lang+"/"+d.Bucket()] = append(cells[d.Source+"/"+d.Lang+"/"+d.Bucket()], d)
		if (d.Source == "brown" || d.Source == "sotu" || d.Source == "lohelp") && d.Bucket() != corpus.Short {
			hosts[d.Lang] = append(hosts[d.Lang], d)
		}
	}
	for _, cell := range sortedKeys(cells) {
		ds := cells[cell]
		r := rand.New(rand.NewPCG(cfg.Seed, xxhash.Sum64String("probe:"+cell)))
		r.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
		for _, d := range ds[:min(len(ds), wc.PerCell)] {
			pr := Probe{ID: d.ID + "|" + ProbeUnstored, Kind: ProbeUnstored, Doc: d.ID, Lang: d.Lang, Source: d.Source, Bucket: d.Bucket(), Query: raw(d), SourceKey: DocSource(d)}
			set.Probes = append(set.Probes, pr)
			switch d.Source {
			case "mail", "site", "man":
				// Already in their own source's furniture.
			default:
				site := NewSite(d.Lang, siteSplit(cfg.Split, d.ID))
				pr.ID, pr.Kind = d.ID+"|"+ProbeUnstoredSite, ProbeUnstoredSite
				pr.SourceKey = siteSource(d.Lang, siteSplit(cfg.Split, d.ID))
				pr.Query = Text{ID: d.ID + "@site", Title: d.Title, Body: site.Page(r, d.Title, d.Body, nil)}
				set.Probes = append(set.Probes, pr)
			}
		}
	}
	for _, lang := range []string{"en", "zh"} {
		hs, qs := hosts[lang], quotes[lang]
		if len(hs) == 0 || len(qs) == 0 {
			continue
		}
		r := rand.New(rand.NewPCG(cfg.Seed, xxhash.Sum64String("quoted:"+lang)))
		for i := range min(wc.Quoted, len(hs)) {
			h := hs[(i*7919)%len(hs)]
			q := qs[r.IntN(len(qs))]
			ps := textutil.Paragraphs(h.Body)
			at := r.IntN(len(ps) + 1)
			lead := map[string]string{"en": "As one reader put it: ", "zh": "正如一位读者所说："}[lang]
			ins := lead + q.Body
			body := strings.Join(slices.Insert(slices.Clone(ps), at, ins), "\n")
			set.Probes = append(set.Probes, Probe{ID: fmt.Sprintf("%s|%s#%d", h.ID, ProbeQuoted, i), Kind: ProbeQuoted, Doc: h.ID, Quote: q.ID,
				Lang: lang, Source: h.Source, Bucket: h.Bucket(), Query: Text{ID: h.ID + "+quote", Title: h.Title, Body: body}, SourceKey: DocSource(h)})
		}
	}
	return set
}

// siteSplit is the site a never-stored document is published on: the
// split's own, or for "all" the site of the document's split.
func siteSplit(split, id string) string {
	if split != "all" {
		return split
	}
	if InSplit(id, "dev") {
		return "dev"
	}
	return "test"
}

// wholeLine is one line of a whole-corpus file: a stored document or a
// probe.
type wholeLine struct {
	Stored *Stored `json:"stored,omitempty"`
	Probe  *Probe  `json:"probe,omitempty"`
}

// WriteWhole writes set as JSON Lines.
func WriteWhole(w io.Writer, set WholeSet) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range set.Stored {
		if err := enc.Encode(wholeLine{Stored: &set.Stored[i]}); err != nil {
			return err
		}
	}
	for i := range set.Probes {
		if err := enc.Encode(wholeLine{Probe: &set.Probes[i]}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadWhole reads a file written by WriteWhole.
func ReadWhole(r io.Reader) (WholeSet, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var set WholeSet
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var l wholeLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return set, fmt.Errorf("%w: whole-corpus line %d: %v", ErrBadPair, line, err)
		}
		switch {
		case l.Stored != nil && l.Stored.ID != "":
			set.Stored = append(set.Stored, *l.Stored)
		case l.Probe != nil && l.Probe.ID != "":
			set.Probes = append(set.Probes, *l.Probe)
		default:
			return set, fmt.Errorf("%w: whole-corpus line %d: neither a stored document nor a probe", ErrBadPair, line)
		}
	}
	return set, sc.Err()
}
