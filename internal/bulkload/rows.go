package bulkload

import (
	"context"
	"fmt"
	"slices"

	"github.com/simdex/simdex/kvindex"
)

// rowBatch takes the cells of rows written without a read (into a fresh
// index), in key order, and holds the buffers writeRow reuses.
type rowBatch struct {
	w       kvindex.CellWriter
	slot    []int32 // bucket - lo -> position in buckets (writeRow)
	flat    []uint64
	pairs   []bucketResidual
	sorted  []bucketResidual
	buckets []uint32
	counts  []int
	sets    []bucketSet
	ours    []uint64
}

// maxSlotSpan bounds the bucket span of a row that writeRow indexes
// through a table (64 KiB of int32) instead of a binary search (a variable
// for the test of the other path).
var maxSlotSpan uint64 = 1 << 14

type bucketResidual struct {
	bucket   uint32
	residual uint64
}

// bucketSet is one time bucket's sorted, distinct residuals of a row.
type bucketSet struct {
	bucket    uint32
	residuals []uint64
}

// writeRow writes one row's base sets. Into an index that had no rows in
// this shard's range when the load started, the cells are put directly (a
// resumed load rewrites identical cells); otherwise they are merged under
// the row lock with what the row holds.
func (l *loader) writeRow(ctx context.Context, t int, es []entry, rb *rowBatch) (int, int64, error) {
	p := l.perms[t]
	prefix := p.Prefix(es[0].key)
	row := kvindex.IndexRowKey(nil, t, prefix, p.PrefixBits)
	// es is sorted by (residual, bucket): regroup by (bucket, residual)
	// with a stable counting placement over the row's few buckets.
	pairs, ours, bs := rb.pairs[:0], rb.ours[:0], rb.buckets[:0]
	lo, hi := es[0].aux, es[0].aux
	for i, e := range es {
		r := p.Residual(e.key)
		pairs = append(pairs, bucketResidual{e.aux, r})
		if i == 0 || es[i-1].key != e.key {
			ours = append(ours, r)
		}
		lo, hi = min(lo, e.aux), max(hi, e.aux)
	}
	// The row's buckets and each one's position among them: through a
	// table over lo..hi when the span is small (a row's buckets are
	// usually a few consecutive ones), else by binary search.
	var slot []int32
	if span := uint64(hi-lo) + 1; span <= maxSlotSpan {
		slot = slices.Grow(rb.slot[:0], int(span))[:span]
		clear(slot)
		for _, pr := range pairs {
			slot[pr.bucket-lo] = 1
		}
		for j, v := range slot {
			if v != 0 {
				slot[j] = int32(len(bs))
				bs = append(bs, lo+uint32(j))
			}
		}
		rb.slot = slot
	} else {
		for _, pr := range pairs {
			if k, found := slices.BinarySearch(bs, pr.bucket); !found {
				bs = slices.Insert(bs, k, pr.bucket)
			}
		}
	}
	bucketIndex := func(b uint32) int {
		if slot != nil {
			return int(slot[b-lo])
		}
		k, _ := slices.BinarySearch(bs, b)
		return k
	}
	if len(bs) > 1 {
		counts := rb.counts[:0]
		for range bs {
			counts = append(counts, 0)
		}
		for _, pr := range pairs {
			counts[bucketIndex(pr.bucket)]++
		}
		pos := 0
		for k, c := range counts {
			counts[k] = pos
			pos += c
		}
		sorted := slices.Grow(rb.sorted[:0], len(pairs))[:len(pairs)]
		for _, pr := range pairs {
			k := bucketIndex(pr.bucket)
			sorted[counts[k]] = pr
			counts[k]++
		}
		rb.sorted, rb.counts = pairs, counts
		pairs = sorted
	}
	rb.buckets = bs
	pairs = slices.Compact(pairs)
	n := len(pairs)
	// The residual slices of all buckets share one backing array, reused
	// across rows (the sets are encoded before writeRow returns).
	flat := slices.Grow(rb.flat[:0], len(pairs))[:len(pairs)]
	rb.flat = flat
	sets := rb.sets[:0]
	for i, pr := range pairs {
		flat[i] = pr.residual
		if len(sets) == 0 || sets[len(sets)-1].bucket != pr.bucket {
			sets = append(sets, bucketSet{bucket: pr.bucket, residuals: flat[i : i+1 : i+1]})
		} else {
			last := &sets[len(sets)-1]
			last.residuals = flat[i-len(last.residuals) : i+1 : i+1]
		}
	}
	rb.pairs, rb.sets, rb.ours = pairs, sets, ours
	if l.cp.FreshIndex {
		// The row is empty: its base sets go straight to the writer
		// (what BaseSetMutations would put, without the mutations).
		var written int64
		for _, bs := range sets {
			cells, err := kvindex.EncodeBaseSet(bs.residuals, 64-p.PrefixBits, l.maxCellBytes)
			if err != nil {
				return 0, 0, fmt.Errorf("bulkload: row %x bucket %d: %w", row, bs.bucket, err)
			}
			for i, c := range cells {
				q := kvindex.BaseQualifier(bs.bucket, i)
				written += int64(len(row) + len(q) + len(c))
				if err := rb.w.Put(row, q, c); err != nil {
					return 0, 0, err
				}
			}
		}
		return n, written, nil
	}
	var written int64
	err := l.ix.UpdateRow(ctx, row, func(cur kvindex.Row) ([]kvindex.Mutation, error) {
		muts, err := l.rowMutations(row, 64-p.PrefixBits, sets, ours, &cur)
		written = 0
		for _, m := range muts {
			written += int64(len(m.Row) + len(m.Qualifier) + len(m.Value))
		}
		return muts, err
	})
	return n, written, err
}

// rowMutations builds a row's base-set mutations, merged with the row's
// current content cur (nil: the row is known to be empty).
func (l *loader) rowMutations(row []byte, rbits int, sets []bucketSet, ours []uint64, cur *kvindex.Row) ([]kvindex.Mutation, error) {
	var old map[uint32][][]byte
	var tombs map[uint64]bool
	if cur != nil {
		old, tombs = map[uint32][][]byte{}, map[uint64]bool{}
		loaded := make(map[uint32]bool, len(sets))
		for _, s := range sets {
			loaded[s.bucket] = true
		}
		for _, c := range cur.Cells {
			q, err := kvindex.ParseIndexQualifier(c.Qualifier)
			if err != nil {
				return nil, fmt.Errorf("%w: row %x: %v", kvindex.ErrCorrupt, row, err)
			}
			switch q.Kind {
			case kvindex.BaseCell:
				if loaded[q.Bucket] {
					old[q.Bucket] = append(old[q.Bucket], c.Value)
				}
			case kvindex.TombstoneCell:
				tombs[q.Residual] = true
			}
		}
	}
	var muts []kvindex.Mutation
	for _, bset := range sets {
		b, set := bset.bucket, bset.residuals
		if len(old[b]) > 0 {
			var have []uint64
			for _, v := range old[b] {
				var err error
				if have, err = kvindex.DecodeBaseSet(have, v, rbits); err != nil {
					return nil, fmt.Errorf("%w: row %x bucket %d: %v", kvindex.ErrCorrupt, row, b, err)
				}
			}
			set = append(slices.Clone(set), have...)
			slices.Sort(set)
			set = slices.Compact(set)
		}
		m, err := l.ix.BaseSetMutations(row, b, set, len(old[b]))
		if err != nil {
			return nil, err
		}
		muts = append(muts, m...)
	}
	// A loaded fingerprint is carried by a document again: its old
	// tombstone must not hide it (as an online insert does).
	for _, r := range ours {
		if tombs[r] {
			muts = append(muts, kvindex.Mutation{Kind: kvindex.DeleteCell, Table: kvindex.TableIndex, Row: row, Qualifier: kvindex.TombstoneQualifier(r)})
		}
	}
	return muts, nil
}
