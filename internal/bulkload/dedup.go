package bulkload

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/simdex/simdex/decide"
	"github.com/simdex/simdex/detect"
	"github.com/simdex/simdex/storage"
	"math/bits"
	"os"
	"slices"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// Batch self-dedup (Manku, Jain, Das Sarma 2007, "batch mode"): any two
// fingerprints within k <= K agree on the prefix of at least one table, so
// they meet in one of the sorted runs' rows. Each row's distinct
// fingerprints are compared pairwise; a pair is reported by the first table
// (lowest id) whose prefixes they share, so each pair appears once even
// across tables and shards. The documents of each pair of fingerprints
// within k (and of each fingerprint several documents carry) are then
// judged by the service's decision (package decide, through detect's view
// of a stored document): a pair is in the report when the rule relates
// them, in either direction (near-identical, or one an excerpt of the
// other), so the report and a check of either document agree.

// rowPairs appends the near-duplicate pairs of one row (entries sorted by
// key) that table t is responsible for.
func (l *loader) rowPairs(t int, es []entry, pairs [][2]uint64) [][2]uint64 {
	p := l.perms[t]
	fps := make([]uint64, 0, len(es))
	for i, e := range es {
		if i == 0 || es[i-1].key != e.key {
			fps = append(fps, uint64(p.Unpermute(e.key)))
		}
	}
	k := l.cfg.DedupK
	for i := range fps {
		for j := i + 1; j < len(fps); j++ {
			a, b := fps[i], fps[j]
			if bits.OnesCount64(a^b) > k {
				continue
			}
			owner := true
			for u := range t {
				pu := l.perms[u]
				if pu.Prefix(pu.Permute(fingerprint.Fingerprint(a))) == pu.Prefix(pu.Permute(fingerprint.Fingerprint(b))) {
					owner = false
					break
				}
			}
			if owner {
				pairs = append(pairs, [2]uint64{min(a, b), max(a, b)})
			}
		}
	}
	return pairs
}

// dedupLine is one line of the report. Pairs mode: two fingerprints (or one,
// carried by several documents) and the ids carrying each. Clusters mode:
// a connected component of near-duplicate fingerprints and all its ids.
type dedupLine struct {
	Cluster      *int                      `json:"cluster,omitempty"`
	Fingerprints []fingerprint.Fingerprint `json:"fingerprints"`
	Distance     *int                      `json:"distance,omitempty"`
	IDs          [][]string                `json:"ids,omitempty"`
	AllIDs       []string                  `json:"all_ids,omitempty"`
}

// writeDedup writes the report from the near-duplicate pairs and the
// fingerprints carried by several documents.
func (l *loader) writeDedup(ctx context.Context, pairs [][2]uint64, multi []uint64) error {
	need := slices.Clone(multi)
	for _, p := range pairs {
		need = append(need, p[0], p[1])
	}
	slices.Sort(need)
	need = slices.Compact(need)
	ids, err := l.idsOf(ctx, need)
	if err != nil {
		return err
	}
	if pairs, multi, err = l.judgeDedup(ctx, pairs, multi, ids); err != nil {
		return err
	}
	// Union-find over the fingerprints involved, for clusters and the
	// duplicate-document count.
	parent := make(map[uint64]uint64, len(need))
	var find func(uint64) uint64
	find = func(x uint64) uint64 {
		p, ok := parent[x]
		if !ok || p == x {
			return x
		}
		r := find(p)
		parent[x] = r
		return r
	}
	for _, p := range pairs {
		a, b := find(p[0]), find(p[1])
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	clusters := map[uint64][]uint64{}
	for _, f := range need {
		r := find(f)
		clusters[r] = append(clusters[r], f)
	}
	var docPairs, dupDocs int64
	for _, f := range multi {
		n := int64(len(ids[f]))
		docPairs += n * (n - 1) / 2
	}
	roots := make([]uint64, 0, len(clusters))
	for r, fs := range clusters {
		roots = append(roots, r)
		n := 0
		for _, f := range fs {
			n += len(ids[f])
		}
		if n > 1 {
			dupDocs += int64(n - 1)
		}
	}
	slices.Sort(roots)
	l.sum.DuplicatePairs = int64(len(pairs)) + docPairs
	l.sum.DuplicateDocuments = dupDocs

	tmp := l.cfg.DedupPath + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("bulkload: dedup report: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	if l.cfg.DedupClusters {
		for i, r := range roots {
			fs := clusters[r]
			if len(fs) == 1 && len(ids[fs[0]]) < 2 {
				continue
			}
			line := dedupLine{Cluster: &i}
			for _, x := range fs {
				line.Fingerprints = append(line.Fingerprints, fingerprint.Fingerprint(x))
				line.AllIDs = append(line.AllIDs, ids[x]...)
			}
			slices.Sort(line.AllIDs)
			if err := enc.Encode(line); err != nil {
				return errors.Join(err, f.Close())
			}
		}
	} else {
		zero := 0
		for _, x := range multi {
			if err := enc.Encode(dedupLine{Fingerprints: []fingerprint.Fingerprint{fingerprint.Fingerprint(x)}, Distance: &zero, IDs: [][]string{ids[x]}}); err != nil {
				return errors.Join(err, f.Close())
			}
		}
		for _, p := range pairs {
			d := bits.OnesCount64(p[0] ^ p[1])
			if err := enc.Encode(dedupLine{Fingerprints: []fingerprint.Fingerprint{fingerprint.Fingerprint(p[0]), fingerprint.Fingerprint(p[1])}, Distance: &d, IDs: [][]string{ids[p[0]], ids[p[1]]}}); err != nil {
				return errors.Join(err, f.Close())
			}
		}
	}
	if err := errors.Join(w.Flush(), f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("bulkload: dedup report: %w", err)
	}
	return os.Rename(tmp, l.cfg.DedupPath)
}

// idsOf reads the ids carrying each fingerprint from the fp table.
func (l *loader) idsOf(ctx context.Context, fps []uint64) (map[uint64][]string, error) {
	out := make(map[uint64][]string, len(fps))
	for len(fps) > 0 {
		n := min(len(fps), 1000)
		keys := make([]storage.RowKey, n)
		for i, f := range fps[:n] {
			keys[i] = storage.RowKey{Table: storage.TableFP, Key: kvindex.FPRowKey(f)}
		}
		rows, err := l.ix.Store().Get(ctx, keys)
		if err != nil {
			return nil, err
		}
		for i, r := range rows {
			for _, c := range r.Cells {
				out[fps[i]] = append(out[fps[i]], string(c.Qualifier))
			}
		}
		fps = fps[n:]
	}
	return out, nil
}

// dedupPolicy: a self-dedup report is undirected, so a pair counts when
// either document relates to the other (an excerpt in either direction).
const dedupPolicy = decide.PolicyCopy

// judgeDedup keeps, of the fingerprint pairs within k and the fingerprints
// several documents carry, the documents the rule relates: ids is cut to
// the documents in at least one confirmed pair, and a pair or fingerprint
// left with no such documents is dropped. Documents are read from the docs
// table in batches.
func (l *loader) judgeDedup(ctx context.Context, pairs [][2]uint64, multi []uint64, ids map[uint64][]string) ([][2]uint64, []uint64, error) {
	var all []string
	for _, v := range ids {
		all = append(all, v...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	docs := make(map[string]kvindex.Document, len(all))
	for len(all) > 0 {
		n := min(len(all), 1000)
		got, err := l.ix.Documents(ctx, all[:n])
		if err != nil {
			return nil, nil, fmt.Errorf("bulkload: dedup report: %w", err)
		}
		for id, d := range got {
			docs[id] = d
		}
		all = all[n:]
	}
	// Each side is judged as a query with the template its text-key rows
	// reveal, as a check of its text would be (detect.StoredSides).
	j := detect.Judge{Rule: decide.DefaultRule(), Policy: dedupPolicy}
	list := make([]kvindex.Document, 0, len(docs))
	for _, d := range docs {
		list = append(list, d)
		if d.Text != "" && j.Sketcher == nil {
			if l.fpr == nil {
				var err error
				if l.fpr, err = l.cfg.NewFingerprinter(); err != nil {
					return nil, nil, fmt.Errorf("bulkload: dedup report: %w", err)
				}
			}
			j.Sketcher = l.fpr
		}
	}
	sides, err := j.StoredSides(ctx, l.ix, list)
	if err != nil {
		return nil, nil, fmt.Errorf("bulkload: dedup report: %w", err)
	}
	k := l.cfg.DedupK
	dup := func(a, b string) bool {
		da, oka := docs[a]
		db, okb := docs[b]
		if !oka || !okb {
			return false
		}
		d := bits.OnesCount64(uint64(da.Fingerprint ^ db.Fingerprint))
		return j.Rule.Judge(sides[a], sides[b], d, k).Duplicate(dedupPolicy) ||
			j.Rule.Judge(sides[b], sides[a], d, k).Duplicate(dedupPolicy)
	}
	keep := map[string]bool{}
	keptPairs := pairs[:0]
	for _, p := range pairs {
		ok := false
		for _, a := range ids[p[0]] {
			for _, b := range ids[p[1]] {
				if dup(a, b) {
					keep[a], keep[b], ok = true, true, true
				}
			}
		}
		if ok {
			keptPairs = append(keptPairs, p)
		}
	}
	keptMulti := multi[:0]
	for _, f := range multi {
		ok := false
		v := ids[f]
		for i := range v {
			for j := i + 1; j < len(v); j++ {
				if dup(v[i], v[j]) {
					keep[v[i]], keep[v[j]], ok = true, true, true
				}
			}
		}
		if ok {
			keptMulti = append(keptMulti, f)
		}
	}
	for f, v := range ids {
		ids[f] = slices.DeleteFunc(v, func(id string) bool { return !keep[id] })
	}
	return keptPairs, keptMulti, nil
}
