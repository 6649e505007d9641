package bulkload

import (
	"context"
	"slices"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// rowBatch takes the cells of rows written without a read (into a fresh
// index), in key order, and holds the buffers writeRow reuses from row to
// row.
type rowBatch struct {
	w    storage.CellWriter
	slot []int32 // bucket - lo -> position in buckets (bySlot)
	// bySlot: the current row's buckets are indexed through slot, from
	// bucket lo; otherwise by a binary search of buckets.
	bySlot  bool
	lo      uint32
	flat    []uint64
	pairs   []bucketResidual
	sorted  []bucketResidual
	buckets []uint32
	counts  []int
	sets    []kvindex.BucketSet
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

// writeRow writes one row's base sets and returns the number of entries
// (distinct bucket and residual pairs) and the bytes written. Into an
// index that had no rows in this shard's range when the load started, the
// cells are put directly (a resumed load rewrites identical cells);
// otherwise they are merged under the row lock with what the row holds.
func (l *loader) writeRow(ctx context.Context, t int, es []entry, rb *rowBatch) (int, int64, error) {
	p := l.perms[t]
	prefix := p.Prefix(es[0].key)
	row := kvindex.IndexRowKey(nil, t, prefix, p.PrefixBits)
	sets, ours, n := rb.bucketSets(p, es)
	if l.cp.FreshIndex {
		_, written, err := l.bw.PutBaseSets(rb.w, row, sets)
		if err != nil {
			return 0, 0, err
		}
		return n, written, nil
	}
	written, err := l.rw.MergeBaseSets(ctx, row, sets, ours)
	return n, written, err
}

// bucketSets regroups a row's entries, sorted by (residual, bucket), into
// one set of sorted, distinct residuals per time bucket, buckets in
// order. It also returns the row's distinct residuals (ours) and the
// number of distinct (bucket, residual) pairs. The results live in rb's
// buffers until the next call.
func (rb *rowBatch) bucketSets(p fingerprint.Permuter, es []entry) (sets []kvindex.BucketSet, ours []uint64, n int) {
	pairs, ours, lo, hi := rb.pairsOf(p, es)
	rb.indexBuckets(pairs, lo, hi)
	if len(rb.buckets) > 1 {
		pairs = rb.sortByBucket(pairs)
	}
	pairs = slices.Compact(pairs)
	sets = rb.setsOf(pairs)
	rb.pairs, rb.sets, rb.ours = pairs, sets, ours
	return sets, ours, len(pairs)
}

// pairsOf lists a row's (bucket, residual) pairs in the order of es, its
// distinct residuals, and its lowest and highest bucket.
func (rb *rowBatch) pairsOf(p fingerprint.Permuter, es []entry) (pairs []bucketResidual, ours []uint64, lo, hi uint32) {
	pairs, ours = rb.pairs[:0], rb.ours[:0]
	lo, hi = es[0].aux, es[0].aux
	for i, e := range es {
		r := p.Residual(e.key)
		pairs = append(pairs, bucketResidual{e.aux, r})
		if i == 0 || es[i-1].key != e.key {
			ours = append(ours, r)
		}
		lo, hi = min(lo, e.aux), max(hi, e.aux)
	}
	return pairs, ours, lo, hi
}

// indexBuckets lists the row's distinct buckets in order (rb.buckets) and
// sets up bucketIndex: through a table over lo..hi when the span is small
// (a row's buckets are usually a few consecutive ones), else by binary
// search.
func (rb *rowBatch) indexBuckets(pairs []bucketResidual, lo, hi uint32) {
	bs := rb.buckets[:0]
	rb.bySlot, rb.lo = false, lo
	if span := uint64(hi-lo) + 1; span <= maxSlotSpan {
		slot := slices.Grow(rb.slot[:0], int(span))[:span]
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
		rb.slot, rb.bySlot = slot, true
	} else {
		for _, pr := range pairs {
			if k, found := slices.BinarySearch(bs, pr.bucket); !found {
				bs = slices.Insert(bs, k, pr.bucket)
			}
		}
	}
	rb.buckets = bs
}

// bucketIndex is bucket b's position among the row's buckets
// (indexBuckets).
func (rb *rowBatch) bucketIndex(b uint32) int {
	if rb.bySlot {
		return int(rb.slot[b-rb.lo])
	}
	k, _ := slices.BinarySearch(rb.buckets, b)
	return k
}

// sortByBucket orders pairs, sorted by residual, by (bucket, residual)
// with a stable counting placement over the row's few buckets. The sorted
// pairs go into rb's spare buffer, which pairs' buffer then becomes.
func (rb *rowBatch) sortByBucket(pairs []bucketResidual) []bucketResidual {
	counts := rb.counts[:0]
	for range rb.buckets {
		counts = append(counts, 0)
	}
	for _, pr := range pairs {
		counts[rb.bucketIndex(pr.bucket)]++
	}
	pos := 0
	for k, c := range counts {
		counts[k] = pos
		pos += c
	}
	sorted := slices.Grow(rb.sorted[:0], len(pairs))[:len(pairs)]
	for _, pr := range pairs {
		k := rb.bucketIndex(pr.bucket)
		sorted[counts[k]] = pr
		counts[k]++
	}
	rb.sorted, rb.counts = pairs, counts
	return sorted
}

// setsOf cuts pairs, sorted by (bucket, residual) and distinct, into one
// set per bucket. The residual slices of all buckets share one backing
// array, reused across rows (the sets are encoded before writeRow
// returns).
func (rb *rowBatch) setsOf(pairs []bucketResidual) []kvindex.BucketSet {
	flat := slices.Grow(rb.flat[:0], len(pairs))[:len(pairs)]
	rb.flat = flat
	sets := rb.sets[:0]
	for i, pr := range pairs {
		flat[i] = pr.residual
		if len(sets) == 0 || sets[len(sets)-1].Bucket != pr.bucket {
			sets = append(sets, kvindex.BucketSet{Bucket: pr.bucket, Residuals: flat[i : i+1 : i+1]})
		} else {
			last := &sets[len(sets)-1]
			last.Residuals = flat[i-len(last.Residuals) : i+1 : i+1]
		}
	}
	return sets
}
