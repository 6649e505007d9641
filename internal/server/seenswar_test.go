package server

import (
	"strings"
	"testing"
)

// TestSWARRuns: plainRun and safeRun skip exactly the whole words a
// byte-at-a-time scan would pass, for every byte value at every position
// of a word, among words of other safe and unsafe bytes.
func TestSWARRuns(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c != '"' && c != '\\' }
	safe := func(c byte) bool { return c < 0x80 && jsonSafe[c] }
	naive := func(b []byte, ok func(byte) bool) int {
		i := 0
		for i+8 <= len(b) {
			for _, c := range b[i : i+8] {
				if !ok(c) {
					return i
				}
			}
			i += 8
		}
		return i
	}
	for _, fill := range []byte{'a', '0', '~', ' ', 0x7f, 0xc3} {
		for c := range 256 {
			for pos := range 20 {
				b := []byte(strings.Repeat(string(fill), 20))
				b[pos] = byte(c)
				for _, n := range []int{7, 8, 15, 16, 20} {
					in := b[:n]
					if got, want := plainRun(in, 0), naive(in, plain); got != want {
						t.Fatalf("plainRun(%q) = %d, want %d", in, got, want)
					}
					if got, want := safeRun(string(in), 0), naive(in, safe); got != want {
						t.Fatalf("safeRun(%q) = %d, want %d", in, got, want)
					}
				}
			}
		}
	}
}
