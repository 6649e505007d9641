// Package hist holds the latency samples of a benchmark and reads exact
// quantiles from them, so every tool under scripts/bench computes its
// percentiles the same way.
//
// Two index rules are kept, because published figures were taken with each:
// At(q) is the sample at index ⌊q·(n-1)⌋ of the sorted samples (the lower of
// the two samples a linear interpolation would use), Rank(q) the sample at
// index min(n-1, ⌊q·n⌋).
package hist

import (
	"slices"
	"time"
)

// Samples is a set of durations. The zero value is empty and ready to use.
// It is not safe for concurrent use.
type Samples struct {
	d      []time.Duration
	sorted bool
}

// New returns samples holding d; d is sorted in place when a quantile is
// read and must not be changed by the caller afterwards.
func New(d []time.Duration) *Samples { return &Samples{d: d} }

// Add records one sample.
func (s *Samples) Add(d time.Duration) {
	s.d = append(s.d, d)
	s.sorted = false
}

// Merge adds o's samples.
func (s *Samples) Merge(o *Samples) {
	s.d = append(s.d, o.d...)
	s.sorted = false
}

// Len returns the number of samples.
func (s *Samples) Len() int { return len(s.d) }

func (s *Samples) sort() {
	if !s.sorted {
		slices.Sort(s.d)
		s.sorted = true
	}
}

// At returns the sample at index ⌊q·(n-1)⌋ of the sorted samples, or 0 when
// there are none. q is in [0, 1].
func (s *Samples) At(q float64) time.Duration {
	if len(s.d) == 0 {
		return 0
	}
	s.sort()
	return s.d[clamp(int(q*float64(len(s.d)-1)), len(s.d))]
}

// Rank returns the sample at index min(n-1, ⌊q·n⌋) of the sorted samples, or
// 0 when there are none. q is in [0, 1].
func (s *Samples) Rank(q float64) time.Duration {
	if len(s.d) == 0 {
		return 0
	}
	s.sort()
	return s.d[clamp(int(q*float64(len(s.d))), len(s.d))]
}

// Max returns the largest sample, or 0 when there are none.
func (s *Samples) Max() time.Duration {
	if len(s.d) == 0 {
		return 0
	}
	s.sort()
	return s.d[len(s.d)-1]
}

func clamp(i, n int) int { return max(0, min(n-1, i)) }
