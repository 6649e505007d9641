package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/simdex/simdex/scripts/eval/judge"
	"github.com/simdex/simdex/scripts/eval/whole"
)

// cmdSample draws the hits to label by hand: for every selected
// (query, stored) pair of a run's -content-hits file it writes both texts
// whole, the counts of their recurring lines in the run's stored corpus, and the
// criterion's verdict, as judge.Labelled records without a label.
func cmdSample(_ context.Context, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("sample", flag.ContinueOnError)
	hits := fs.String("hits", "", "content-judged hits from `simdex-eval run -content-hits` (required)")
	tmpl := fs.String("lines", "", "the run's recurring lines with their document counts (the -content-hits file with .lines appended; required)")
	sel := fs.String("select", "", "file of query<TAB>stored id pairs to draw (required)")
	out := fs.String("out", "", "output JSON Lines (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *hits == "" || *tmpl == "" || *sel == "" || *out == "" {
		return fmt.Errorf("sample: -hits, -lines, -select and -out are required")
	}
	b, err := os.ReadFile(*tmpl)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		n, line, ok := strings.Cut(l, "\t")
		if !ok {
			return fmt.Errorf("sample: bad line count %q", l)
		}
		var c int
		if _, err := fmt.Sscan(n, &c); err != nil {
			return fmt.Errorf("sample: bad line count %q", l)
		}
		counts[line] = c
	}
	j := judge.FromCounts(counts, judge.MinDocs)
	b, err = os.ReadFile(*sel)
	if err != nil {
		return err
	}
	want := map[[2]string]int{}
	var order [][2]string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		q, s, ok := strings.Cut(l, "\t")
		if !ok {
			return fmt.Errorf("sample: bad selection line %q", l)
		}
		want[[2]string{q, s}] = len(order)
		order = append(order, [2]string{q, s})
	}
	f, err := os.Open(*hits)
	if err != nil {
		return err
	}
	defer f.Close()
	found := make([]*judge.Labelled, len(order))
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var h whole.WrongHit
		if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
			return err
		}
		i, ok := want[[2]string{h.Query, h.Stored}]
		if !ok || found[i] != nil {
			continue
		}
		ld := j.LineDocs(h.QueryText)
		for l, n := range j.LineDocs(h.StoredText) {
			ld[l] = n
		}
		found[i] = &judge.Labelled{Query: h.Query, Stored: h.Stored, Kind: h.Kind, QueryText: h.QueryText, StoredText: h.StoredText, LineDocs: ld,
			Verdict: judge.FromCounts(ld, judge.MinDocs).RelateTexts(h.QueryText, h.StoredText)}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	w, err := os.Create(*out)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	for i, l := range found {
		if l == nil {
			log.Warn("hit not found", "query", order[i][0], "stored", order[i][1])
			continue
		}
		if err := enc.Encode(l); err != nil {
			w.Close()
			return err
		}
		n++
	}
	log.Info("sample written", "hits", n, "out", *out)
	return w.Close()
}
