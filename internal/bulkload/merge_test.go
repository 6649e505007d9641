package bulkload

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// writeRuns writes k sorted runs of random lengths (some empty) whose keys
// collide within and across runs, and returns their paths and the sorted
// concatenation of their entries. keys 0 draws the largest entries there
// are (keys ^0 and ^0-1, aux up to ^uint32(0)): the merger's exhausted
// runs must still sort after them.
func writeRuns(tb testing.TB, dir string, r *rand.Rand, k, maxLen int, keys uint64) ([]string, []entry) {
	tb.Helper()
	var paths []string
	var all []entry
	for i := range k {
		es := make([]entry, r.IntN(maxLen+1))
		for j := range es {
			if keys == 0 {
				es[j] = entry{key: ^uint64(0) - r.Uint64N(2), aux: ^uint32(0) - uint32(r.IntN(2))}
			} else {
				es[j] = entry{key: r.Uint64N(keys), aux: uint32(r.IntN(3))}
			}
		}
		slices.SortFunc(es, entryCmp)
		p := filepath.Join(dir, runName(i, fmt.Sprintf("k%02d", k)))
		if _, err := writeRun(p, es); err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, p)
		all = append(all, es...)
	}
	slices.SortFunc(all, entryCmp)
	return paths, all
}

// TestMergerRunCounts: the loser tree gives the sorted union of its runs
// for every run count from 0 to 17 (powers of two and the odd shapes in
// between), with runs that end at different times, empty runs and equal
// entries in several runs.
func TestMergerRunCounts(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 7))
	for k := range 18 {
		for _, keys := range []uint64{5, 1 << 62, 0} {
			paths, want := writeRuns(t, dir, r, k, 3000, keys)
			got := mergeAll(t, paths)
			if !slices.Equal(got, want) {
				t.Fatalf("k=%d keys<%d: merged %d entries, want %d in order", k, keys, len(got), len(want))
			}
		}
	}
}

// mergeAll merges the runs at paths and returns every entry in order.
func mergeAll(t *testing.T, paths []string) []entry {
	t.Helper()
	m, err := newMerger(paths)
	if err != nil {
		t.Fatal(err)
	}
	var got []entry
	for {
		e, ok, err := m.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, e)
	}
	if err := m.close(); err != nil {
		t.Fatal(err)
	}
	return got
}

// BenchmarkMerger merges 1.3 M random entries split into 10 runs (a 10^7
// load's merge) or 43 (10^8 at 2 GiB), file reading and block decoding
// included.
func BenchmarkMerger(b *testing.B) {
	for _, runs := range []int{10, 43} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) { benchmarkMerger(b, runs) })
	}
}

func benchmarkMerger(b *testing.B, runs int) {
	dir := b.TempDir()
	r := rand.New(rand.NewPCG(8, 8))
	var paths []string
	n := 0
	for i := range runs {
		es := make([]entry, (10<<17)/runs)
		for j := range es {
			es[j] = entry{key: r.Uint64(), aux: 20000 + uint32(r.IntN(13))}
		}
		slices.SortFunc(es, entryCmp)
		p := filepath.Join(dir, runName(i, "bench"))
		if _, err := writeRun(p, es); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
		n += len(es)
	}
	for b.Loop() {
		m, err := newMerger(paths)
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, ok, err := m.next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
		}
		m.close()
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(n), "ns/entry")
}
