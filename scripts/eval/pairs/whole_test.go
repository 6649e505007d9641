package pairs

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/simdex/simdex/scripts/eval/corpus"
)

func wholeFixture(t *testing.T) ([]corpus.Doc, Config, []Pair, WholeSet) {
	t.Helper()
	docs := synthCorpus(160)
	for i := range docs {
		if docs[i].Source == "alpha" {
			docs[i].Source = "brown"
		}
	}
	for i := range 40 {
		lang := []string{"en", "zh"}[i%2]
		body := fmt.Sprintf("Quotation number %d says that the river rose by %d feet overnight.", i, i+3)
		if lang == "zh" {
			body = fmt.Sprintf("第%d条语录说河水一夜之间涨了%d米。", i, i+3)
		}
		docs = append(docs, corpus.Doc{ID: fmt.Sprintf("quote:%s/%02d", lang, i), Source: "quote", Lang: lang, Topic: "quote", Body: body})
	}
	cfg := DefaultConfig()
	cfg.PerCell = 6
	ps := generate(t, docs, cfg)
	return docs, cfg, ps, Whole(docs, cfg, ps, WholeConfig{PerCell: 3, Quoted: 5})
}

func TestWhole(t *testing.T) {
	docs, cfg, ps, set := wholeFixture(t)
	byID := map[string]corpus.Doc{}
	for _, d := range docs {
		byID[d.ID] = d
	}
	originals := map[string]bool{}
	for _, p := range ps {
		originals[p.Original.ID] = true
	}
	for _, s := range set.Stored {
		if IsFresh(cfg.Seed, s.Doc) || originals[s.ID] {
			t.Errorf("stored %s: fresh %v, already an original %v", s.ID, IsFresh(cfg.Seed, s.Doc), originals[s.ID])
		}
	}
	if len(set.Stored) == 0 {
		t.Fatal("nothing stored besides the originals")
	}
	kinds := map[string]int{}
	site := NewSite("en", "dev").Header[0] + "|" + NewSite("en", "test").Header[0] + "|" + NewSite("zh", "dev").Header[0] + "|" + NewSite("zh", "test").Header[0]
	for _, p := range set.Probes {
		kinds[p.Kind]++
		if !IsFresh(cfg.Seed, p.Doc) {
			t.Errorf("probe %s made from the stored document %s", p.ID, p.Doc)
		}
		switch p.Kind {
		case ProbeUnstored:
			if p.Query.Body != byID[p.Doc].Body {
				t.Errorf("probe %s is not its document as is", p.ID)
			}
		case ProbeUnstoredSite:
			if h := strings.SplitN(p.Query.Body, "\n", 2)[0]; !strings.Contains(site, h) {
				t.Errorf("probe %s does not start with a site's header: %q", p.ID, h)
			}
		case ProbeQuoted:
			q := byID[p.Quote]
			if q.Source != "quote" || IsFresh(cfg.Seed, q.ID) || !strings.Contains(p.Query.Body, q.Body) {
				t.Errorf("probe %s does not quote the stored quotation %s verbatim", p.ID, p.Quote)
			}
		}
	}
	for _, k := range ProbeKinds {
		if kinds[k] == 0 {
			t.Errorf("no %s probes (%v)", k, kinds)
		}
	}
	var b bytes.Buffer
	if err := WriteWhole(&b, set); err != nil {
		t.Fatal(err)
	}
	back, err := ReadWhole(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, set) {
		t.Error("whole-corpus set does not survive WriteWhole and ReadWhole")
	}
}

func TestQueryDoc(t *testing.T) {
	_, cfg, ps, _ := wholeFixture(t)
	seen := map[string]bool{}
	for _, p := range ps {
		switch {
		case p.Duplicate:
			if p.QueryDoc != p.Doc || p.NotDoc != "" {
				t.Errorf("%s: query doc %q, not doc %q", p.ID, p.QueryDoc, p.NotDoc)
			}
		case p.Kind == "neg_keyword":
			if p.QueryDoc != "" || p.NotDoc != p.Doc {
				t.Errorf("%s: query doc %q, not doc %q", p.ID, p.QueryDoc, p.NotDoc)
			}
		default:
			if p.QueryDoc == "" || p.QueryDoc == p.Doc || !IsFresh(cfg.Seed, p.QueryDoc) {
				t.Errorf("%s: query doc %q is not another, fresh document", p.ID, p.QueryDoc)
			}
		}
		seen[p.Kind] = true
	}
	if !seen["neg_keyword"] || !seen["neg_topic"] {
		t.Errorf("kinds made: %v", seen)
	}
}

func TestReadWholeBad(t *testing.T) {
	if _, err := ReadWhole(strings.NewReader("{\"other\":1}\n")); err == nil {
		t.Error("a line with neither a stored document nor a probe was accepted")
	}
}
