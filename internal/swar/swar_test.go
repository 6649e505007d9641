package swar

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestAgainstBytes: Less and Has agree with a byte-by-byte test on random
// words and on words built around the edge values.
func TestAgainstBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	edges := []byte{0, 1, 0x1f, 0x20, 0x21, '"', '\\', '/', 0x7e, 0x7f, 0x80, 0x81, 0xfe, 0xff}
	var b [8]byte
	for i := range 200000 {
		for j := range b {
			if i%2 == 0 {
				b[j] = edges[r.IntN(len(edges))]
			} else {
				b[j] = byte(r.Uint32())
			}
		}
		x := binary.LittleEndian.Uint64(b[:])
		for _, n := range []byte{0x20, 0x7f, 0x80} {
			want := false
			for _, c := range b {
				want = want || c < n
			}
			if got := Less(x, n) != 0; got != want {
				t.Fatalf("Less(% x, %#x) = %v, want %v", b, n, got, want)
			}
		}
		for _, c := range []byte{0, '"', '\\', '/', 0x7f, 0xff} {
			want := false
			for _, d := range b {
				want = want || d == c
			}
			if got := Has(x, c) != 0; got != want {
				t.Fatalf("Has(% x, %#x) = %v, want %v", b, c, got, want)
			}
		}
	}
}
