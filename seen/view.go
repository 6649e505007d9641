package seen

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"github.com/simdex/simdex/storage"
)

// view is the live content of one user's row, decoded for one call. Its
// memory comes from scratchPool: release returns it, after which the view
// must not be used.
type view struct {
	sc  *scratch // the set of live item hashes and decoding buffers
	fps []uint64 // fingerprints of live items (unordered, may repeat)
}

// has reports whether h is a live item hash of the row.
func (v *view) has(h uint64) bool { return v.sc.set.has(h) }

// items is the number of distinct live item hashes.
func (v *view) items() int { return v.sc.set.n }

// release returns the view's memory to the pool.
func (v *view) release() {
	if v.sc == nil {
		return
	}
	v.sc.put()
	v.sc = nil
}

// within appends to dst every seen fingerprint within distance k of fp.
func (v *view) within(fp uint64, k int, dst []uint64) []uint64 {
	for _, s := range v.fps {
		if bits.OnesCount64(s^fp) <= k {
			dst = append(dst, s)
		}
	}
	return dst
}

// nearest returns the smallest distance <= k from fp to a seen
// fingerprint, or -1.
func (v *view) nearest(fp uint64, k int) int {
	best := -1
	for _, s := range v.fps {
		if d := bits.OnesCount64(s ^ fp); d <= k && (best < 0 || d < best) {
			best = d
			if d == 0 {
				break
			}
		}
	}
	return best
}

// scratch is the reusable memory of decoding one row: the hash set a
// filter or check probes, and the buffers the cells are decoded into.
// Why pooled: a filter used to allocate ~15 KB per call for the decoded
// hashes alone, and the garbage collector's share of a filter's CPU grew
// with it.
type scratch struct {
	set    hashSet
	base   []uint64 // folded hashes of the live buckets, in cell order
	deltas []uint64 // delta hashes of the live buckets
	tombs  []uint64 // tombstoned hashes, sorted
	isSeen []bool   // a filter's per-candidate answers
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooledHashes bounds the hashes a pooled scratch keeps room for, so
// that one huge row does not pin its memory in the pool.
const maxPooledHashes = 1 << 16

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func (sc *scratch) put() {
	if cap(sc.base) > maxPooledHashes || cap(sc.deltas) > maxPooledHashes || cap(sc.tombs) > maxPooledHashes || cap(sc.isSeen) > maxPooledHashes || len(sc.set.slots) > 4*maxPooledHashes {
		return
	}
	scratchPool.Put(sc)
}

// hashSet is an open-addressing set of item hashes (linear probing, at
// most half full). Why not the sorted slice it replaces: the folded cells
// decode as one sorted run per bucket, and sorting ~1,000 hashes of 30
// runs then binary-searching 500 candidates was most of a filter's CPU;
// building this set is one pass over the decoded hashes and a probe is
// one or two loads from a table that fits in L1 (16 KiB at 1,000 items).
// It holds full hashes, so membership is exact.
type hashSet struct {
	slots []uint64 // 0 marks an empty slot; len is a power of two
	shift uint     // 64 - log2(len(slots))
	zero  bool     // whether hash 0 is a member (it cannot be stored in a slot)
	n     int      // distinct members
}

// fibMul spreads hashes over the slots (Fibonacci hashing): the item
// hashes are already uniform, but only in their HashBits low bits.
const fibMul = 0x9E3779B97F4A7C15

// reset empties the set and sizes it for up to n members.
func (s *hashSet) reset(n int) {
	size, shift := 16, uint(60)
	for size < 2*n {
		size <<= 1
		shift--
	}
	if cap(s.slots) >= size {
		s.slots = s.slots[:size]
		clear(s.slots)
	} else {
		s.slots = make([]uint64, size)
	}
	s.shift, s.zero, s.n = shift, false, 0
}

// add inserts h; the set must have been reset for at least as many
// members as are added.
func (s *hashSet) add(h uint64) {
	if h == 0 {
		if !s.zero {
			s.zero = true
			s.n++
		}
		return
	}
	mask := uint64(len(s.slots) - 1)
	for i := (h * fibMul) >> s.shift; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = h
			s.n++
			return
		case h:
			return
		}
	}
}

func (s *hashSet) has(h uint64) bool {
	if h == 0 {
		return s.zero
	}
	if len(s.slots) == 0 {
		return false
	}
	mask := uint64(len(s.slots) - 1)
	for i := (h * fibMul) >> s.shift; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// decodeRow returns the live view of a row: buckets >= lo; folded hashes
// minus tombstones, plus deltas. The caller releases the view.
func decodeRow(r storage.Row, lo uint32, hashBits int, withFPs bool) (view, error) {
	sc := getScratch()
	v := view{sc: sc}
	var (
		fpDeltas []fpPair
		baseFPs  []fpPair
		err      error
	)
	tombs, base, deltas := sc.tombs[:0], sc.base[:0], sc.deltas[:0]
	fail := func(q []byte, err error) (view, error) {
		sc.tombs, sc.base, sc.deltas = tombs, base, deltas
		v.release()
		return view{}, corrupt(r.Key, q, err)
	}
	for _, c := range r.Cells {
		if len(c.Qualifier) > 0 && c.Qualifier[0] == qualTomb {
			q, err := parseQualifier(c.Qualifier, hashBits)
			if err != nil {
				return fail(c.Qualifier, err)
			}
			tombs = append(tombs, q.hash)
		}
	}
	slices.Sort(tombs)
	for _, c := range r.Cells {
		q, perr := parseQualifier(c.Qualifier, hashBits)
		if perr != nil {
			return fail(c.Qualifier, perr)
		}
		if q.kind == qualTomb || q.bucket < lo {
			continue
		}
		switch q.kind {
		case qualBase:
			if base, err = storage.DecodeBaseSet(base, c.Value, hashBits); err != nil {
				return fail(c.Qualifier, err)
			}
		case qualFPs:
			if !withFPs {
				continue
			}
			if baseFPs, err = decodeFPSet(baseFPs, c.Value, hashBits); err != nil {
				return fail(c.Qualifier, err)
			}
		case qualDelta:
			deltas = append(deltas, q.hash)
		case qualFPDel:
			if len(c.Value) != 8 {
				return fail(c.Qualifier, fmt.Errorf("%w: fingerprint delta of %d bytes, want 8", errCell, len(c.Value)))
			}
			if withFPs {
				fpDeltas = append(fpDeltas, fpPair{hash: q.hash, fp: binary.BigEndian.Uint64(c.Value)})
			}
		}
	}
	sc.tombs, sc.base, sc.deltas = tombs, base, deltas
	set := &sc.set
	set.reset(len(base) + len(deltas))
	if len(tombs) == 0 {
		for _, h := range base {
			set.add(h)
		}
	} else {
		for _, h := range base {
			if !inSorted(tombs, h) {
				set.add(h)
			}
		}
		baseFPs = slices.DeleteFunc(baseFPs, func(p fpPair) bool { return inSorted(tombs, p.hash) })
	}
	for _, h := range deltas {
		set.add(h)
	}
	if withFPs {
		v.fps = make([]uint64, 0, len(baseFPs)+len(fpDeltas))
		for _, p := range baseFPs {
			v.fps = append(v.fps, p.fp)
		}
		for _, p := range fpDeltas {
			// A fingerprint delta whose mark was deleted (its 'd' cell is
			// gone) does not count.
			if set.has(p.hash) {
				v.fps = append(v.fps, p.fp)
			}
		}
	}
	return v, nil
}

func inSorted(s []uint64, h uint64) bool {
	_, ok := slices.BinarySearch(s, h)
	return ok
}
