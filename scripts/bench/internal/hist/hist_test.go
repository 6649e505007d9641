package hist

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// TestQuantilesMatchSort compares At and Rank with quantiles read from a
// brute-force sorted copy of the samples.
func TestQuantilesMatchSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	qs := []float64{0, .1, .5, .9, .99, .999, 1}
	for _, n := range []int{1, 2, 3, 10, 999, 1000, 10007} {
		var s Samples
		raw := make([]int64, n)
		for i := range raw {
			raw[i] = r.Int64N(int64(50 * time.Millisecond))
			s.Add(time.Duration(raw[i]))
		}
		ref := append([]int64(nil), raw...)
		sort.Slice(ref, func(i, j int) bool { return ref[i] < ref[j] })
		for _, q := range qs {
			lo := int(q * float64(n-1))
			if got, want := s.At(q), time.Duration(ref[lo]); got != want {
				t.Errorf("n=%d At(%v) = %v, want %v", n, q, got, want)
			}
			rk := min(n-1, int(q*float64(n)))
			if got, want := s.Rank(q), time.Duration(ref[rk]); got != want {
				t.Errorf("n=%d Rank(%v) = %v, want %v", n, q, got, want)
			}
		}
		if got, want := s.Max(), time.Duration(ref[n-1]); got != want {
			t.Errorf("n=%d Max = %v, want %v", n, got, want)
		}
		s.Add(-1) // a later Add re-sorts before the next read
		if got := s.At(0); got != -1 {
			t.Errorf("n=%d At(0) after Add(-1) = %v", n, got)
		}
	}
}

func TestEmpty(t *testing.T) {
	var s Samples
	if s.At(.5) != 0 || s.Rank(.99) != 0 || s.Max() != 0 || s.Len() != 0 {
		t.Fatal("empty samples must read 0")
	}
}
