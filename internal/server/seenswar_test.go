package server

import (
	"bytes"
	"fmt"
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

// notPlain and notSafe are the bytes plainRun and safeRun stop at, for
// the standard library's scans the word-at-a-time ones are measured
// against (BenchmarkSWARRuns).
var (
	notPlain = func() string {
		var b []byte
		for c := range 0x20 {
			b = append(b, byte(c))
		}
		return string(append(b, '"', '\\'))
	}()
	notSafe = func() string {
		var b []byte
		for c := range 256 {
			if c >= 0x80 || !jsonSafe[c] {
				b = append(b, byte(c))
			}
		}
		return string(b)
	}()
)

// BenchmarkSWARRuns: the seen routes' scans of ids in a request body
// (plainRun) and of ids written into an answer (safeRun), word at a time
// against bytes.IndexAny / strings.IndexAny and a byte loop, on ids of the
// lengths feeds send (16-40 bytes).
func BenchmarkSWARRuns(b *testing.B) {
	isPlain := func(c byte) bool { return c >= 0x20 && c != '"' && c != '\\' }
	for _, n := range []int{16, 24, 40} {
		id := strings.Repeat("a1b2c3d4-e5f6", 4)[:n]
		body := []byte(id + `"`)
		b.Run(fmt.Sprintf("decode/%d/swar", n), func(b *testing.B) {
			for b.Loop() {
				i := plainRun(body, 0)
				for body[i] != '"' {
					i++
				}
				if i != n {
					b.Fatal(i)
				}
			}
		})
		b.Run(fmt.Sprintf("decode/%d/indexany", n), func(b *testing.B) {
			for b.Loop() {
				if i := bytes.IndexAny(body, notPlain); i != n {
					b.Fatal(i)
				}
			}
		})
		b.Run(fmt.Sprintf("decode/%d/loop", n), func(b *testing.B) {
			for b.Loop() {
				i := 0
				for isPlain(body[i]) {
					i++
				}
				if i != n {
					b.Fatal(i)
				}
			}
		})
		b.Run(fmt.Sprintf("encode/%d/swar", n), func(b *testing.B) {
			for b.Loop() {
				i := safeRun(id, 0)
				for i < len(id) && id[i] < 0x80 && jsonSafe[id[i]] {
					i++
				}
				if i != n {
					b.Fatal(i)
				}
			}
		})
		b.Run(fmt.Sprintf("encode/%d/indexany", n), func(b *testing.B) {
			for b.Loop() {
				if i := strings.IndexAny(id, notSafe); i != -1 {
					b.Fatal(i)
				}
			}
		})
	}
}
