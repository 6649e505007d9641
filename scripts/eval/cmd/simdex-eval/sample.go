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
	sel := fs.String("select", "", "file of query<TAB>stored id pairs to draw (required unless -recount)")
	recount := fs.String("recount", "", "instead of drawing, recount a labelled sample (e.g. scripts/eval/judge/testdata/labelled-hits.jsonl) against -lines: every hit keeps its texts and label, its line counts and verdict are taken anew")
	out := fs.String("out", "", "output JSON Lines (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tmpl == "" || *out == "" || (*recount == "" && (*hits == "" || *sel == "")) {
		return fmt.Errorf("sample: -lines and -out are required, and -hits and -select unless -recount")
	}
	counts, err := readLineCounts(*tmpl)
	if err != nil {
		return err
	}
	j := judge.FromCounts(counts, judge.MinDocs)
	if *recount != "" {
		return recountSample(log, j, *recount, *out)
	}
	b, err := os.ReadFile(*sel)
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
		found[i] = &judge.Labelled{Query: h.Query, Stored: h.Stored, Kind: h.Kind, QueryText: h.QueryText, StoredText: h.StoredText}
		count(j, found[i])
	}
	if err := sc.Err(); err != nil {
		return err
	}
	var keep []*judge.Labelled
	for i, l := range found {
		if l == nil {
			log.Warn("hit not found", "query", order[i][0], "stored", order[i][1])
			continue
		}
		keep = append(keep, l)
	}
	return writeSample(log, keep, *out)
}

// count sets a labelled hit's line counts from j's stored corpus and the
// criterion's verdict on them.
func count(j *judge.Judge, l *judge.Labelled) {
	ld := j.LineDocs(l.QueryText)
	for line, n := range j.LineDocs(l.StoredText) {
		ld[line] = n
	}
	l.LineDocs = ld
	l.Verdict = judge.FromCounts(ld, judge.MinDocs).RelateTexts(l.QueryText, l.StoredText)
}

// recountSample rewrites a labelled sample with every hit's line counts
// and verdict taken from j: the labels, which an editor gave on the
// texts alone, stay as they are.
func recountSample(log *slog.Logger, j *judge.Judge, in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	sample, err := judge.ReadLabelled(f)
	f.Close()
	if err != nil {
		return err
	}
	ls := make([]*judge.Labelled, len(sample))
	for i := range sample {
		count(j, &sample[i])
		ls[i] = &sample[i]
	}
	return writeSample(log, ls, out)
}

func writeSample(log *slog.Logger, ls []*judge.Labelled, out string) error {
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, l := range ls {
		if err := enc.Encode(l); err != nil {
			w.Close()
			return err
		}
	}
	log.Info("sample written", "hits", len(ls), "out", out)
	return w.Close()
}

// readLineCounts reads a run's recurring lines: "count<TAB>line" per line.
func readLineCounts(path string) (map[string]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		n, line, ok := strings.Cut(l, "\t")
		if !ok {
			return nil, fmt.Errorf("sample: bad line count %q", l)
		}
		var c int
		if _, err := fmt.Sscan(n, &c); err != nil {
			return nil, fmt.Errorf("sample: bad line count %q", l)
		}
		counts[line] = c
	}
	return counts, nil
}
