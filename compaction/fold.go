package compaction

import (
	"fmt"
	"slices"

	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// rowPlan is what compaction decided for one index row: the rewritten base
// sets per bucket and the cells to delete. It is computed from the row's
// current content alone (plus the liveness of tombstoned fingerprints), so
// it can be unit-tested without a store.
type rowPlan struct {
	// sets holds, per bucket to rewrite, the new sorted residual set and the
	// number of chunks the bucket had (so leftover chunks are deleted).
	sets map[uint32]bucketSet
	// deletes are delta and tombstone qualifiers to remove.
	deletes [][]byte
	// Counts for metrics and the summary.
	deltasFolded      int
	tombstonesApplied int
	tombstonesKept    int // tombstones whose fingerprint is live again (left alone)
	bucketsDropped    int
	bucketsRechunked  int
	bytesBefore       int
}

type bucketSet struct {
	residuals []uint64
	oldChunks int
}

// rowNeedsWork reports, from a possibly stale read of the row, whether
// compaction has anything to do there: deltas or tombstones to fold,
// expired buckets, or chunks to re-cut. A row skipped here keeps its deltas,
// which the next run folds; nothing is lost.
func rowNeedsWork(row storage.Row, cutoff uint32, maxCell int) bool {
	chunks := map[uint32]int{}
	sizes := map[uint32]int{}
	for _, c := range row.Cells {
		if len(c.Qualifier) == 0 {
			return true // let the fold report the corrupt cell
		}
		switch c.Qualifier[0] {
		case 'd', 'x':
			return true
		case 'b':
			q, err := kvindex.ParseIndexQualifier(c.Qualifier)
			if err != nil || q.Bucket < cutoff || len(c.Value) > maxCell {
				return true
			}
			chunks[q.Bucket]++
			sizes[q.Bucket] += len(c.Value)
		default:
			return true
		}
	}
	for b, n := range chunks {
		if underfilled(n, sizes[b], maxCell) {
			return true
		}
	}
	return false
}

// underfilled: a bucket's chunks would fit in clearly fewer cells (after
// tombstones thinned them out), so re-cutting saves cells and reads.
func underfilled(chunks, bytes, maxCell int) bool {
	return chunks > 1 && bytes < (chunks-1)*maxCell/2
}

// foldRow plans the compaction of one row. residualBits is the row's
// residual width, cutoff the oldest bucket kept (buckets below it are
// dropped; 0 keeps all), maxCell the chunk size limit. live reports whether
// the fingerprint with residual r in this row is carried by a document (its
// fp row has cells): a tombstone is applied only when it is not, otherwise
// it is kept and counted (it hides a live fingerprint; the fp table is the
// truth, so that is for an operator to look at, not for compaction to guess).
func foldRow(row storage.Row, residualBits int, cutoff uint32, maxCell int, live func(r uint64) (bool, error)) (rowPlan, error) {
	p := rowPlan{sets: map[uint32]bucketSet{}}
	base := map[uint32][]uint64{}
	chunks := map[uint32]int{}
	sizes := map[uint32]int{}
	oversize := map[uint32]bool{}
	deltas := map[uint32][]uint64{}
	var tombs []uint64
	for _, c := range row.Cells {
		p.bytesBefore += len(c.Qualifier) + len(c.Value)
		q, err := kvindex.ParseIndexQualifier(c.Qualifier)
		if err != nil {
			return p, fmt.Errorf("%w: row %x qualifier %x: %v", kvindex.ErrCorrupt, row.Key, c.Qualifier, err)
		}
		switch q.Kind {
		case kvindex.BaseCell:
			chunks[q.Bucket]++
			sizes[q.Bucket] += len(c.Value)
			if len(c.Value) > maxCell {
				oversize[q.Bucket] = true
			}
			if q.Bucket < cutoff {
				continue // dropped whole; no need to decode
			}
			rs, err := storage.DecodeBaseSet(base[q.Bucket], c.Value, residualBits)
			if err != nil {
				return p, fmt.Errorf("%w: row %x qualifier %x: %v", kvindex.ErrCorrupt, row.Key, c.Qualifier, err)
			}
			base[q.Bucket] = rs
		case kvindex.DeltaCell:
			if residualBits < 64 && q.Residual>>residualBits != 0 {
				return p, fmt.Errorf("%w: row %x delta %x wider than %d bits", kvindex.ErrCorrupt, row.Key, c.Qualifier, residualBits)
			}
			p.deletes = append(p.deletes, c.Qualifier)
			if q.Bucket < cutoff {
				continue
			}
			deltas[q.Bucket] = append(deltas[q.Bucket], q.Residual)
			p.deltasFolded++
		case kvindex.TombstoneCell:
			tombs = append(tombs, q.Residual)
		}
	}
	// Tombstones: apply the valid ones (fingerprint not live).
	var dead []uint64
	for _, r := range tombs {
		ok, err := live(r)
		if err != nil {
			return p, err
		}
		if ok {
			p.tombstonesKept++
			continue
		}
		dead = append(dead, r)
		p.tombstonesApplied++
		p.deletes = append(p.deletes, kvindex.TombstoneQualifier(r))
	}
	slices.Sort(dead)

	for b, n := range chunks {
		if b < cutoff {
			p.sets[b] = bucketSet{oldChunks: n}
			p.bucketsDropped++
		}
	}
	buckets := map[uint32]bool{}
	for b := range base {
		buckets[b] = true
	}
	for b := range deltas {
		buckets[b] = true
	}
	for b := range buckets {
		rs := append(base[b], deltas[b]...)
		slices.Sort(rs)
		rs = slices.Compact(rs)
		before := len(rs)
		if len(dead) > 0 {
			rs = slices.DeleteFunc(rs, func(r uint64) bool { _, found := slices.BinarySearch(dead, r); return found })
		}
		changed := len(deltas[b]) > 0 || len(rs) != before || len(rs) != len(base[b])
		recut := oversize[b] || underfilled(chunks[b], sizes[b], maxCell)
		if !changed && !recut {
			continue
		}
		if !changed && recut {
			p.bucketsRechunked++
		}
		p.sets[b] = bucketSet{residuals: rs, oldChunks: chunks[b]}
	}
	return p, nil
}

// mutations turns a plan into the row's mutations: base-set rewrites first,
// then the deletes of folded deltas and applied tombstones (a reader between
// the two batches could only see a residual twice, never miss one — and the
// store applies one Mutate atomically anyway).
func (p rowPlan) mutations(ix Index, row []byte) ([]storage.Mutation, error) {
	var muts []storage.Mutation
	bs := make([]uint32, 0, len(p.sets))
	for b := range p.sets {
		bs = append(bs, b)
	}
	slices.Sort(bs)
	for _, b := range bs {
		s := p.sets[b]
		m, err := ix.BaseSetMutations(row, b, s.residuals, s.oldChunks)
		if err != nil {
			return nil, err
		}
		muts = append(muts, m...)
	}
	for _, q := range p.deletes {
		muts = append(muts, storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableIndex, Row: row, Qualifier: q})
	}
	return muts, nil
}
