package sparkjob

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/kvindex"
)

// DedupSummary is a dedup's counts (the job's summary.json holds these
// among others).
type DedupSummary struct {
	Records      int64 `json:"records"`
	Rejected     int64 `json:"rejected"`
	Documents    int64 `json:"documents"`
	DuplicateIDs int64 `json:"duplicate_ids"`
	// CandidatePairs: pairs within k, plus (with bands) pairs beyond k
	// that share an LSH band; each pair once.
	CandidatePairs     int64 `json:"candidate_pairs"`
	ConfirmedPairs     int64 `json:"confirmed_pairs"`
	Clusters           int64 `json:"clusters"`
	ClusteredDocuments int64 `json:"clustered_documents"`
	LargestCluster     int64 `json:"largest_cluster"`
}

// ClusterRow is one document of a cluster of two or more, as the job
// writes it.
type ClusterRow struct {
	ID          string `json:"id"`
	Cluster     string `json:"cluster"`
	ClusterSize int64  `json:"cluster_size"`
}

// DedupResult is a dedup's outcome.
type DedupResult struct {
	Summary DedupSummary
	// Pairs are the confirmed pairs, sorted by (IDA, IDB).
	Pairs []PairRow
	// Clusters maps every document in a confirmed pair to its cluster id.
	Clusters map[string]string
}

// DedupReference is the single-process reference of the Spark job: it
// reads the input files in path order (each file's lines in order; the
// last record of a repeated id wins, as in the job and in a load), encodes
// every line as DedupMap does, compares every pair of documents (brute
// force: within cfg.K, or with cfg.Bands beyond it and sharing an LSH
// band or a text key of at most kvindex.TextKeyMaxDocs documents), judges
// each candidate with JudgeSides (each document with the template its
// text keys' counts over the set and among its source's documents reveal,
// SetKeyCounts) and labels the
// components of the confirmed pairs by union-find (Components). Plain
// files only.
func DedupReference(ctx context.Context, cfg DedupConfig, paths []string) (DedupResult, error) {
	var res DedupResult
	e, err := newDedupEncoder(ctx, cfg)
	if err != nil {
		return res, err
	}
	paths = slices.Clone(paths)
	slices.Sort(paths)
	var docs []DedupDoc
	at := map[string]int{}
	var order uint64
	for _, p := range paths {
		if err := eachLine(p, func(line []byte) error {
			order++
			d, err := e.encode(line, order)
			switch {
			case errors.Is(err, bulkload.ErrNotRecord):
				return nil
			case err != nil:
				res.Summary.Rejected++
				return nil
			}
			res.Summary.Records++
			if i, ok := at[d.ID]; ok {
				docs[i] = d
				return nil
			}
			at[d.ID] = len(docs)
			docs = append(docs, d)
			return nil
		}); err != nil {
			return res, err
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	slices.SortFunc(docs, func(a, b DedupDoc) int { return cmp.Compare(a.ID, b.ID) })
	res.Summary.Documents = int64(len(docs))
	res.Summary.DuplicateIDs = res.Summary.Records - res.Summary.Documents
	bands := make([][]uint64, len(docs))
	if cfg.Bands {
		for i := range docs {
			bands[i] = DedupBands(e.rule, docs[i].Doc)
		}
	}
	j, err := dedupJudge(cfg)
	if err != nil {
		return res, err
	}
	set := make([]kvindex.Document, len(docs))
	sources := make([]string, len(docs))
	for i := range docs {
		set[i] = docs[i].Doc
		sources[i] = e.ix.SourceOf(docs[i].Doc.Attrs)
	}
	counts := SetKeyCounts(set, sources)
	sides := make([]decide.Side, len(docs))
	small := make([][]uint64, len(docs)) // with Bands: text keys of at most TextKeyMaxDocs documents
	for i := range docs {
		sides[i] = StoredSide(j, docs[i].Doc, counts[i])
		if cfg.Bands {
			// Overall counts only: a scoped row names no candidates.
			for k, n := range counts[i].Docs {
				if n <= kvindex.TextKeyMaxDocs {
					small[i] = append(small[i], k)
				}
			}
		}
	}
	var pairs [][2]string
	for i := range docs {
		a := &docs[i]
		for j2 := i + 1; j2 < len(docs); j2++ {
			b := &docs[j2]
			d := fingerprint.Distance(a.Doc.Fingerprint, b.Doc.Fingerprint)
			if d > cfg.K && !shareBand(bands[i], bands[j2]) && !shareKey(small[i], small[j2]) {
				continue
			}
			res.Summary.CandidatePairs++
			if row, ok := JudgeSides(j.Rule, cfg.Policy, a.Doc, b.Doc, sides[i], sides[j2], cfg.K); ok {
				res.Pairs = append(res.Pairs, row)
				pairs = append(pairs, [2]string{row.IDA, row.IDB})
			}
		}
		if i%256 == 0 && ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	res.Clusters = Components(pairs)
	res.Summary.summarize(res.Pairs, res.Clusters)
	return res, nil
}

// shareKey reports whether a and b hold a common value.
func shareKey(a, b []uint64) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// shareBand reports whether two band lists hold an equal hash at the same
// band index.
func shareBand(a, b []uint64) bool {
	for i := range min(len(a), len(b)) {
		if a[i] == b[i] {
			return true
		}
	}
	return false
}

// summarize sets the counts of pairs and clusters.
func (s *DedupSummary) summarize(pairs []PairRow, clusters map[string]string) {
	s.ConfirmedPairs = int64(len(pairs))
	size := clusterSizes(clusters)
	s.Clusters = int64(len(size))
	s.ClusteredDocuments = int64(len(clusters))
	for _, n := range size {
		s.LargestCluster = max(s.LargestCluster, n)
	}
}

func clusterSizes(clusters map[string]string) map[string]int64 {
	size := map[string]int64{}
	for _, c := range clusters {
		size[c]++
	}
	return size
}

// eachLine calls fn with every line of a file, without its end of line.
func eachLine(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if err := fn(bytes.TrimRight(line, "\r\n")); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// WriteDedupResult writes a result as the job lays out its output, in
// single files: DIR/pairs.jsonl, DIR/clusters.jsonl (documents sorted by
// id) and DIR/summary.json.
func WriteDedupResult(dir string, res DedupResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, p := range res.Pairs {
		if err := enc.Encode(p); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "pairs.jsonl"), b.Bytes(), 0o644); err != nil {
		return err
	}
	b.Reset()
	size := clusterSizes(res.Clusters)
	ids := make([]string, 0, len(res.Clusters))
	for id := range res.Clusters {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := res.Clusters[id]
		if err := enc.Encode(ClusterRow{ID: id, Cluster: c, ClusterSize: size[c]}); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "clusters.jsonl"), b.Bytes(), 0o644); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, "summary.json"), res.Summary)
}

// ReadDedupOutput reads a dedup's output directory: pairs.jsonl and
// clusters.jsonl, each a file or a directory of part files as Spark
// writes them (files whose names start with "_" or "." are skipped), and
// summary.json. Clusters of one document (written with --all-documents)
// are left out.
func ReadDedupOutput(dir string) (DedupResult, error) {
	res := DedupResult{Clusters: map[string]string{}}
	if err := readJSON(filepath.Join(dir, "summary.json"), &res.Summary); err != nil {
		return res, err
	}
	if err := eachJSONLine(filepath.Join(dir, "pairs.jsonl"), func(b []byte) error {
		var p PairRow
		if err := json.Unmarshal(b, &p); err != nil {
			return err
		}
		res.Pairs = append(res.Pairs, p)
		return nil
	}); err != nil {
		return res, err
	}
	slices.SortFunc(res.Pairs, comparePairs)
	err := eachJSONLine(filepath.Join(dir, "clusters.jsonl"), func(b []byte) error {
		var c ClusterRow
		if err := json.Unmarshal(b, &c); err != nil {
			return err
		}
		if _, dup := res.Clusters[c.ID]; dup {
			return fmt.Errorf("document %q twice in clusters", c.ID)
		}
		if c.ClusterSize <= 1 && c.Cluster == c.ID {
			return nil
		}
		res.Clusters[c.ID] = c.Cluster
		return nil
	})
	return res, err
}

func comparePairs(a, b PairRow) int {
	return cmp.Or(cmp.Compare(a.IDA, b.IDA), cmp.Compare(a.IDB, b.IDB))
}

// eachJSONLine calls fn with every non-empty line of path, a file or a
// directory of part files.
func eachJSONLine(path string, fn func([]byte) error) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	files := []string{path}
	if fi.IsDir() {
		files = nil
		ents, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if n := e.Name(); !e.IsDir() && !strings.HasPrefix(n, "_") && !strings.HasPrefix(n, ".") {
				files = append(files, filepath.Join(path, n))
			}
		}
	}
	for _, f := range files {
		if err := eachLine(f, func(b []byte) error {
			if len(bytes.TrimSpace(b)) == 0 {
				return nil
			}
			if err := fn(b); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// CompareDedup lists how got (a job's output) differs from want (the
// reference), at most limit differences: summary counts, pairs (missing,
// extra, or with another distance, relation, clause or resemblance), pairs
// further apart than k unless bands are on, and documents with another
// cluster id.
func CompareDedup(want, got DedupResult, k int, bands bool, limit int) []string {
	var out []string
	add := func(format string, args ...any) bool {
		if len(out) < limit {
			out = append(out, fmt.Sprintf(format, args...))
		}
		return len(out) < limit
	}
	ws, gs := want.Summary, got.Summary
	for _, c := range []struct {
		name      string
		want, got int64
	}{
		{"records", ws.Records, gs.Records}, {"rejected", ws.Rejected, gs.Rejected}, {"documents", ws.Documents, gs.Documents},
		{"duplicate_ids", ws.DuplicateIDs, gs.DuplicateIDs}, {"candidate_pairs", ws.CandidatePairs, gs.CandidatePairs},
		{"confirmed_pairs", ws.ConfirmedPairs, gs.ConfirmedPairs}, {"clusters", ws.Clusters, gs.Clusters},
		{"clustered_documents", ws.ClusteredDocuments, gs.ClusteredDocuments}, {"largest_cluster", ws.LargestCluster, gs.LargestCluster},
	} {
		if c.want != c.got {
			add("summary %s: %d, want %d", c.name, c.got, c.want)
		}
	}
	wp := slices.Clone(want.Pairs)
	slices.SortFunc(wp, comparePairs)
	gp := slices.Clone(got.Pairs)
	slices.SortFunc(gp, comparePairs)
	for _, p := range gp {
		if p.IDA >= p.IDB {
			add("pair %s %s: ids not in order", p.IDA, p.IDB)
		}
		if !bands && p.Distance > k {
			add("pair %s %s: distance %d > k=%d", p.IDA, p.IDB, p.Distance, k)
		}
	}
	i, j := 0, 0
	for i < len(wp) || j < len(gp) {
		switch {
		case j == len(gp) || i < len(wp) && comparePairs(wp[i], gp[j]) < 0:
			add("pair %s %s (distance %d, %s): missing", wp[i].IDA, wp[i].IDB, wp[i].Distance, wp[i].Relation)
			i++
		case i == len(wp) || comparePairs(wp[i], gp[j]) > 0:
			add("pair %s %s (distance %d, %s): not confirmed by the reference", gp[j].IDA, gp[j].IDB, gp[j].Distance, gp[j].Relation)
			j++
		default:
			w, g := wp[i], gp[j]
			if w.Distance != g.Distance || w.Relation != g.Relation || w.Clause != g.Clause || !closeEnough(w.Resemblance, g.Resemblance) {
				add("pair %s %s: distance %d %s %s %.6f, want %d %s %s %.6f", g.IDA, g.IDB, g.Distance, g.Relation, g.Clause, g.Resemblance,
					w.Distance, w.Relation, w.Clause, w.Resemblance)
			}
			i, j = i+1, j+1
		}
	}
	ids := make([]string, 0, len(want.Clusters))
	for id := range want.Clusters {
		ids = append(ids, id)
	}
	for id := range got.Clusters {
		if _, ok := want.Clusters[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		w, okw := want.Clusters[id]
		g, okg := got.Clusters[id]
		switch {
		case !okg:
			add("document %s: in no cluster, want cluster %s", id, w)
		case !okw:
			add("document %s: in cluster %s, want none", id, g)
		case w != g:
			add("document %s: cluster %s, want %s", id, g, w)
		}
	}
	return out
}

// closeEnough compares resemblances written as JSON numbers by two
// writers.
func closeEnough(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}

// ParseDedupPolicy reads a dedup's policy name ("" is DefaultDedupPolicy).
func ParseDedupPolicy(s string) (decide.Policy, error) {
	if s == "" {
		return DefaultDedupPolicy, nil
	}
	p, err := decide.ParsePolicy(s)
	if err != nil {
		return p, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return p, nil
}
