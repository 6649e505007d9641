package kvindex

import (
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// stripedLocks serializes writers that touch the same index rows or document
// ids within this process. Each mutex protects every row (or id) whose hash
// falls on its stripe: holding it is the right to read-then-write those rows.
// Callers take all the stripes they need at once, in increasing order, so two
// writers never wait on each other in a cycle.
//
// Why this gives exactly one original: two fingerprints within distance K
// agree on the prefix of at least one table (pigeonhole), so two racing
// near-duplicate inserts both need that table's row stripe; the second to get
// it sees the first's committed writes in its lookup.
type stripedLocks struct {
	ids  []sync.Mutex // stripes for document ids
	rows []sync.Mutex // stripes for index rows (table, prefix)
}

func newStripedLocks(n int) *stripedLocks {
	return &stripedLocks{ids: make([]sync.Mutex, n), rows: make([]sync.Mutex, n)}
}

func (l *stripedLocks) idStripe(id string) int {
	return int(xxhash.Sum64String(id) % uint64(len(l.ids)))
}

func (l *stripedLocks) rowStripe(table int, prefix uint64) int {
	h := (uint64(table)<<56 ^ prefix) * 0x9E3779B97F4A7C15
	h ^= h >> 29
	return int(h % uint64(len(l.rows)))
}

// lock takes the given stripes of set in increasing order and returns the
// function that releases them.
func lockStripes(set []sync.Mutex, stripes []int) func() {
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		set[s].Lock()
	}
	return func() {
		for i := len(stripes) - 1; i >= 0; i-- {
			set[stripes[i]].Unlock()
		}
	}
}
