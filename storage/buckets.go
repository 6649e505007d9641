package storage

import (
	"encoding/binary"
	"time"
)

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

// BucketQualifier is the qualifier of a cell that index rows and seen sets
// keep per time bucket (a delta): kind, bucket (4 bytes) and v (8 bytes),
// big-endian; 13 bytes.
func BucketQualifier(kind byte, bucket uint32, v uint64) []byte {
	q := make([]byte, 1+4+8)
	q[0] = kind
	binary.BigEndian.PutUint32(q[1:], bucket)
	binary.BigEndian.PutUint64(q[5:], v)
	return q
}

// ValueQualifier is the qualifier of a cell of every bucket (a
// tombstone): kind and v (8 bytes, big-endian); 9 bytes.
func ValueQualifier(kind byte, v uint64) []byte {
	q := make([]byte, 1+8)
	q[0] = kind
	binary.BigEndian.PutUint64(q[1:], v)
	return q
}
