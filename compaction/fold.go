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
	// sets holds, per bucket to rewrite, the new sorted residual set (the
	// RowUpdate deletes the chunks the bucket had beyond the new ones).
	sets map[uint32]bucketSet
	// deletes are the delta and tombstone cells to remove.
	deletes []kvindex.IndexCell
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
}

// rowNeedsWork reports, from a possibly stale read of the row, whether
// compaction has anything to do there: deltas or tombstones to fold,
// expired buckets, or chunks to re-cut. A row skipped here keeps its deltas,
// which the next run folds; nothing is lost.
func rowNeedsWork(row kvindex.IndexRow, cutoff uint32, maxCell int) bool {
	chunks := map[uint32]int{}
	sizes := map[uint32]int{}
	for _, c := range row.Cells {
		switch c.Kind {
		case kvindex.DeltaCell, kvindex.TombstoneCell:
			return true
		case kvindex.BaseCell:
			if c.Bucket < cutoff || len(c.Value) > maxCell {
				return true
			}
			chunks[c.Bucket]++
			sizes[c.Bucket] += len(c.Value)
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

// foldRow plans the compaction of one row. cutoff is the oldest bucket
// kept (buckets below it are dropped; 0 keeps all), maxCell the chunk size
// limit. live reports whether the fingerprint with residual r in this row
// is carried by a document (its fp row has cells): a tombstone is applied
// only when it is not, otherwise it is kept and counted (it hides a live
// fingerprint; the fp table is the truth, so that is for an operator to
// look at, not for compaction to guess).
func foldRow(row kvindex.IndexRow, cutoff uint32, maxCell int, live func(r uint64) (bool, error)) (rowPlan, error) {
	p := rowPlan{sets: map[uint32]bucketSet{}}
	base := map[uint32][]uint64{}
	chunks := map[uint32]int{}
	sizes := map[uint32]int{}
	oversize := map[uint32]bool{}
	deltas := map[uint32][]uint64{}
	var tombs []uint64
	residualBits := row.ResidualBits
	for _, c := range row.Cells {
		p.bytesBefore += c.Size
		switch c.Kind {
		case kvindex.BaseCell:
			chunks[c.Bucket]++
			sizes[c.Bucket] += len(c.Value)
			if len(c.Value) > maxCell {
				oversize[c.Bucket] = true
			}
			if c.Bucket < cutoff {
				continue // dropped whole; no need to decode
			}
			rs, err := storage.DecodeBaseSet(base[c.Bucket], c.Value, residualBits)
			if err != nil {
				return p, fmt.Errorf("%w: row %x bucket %d chunk %d: %v", kvindex.ErrCorrupt, row.Key, c.Bucket, c.Chunk, err)
			}
			base[c.Bucket] = rs
		case kvindex.DeltaCell:
			if residualBits < 64 && c.Residual>>residualBits != 0 {
				return p, fmt.Errorf("%w: row %x delta %x of bucket %d wider than %d bits", kvindex.ErrCorrupt, row.Key, c.Residual, c.Bucket, residualBits)
			}
			p.deletes = append(p.deletes, c)
			if c.Bucket < cutoff {
				continue
			}
			deltas[c.Bucket] = append(deltas[c.Bucket], c.Residual)
			p.deltasFolded++
		case kvindex.TombstoneCell:
			tombs = append(tombs, c.Residual)
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
		p.deletes = append(p.deletes, kvindex.IndexCell{Kind: kvindex.TombstoneCell, Residual: r})
	}
	slices.Sort(dead)

	for b := range chunks {
		if b < cutoff {
			p.sets[b] = bucketSet{}
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
		p.sets[b] = bucketSet{residuals: rs}
	}
	return p, nil
}

// record records a plan in the row's RowUpdate: base-set rewrites first,
// then the deletes of folded deltas and applied tombstones (a reader between
// the two batches could only see a residual twice, never miss one — and the
// store applies one Mutate atomically anyway).
func (p rowPlan) record(u *kvindex.RowUpdate) error {
	bs := make([]uint32, 0, len(p.sets))
	for b := range p.sets {
		bs = append(bs, b)
	}
	slices.Sort(bs)
	for _, b := range bs {
		if err := u.SetBaseSet(b, p.sets[b].residuals); err != nil {
			return err
		}
	}
	for _, c := range p.deletes {
		if err := u.Delete(c); err != nil {
			return err
		}
	}
	return nil
}
