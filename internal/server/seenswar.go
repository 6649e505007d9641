package server

import "encoding/binary"

// Word-at-a-time byte tests for the seen routes' JSON scanning: ids are
// 16-40 bytes of plain ASCII, and testing 8 bytes per step instead of one
// halves the cost of finding a string's end (decoding) and of checking that
// it needs no escape (encoding). Each test is exact about whether any byte
// of the word matches (the classic "has zero byte" trick: borrows only
// spread above a byte that already matches).

const (
	swarLSB = 0x0101010101010101
	swarMSB = 0x8080808080808080
)

// swarLess reports (nonzero) whether a byte of x is below n (n <= 0x80).
func swarLess(x uint64, n byte) uint64 { return (x - swarLSB*uint64(n)) & ^x & swarMSB }

// swarHas reports (nonzero) whether a byte of x equals c.
func swarHas(x uint64, c byte) uint64 {
	y := x ^ (swarLSB * uint64(c))
	return (y - swarLSB) & ^y & swarMSB
}

// plainRun returns how many leading whole 8-byte words of b[i:] hold no
// '"', no '\\' and no control byte (< 0x20): the bytes a JSON string scan
// can skip. It returns the index after them.
func plainRun(b []byte, i int) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		if swarLess(x, 0x20)|swarHas(x, '"')|swarHas(x, '\\') != 0 {
			break
		}
		i += 8
	}
	return i
}

// safeRun returns the index after the leading whole 8-byte words of s[i:]
// that encoding/json writes unchanged (jsonSafe: printable ASCII but '"',
// '\\', '<', '>', '&').
func safeRun(s string, i int) int {
	for i+8 <= len(s) {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if swarLess(x, 0x20)|x&swarMSB|swarHas(x, '"')|swarHas(x, '\\')|swarHas(x, '<')|swarHas(x, '>')|swarHas(x, '&') != 0 {
			break
		}
		i += 8
	}
	return i
}
