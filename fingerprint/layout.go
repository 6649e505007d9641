package fingerprint

import (
	"errors"
	"fmt"
)

// ErrBadLayout is returned (wrapped) by Layout.Validate.
var ErrBadLayout = errors.New("fingerprint: bad layout")

// Layout is the block-permutation layout of the pigeonhole index (Manku,
// Jain, Das Sarma 2007). The 64 bits are split into B contiguous blocks; two
// fingerprints within Hamming distance K agree exactly on at least B-K blocks,
// so for each of the C(B, B-K) choices of B-K blocks (a "table") the chosen
// blocks form an exact-match prefix. A layout is fixed when an index is
// created.
type Layout struct {
	B int // number of blocks, 2..16
	K int // largest distance the index answers exactly, 0..B-1
}

// DefaultLayout is B=4, K=3: 4 tables with 16-bit prefixes.
var DefaultLayout = Layout{B: 4, K: 3}

// Validate reports whether l can be used for an index.
func (l Layout) Validate() error {
	if l.B < 2 || l.B > 16 {
		return fmt.Errorf("%w: B=%d, want 2..16", ErrBadLayout, l.B)
	}
	if l.K < 0 || l.K >= l.B {
		return fmt.Errorf("%w: K=%d, want 0..B-1 (B=%d)", ErrBadLayout, l.K, l.B)
	}
	if n := binomial(l.B, l.B-l.K); n > 255 {
		return fmt.Errorf("%w: B=%d K=%d gives %d tables, at most 255", ErrBadLayout, l.B, l.K, n)
	}
	return nil
}

// String is "B=4,K=3".
func (l Layout) String() string { return fmt.Sprintf("B=%d,K=%d", l.B, l.K) }

// Block returns the first bit (counted from the most significant bit, 0..63)
// and the width of block i. The first 64 mod B blocks are one bit wider than
// the rest, so B=5 gives 13,13,13,13,12 and B=6 gives 11,11,11,11,10,10.
func (l Layout) Block(i int) (start, width int) {
	base, extra := 64/l.B, 64%l.B
	width = base
	if i < extra {
		width++
		return i * width, width
	}
	return extra*(base+1) + (i-extra)*base, width
}

// blockMask returns the mask of block i in a fingerprint.
func (l Layout) blockMask(i int) uint64 {
	start, width := l.Block(i)
	return (^uint64(0) >> (64 - width)) << (64 - start - width)
}

// Tables returns, for each table in order, the indexes of the B-K blocks that
// form its prefix, in increasing order. The order is lexicographic over the
// block choices, so table 0 of B=4,K=3 is block {0}, table 1 is {1}, etc.
func (l Layout) Tables() [][]int {
	var out [][]int
	choose(l.B, l.B-l.K, func(c []int) { out = append(out, append([]int(nil), c...)) })
	return out
}

// NumTables is C(B, B-K).
func (l Layout) NumTables() int { return binomial(l.B, l.B-l.K) }

// PrefixBits returns the number of prefix bits of table t.
func (l Layout) PrefixBits(t int) int {
	n := 0
	for _, b := range l.Tables()[t] {
		_, w := l.Block(b)
		n += w
	}
	return n
}

// Permuter moves the prefix blocks of one table to the most significant bits
// (in block order) and the remaining blocks below them (in block order). It
// is a bijection on 64-bit values and preserves Hamming distance, so the
// residual bits of two permuted fingerprints are as far apart as the original
// fingerprints outside the prefix blocks.
type Permuter struct {
	PrefixBits int
	moves      []move // applied in order: dst |= shift(src & mask)
}

type move struct {
	mask  uint64
	shift int // positive: left shift; negative: right shift
}

// Permuters returns one Permuter per table, in table order.
func (l Layout) Permuters() []Permuter {
	tables := l.Tables()
	out := make([]Permuter, len(tables))
	for t, chosen := range tables {
		in := make(map[int]bool, len(chosen))
		order := append([]int(nil), chosen...)
		for _, b := range chosen {
			in[b] = true
		}
		for b := 0; b < l.B; b++ {
			if !in[b] {
				order = append(order, b)
			}
		}
		p := Permuter{}
		pos := 0
		for i, b := range order {
			start, width := l.Block(b)
			p.moves = append(p.moves, move{mask: l.blockMask(b), shift: start - pos})
			pos += width
			if i < len(chosen) {
				p.PrefixBits += width
			}
		}
		out[t] = p
	}
	return out
}

// Permute maps a fingerprint to its permuted form.
func (p Permuter) Permute(f Fingerprint) uint64 {
	v := uint64(f)
	var r uint64
	for _, m := range p.moves {
		if m.shift >= 0 {
			r |= (v & m.mask) << m.shift
		} else {
			r |= (v & m.mask) >> -m.shift
		}
	}
	return r
}

// Unpermute is the inverse of Permute.
func (p Permuter) Unpermute(v uint64) Fingerprint {
	var r uint64
	for _, m := range p.moves {
		if m.shift >= 0 {
			r |= (v >> m.shift) & m.mask
		} else {
			r |= (v << -m.shift) & m.mask
		}
	}
	return Fingerprint(r)
}

// Prefix returns the prefix bits of the permuted value, right-aligned.
func (p Permuter) Prefix(v uint64) uint64 { return v >> (64 - p.PrefixBits) }

// Residual returns the low 64-PrefixBits bits of the permuted value.
func (p Permuter) Residual(v uint64) uint64 {
	return v & (^uint64(0) >> p.PrefixBits)
}

// Join rebuilds a permuted value from its prefix and residual.
func (p Permuter) Join(prefix, residual uint64) uint64 {
	return prefix<<(64-p.PrefixBits) | residual
}

func binomial(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
	}
	return r
}

// choose calls f with every k-subset of 0..n-1 in lexicographic order.
func choose(n, k int, f func([]int)) {
	c := make([]int, k)
	var rec func(start, depth int)
	rec = func(start, depth int) {
		if depth == k {
			f(c)
			return
		}
		for i := start; i <= n-(k-depth); i++ {
			c[depth] = i
			rec(i+1, depth+1)
		}
	}
	rec(0, 0)
}
