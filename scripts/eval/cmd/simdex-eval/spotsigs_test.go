package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/simdex/simdex/scripts/eval/pairs"
	"github.com/simdex/simdex/scripts/eval/spotsigs"
	"github.com/simdex/simdex/scripts/eval/whole"
)

const (
	storyA = "The council was meeting on Tuesday to discuss the budget for the coming year. The mayor has said that the new bridge will be finished before the winter and the roads are going to be repaired in the spring. A spokesman for the city was not available for comment."
	storyB = "The harvest was early this year in the northern valleys. Farmers have reported that the apples are larger than usual and the prices at the market were falling by the end of the week. The weather has been dry since the middle of the summer."
	storyC = "The museum is opening a new wing for modern sculpture. The director has been planning the exhibition for three years and the first visitors will be admitted on Saturday. A catalogue of the works is available at the entrance."
	zhDoc  = "在工具栏上单击插入表格按钮，将打开的对话框中选择行数和列数。表格的样式可以在属性中修改，这是最常用的方法。"
)

// TestSpotSigsPeer runs the peer on a tiny whole-corpus set: an edited
// copy is found, an unrelated query and a never-stored document are not,
// and the report section and summary row say so.
func TestSpotSigsPeer(t *testing.T) {
	ps := []pairs.Pair{
		{ID: "p1", Duplicate: true, Kind: "typos", Lang: "en", Source: "brown", Bucket: "medium", Doc: "A",
			Original: pairs.Text{ID: "A", Title: "Budget", Body: storyA}, Query: pairs.Text{Title: "Budget", Body: strings.Replace(storyA, "Tuesday", "Tuesdya", 1)}},
		{ID: "n1", Kind: "neg_topic", Lang: "en", Source: "brown", Bucket: "medium", Doc: "A", QueryDoc: "C",
			Original: pairs.Text{ID: "A", Title: "Budget", Body: storyA}, Query: pairs.Text{Title: "Museum", Body: storyC}},
		{ID: "p2", Duplicate: true, Kind: "punct", Lang: "zh", Source: "lohelp", Bucket: "short", Doc: "Z",
			Original: pairs.Text{ID: "Z", Title: "表格", Body: zhDoc}, Query: pairs.Text{Title: "表格", Body: strings.ReplaceAll(zhDoc, "，", "、")}},
	}
	set := pairs.WholeSet{
		Stored: []pairs.Stored{{Text: pairs.Text{ID: "B", Title: "Harvest", Body: storyB}, Doc: "B", Lang: "en", Source: "brown", Bucket: "medium"}},
		Probes: []pairs.Probe{{ID: "u1", Kind: pairs.ProbeUnstored, Doc: "C", Lang: "en", Source: "brown", Bucket: "medium", Query: pairs.Text{Title: "Museum", Body: storyC}}},
	}
	wc := newWholeCorpus(ps, set)
	pr, err := runSpotSigs(slog.New(slog.DiscardHandler), spotsigs.DefaultConfig(), ps, wc)
	if err != nil {
		t.Fatal(err)
	}
	rs := pr.byTau[spotsigsTau]
	if len(rs) != 4 {
		t.Fatalf("%d judged queries, want 4", len(rs))
	}
	if !rs[0].Found || len(rs[0].Hits) != 1 || rs[0].Hits[0].Stored != "A" {
		t.Errorf("edited copy: %+v", rs[0])
	}
	if len(rs[1].Hits) != 0 || len(rs[3].Hits) != 0 {
		t.Errorf("unrelated or never-stored query has hits: %+v, %+v", rs[1].Hits, rs[3].Hits)
	}
	if !rs[2].Found {
		t.Errorf("Chinese copy with other punctuation not found: %+v", rs[2])
	}
	if c := pr.pairCounts(spotsigsTau); c.TP != 2 || c.FP != 0 || c.TN != 1 || c.FN != 0 {
		t.Errorf("pair counts %+v, want 2 TP and 1 TN", c)
	}
	if len(pr.variants) != len(spotsigsVariants) {
		t.Errorf("%d variants, want %d", len(pr.variants), len(spotsigsVariants))
	}
	// The service's answers: the originals of the positives.
	service := whole.Judge(wc.judge, wc.stored, wc.queries, []whole.Answer{
		{Duplicate: true, Hits: []whole.Hit{{ID: "A"}}}, {}, {Duplicate: true, Hits: []whole.Hit{{ID: "Z"}}}, {},
	})
	sec := pr.section(service)
	for _, want := range []string{
		"\n## Peer: SpotSigs\n",
		"on the same 3 stored documents and 4 queries",
		"| simdex (service answer) | 2 | 1.000 | 1.000 |",
		"| **SpotSigs (d = 2, c = 3, τ = 0.44)** | 2 | 1.000 | 1.000 |",
		"| SpotSigs (d = 1, c = 2, τ = 0.44) |",
		"### By language and length: simdex vs SpotSigs (τ = 0.44)",
		"| all | 1.000 (2) | 1.000 (2) | 1.000 | 1.000 | 0.0% | 0.0% |",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("section lacks %q:\n%s", want, sec)
		}
	}
	if s := pr.summary(); s.Name != "peer: SpotSigs (d = 2, c = 3, τ = 0.44)" || s.Counts.TP != 2 {
		t.Errorf("summary %+v", s)
	}
}
