package spotsigs

import (
	"math"
	"slices"
	"sync"
)

// Index holds the signature sets of a stored collection and finds, for a
// query set, every stored set whose Jaccard similarity with it is at least
// a threshold, exactly.
//
// It is the paper's matching scheme without approximation: since
// J(A, B) <= min(|A|, |B|) / max(|A|, |B|), only stored sets of size in
// [tau |Q|, |Q| / tau] can reach tau (the paper partitions the collection by
// set size for this); every posting list is sorted by the stored set's
// size, so a query reads only that window of each list of its signatures,
// counts the signatures each stored set shares with it and keeps those at
// or above tau. A stored set sharing no signature has Jaccard 0.
type Index struct {
	sizes []int32
	post  map[uint64][]int32 // stored set numbers, by (size, number)
	pool  sync.Pool          // *counter
}

// Match is one stored set at or above the threshold.
type Match struct {
	Doc     int // the stored set's position in NewIndex's argument
	Jaccard float64
}

type counter struct {
	n       []int32
	touched []int32
}

// NewIndex indexes sets; a set's number is its position.
func NewIndex(sets []Set) *Index {
	ix := &Index{sizes: make([]int32, len(sets)), post: map[uint64][]int32{}}
	for i, s := range sets {
		ix.sizes[i] = int32(len(s))
		for _, h := range s {
			ix.post[h] = append(ix.post[h], int32(i))
		}
	}
	for _, p := range ix.post {
		slices.SortFunc(p, func(a, b int32) int {
			if ix.sizes[a] != ix.sizes[b] {
				return int(ix.sizes[a] - ix.sizes[b])
			}
			return int(a - b)
		})
	}
	n := len(sets)
	ix.pool.New = func() any { return &counter{n: make([]int32, n)} }
	return ix
}

// Len is the number of stored sets.
func (ix *Index) Len() int { return len(ix.sizes) }

// SizeWindow is the range of stored set sizes that can reach Jaccard tau
// with a query set of size n (0 < tau <= 1), widened by a rounding margin.
func SizeWindow(n int, tau float64) (lo, hi int) {
	lo = int(math.Ceil(tau*float64(n) - 1e-9))
	hi = int(math.Floor(float64(n)/tau + 1e-9))
	return max(lo, 1), hi
}

// Search returns every stored set whose Jaccard similarity with q is at
// least tau (0 < tau <= 1), by descending similarity, then number. An
// empty q matches nothing.
func (ix *Index) Search(q Set, tau float64) []Match {
	if len(q) == 0 {
		return nil
	}
	lo, hi := SizeWindow(len(q), tau)
	c := ix.pool.Get().(*counter)
	defer ix.pool.Put(c)
	for _, h := range q {
		p := ix.post[h]
		// First posting with size >= lo.
		from, _ := slices.BinarySearchFunc(p, int32(lo), func(d, lo int32) int { return int(ix.sizes[d] - lo) })
		for _, d := range p[from:] {
			if int(ix.sizes[d]) > hi {
				break
			}
			if c.n[d] == 0 {
				c.touched = append(c.touched, d)
			}
			c.n[d]++
		}
	}
	var out []Match
	for _, d := range c.touched {
		if j := jaccard(int(c.n[d]), len(q), int(ix.sizes[d])); j >= tau {
			out = append(out, Match{Doc: int(d), Jaccard: j})
		}
		c.n[d] = 0
	}
	c.touched = c.touched[:0]
	sortMatches(out)
	return out
}

// BruteForce compares q with every set: the reference Search must agree
// with.
func BruteForce(sets []Set, q Set, tau float64) []Match {
	var out []Match
	for i, s := range sets {
		if j := Jaccard(q, s); len(q) > 0 && j >= tau {
			out = append(out, Match{Doc: i, Jaccard: j})
		}
	}
	sortMatches(out)
	return out
}

func sortMatches(ms []Match) {
	slices.SortFunc(ms, func(a, b Match) int {
		switch {
		case a.Jaccard > b.Jaccard:
			return -1
		case a.Jaccard < b.Jaccard:
			return 1
		}
		return a.Doc - b.Doc
	})
}
