package storage

import "time"

// Buckets maps times to time buckets: bucket n holds [n*Width, (n+1)*Width)
// since the Unix epoch, clamped to 0..2^32-1. Index rows and seen sets
// group their cells by bucket, so that a retention window drops whole
// buckets.
type Buckets struct{ Width time.Duration }

// Of returns the bucket of t. Width is a whole number of seconds (the
// configs that set it validate that), so any time.Time maps without
// overflow.
func (b Buckets) Of(t time.Time) uint32 {
	sec := t.Unix()
	if sec < 0 {
		return 0
	}
	n := sec / int64(b.Width/time.Second)
	if n > 1<<32-1 {
		return 1<<32 - 1
	}
	return uint32(n)
}

// Start returns the first instant of bucket n.
func (b Buckets) Start(n uint32) time.Time {
	return time.Unix(int64(n)*int64(b.Width/time.Second), 0).UTC()
}
