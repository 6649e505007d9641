package seen

import (
	"math/bits"
	"slices"
)

// nearIndex finds seen fingerprints within distance k of a query faster
// than a linear scan when a user has many: split the 64 bits into k+1
// blocks; by the pigeonhole principle two fingerprints within distance k
// agree exactly on at least one block, so only fingerprints sharing a
// block with the query are compared. Each block's (value, position) pairs
// are one sorted []uint64 (value << 32 | position).
type nearIndex struct {
	fps    []uint64
	shifts []uint
	widths []uint
	keys   [][]uint64
}

// Blocks narrower than this select too little to beat a linear scan.
const minNearBlockBits = 8

// newNearIndex returns the index of fps for distance k, or nil when a
// linear scan is as good (k = 0 or blocks under minNearBlockBits).
func newNearIndex(fps []uint64, k int) *nearIndex {
	n := k + 1
	if k < 1 || 64/n < minNearBlockBits || len(fps) >= 1<<32 {
		return nil
	}
	ix := &nearIndex{fps: fps, keys: make([][]uint64, n)}
	shift := uint(64)
	for i := range n {
		w := uint(64 / n)
		if i < 64%n {
			w++
		}
		shift -= w
		ix.shifts, ix.widths = append(ix.shifts, shift), append(ix.widths, w)
		keys := make([]uint64, len(fps))
		for j, fp := range fps {
			keys[j] = ix.block(fp, i)<<32 | uint64(j)
		}
		slices.Sort(keys)
		ix.keys[i] = keys
	}
	return ix
}

func (ix *nearIndex) block(fp uint64, i int) uint64 {
	return fp >> ix.shifts[i] & (1<<ix.widths[i] - 1)
}

// within appends to dst every indexed fingerprint within distance k of fp
// (k must be the index's), each once.
func (ix *nearIndex) within(fp uint64, k int, dst []uint64) []uint64 {
	start := len(dst)
	for i, keys := range ix.keys {
		v := ix.block(fp, i)
		j, _ := slices.BinarySearch(keys, v<<32)
		for ; j < len(keys) && keys[j]>>32 == v; j++ {
			if f := ix.fps[uint32(keys[j])]; bits.OnesCount64(f^fp) <= k && !slices.Contains(dst[start:], f) {
				dst = append(dst, f)
			}
		}
	}
	return dst
}

// nearest returns the smallest distance <= k from fp to an indexed
// fingerprint, or -1 (k must be the index's).
func (ix *nearIndex) nearest(fp uint64, k int) int {
	best := -1
	for i, keys := range ix.keys {
		v := ix.block(fp, i)
		j, _ := slices.BinarySearch(keys, v<<32)
		for ; j < len(keys) && keys[j]>>32 == v; j++ {
			if d := bits.OnesCount64(ix.fps[uint32(keys[j])] ^ fp); d <= k && (best < 0 || d < best) {
				best = d
				if d == 0 {
					return 0
				}
			}
		}
	}
	return best
}
