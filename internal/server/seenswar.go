package server

import (
	"encoding/binary"

	"github.com/simdex/simdex/internal/swar"
)

// Word-at-a-time byte tests for the seen routes' JSON scanning: ids are
// 16-40 bytes of plain ASCII, and testing 8 bytes per step instead of one
// halves the cost of finding a string's end (decoding) and of checking that
// it needs no escape (encoding).

// plainRun returns how many leading whole 8-byte words of b[i:] hold no
// '"', no '\\' and no control byte (< 0x20): the bytes a JSON string scan
// can skip. It returns the index after them.
func plainRun(b []byte, i int) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		if swar.Less(x, 0x20)|swar.Has(x, '"')|swar.Has(x, '\\') != 0 {
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
		if swar.Less(x, 0x20)|x&swar.MSB|swar.Has(x, '"')|swar.Has(x, '\\')|swar.Has(x, '<')|swar.Has(x, '>')|swar.Has(x, '&') != 0 {
			break
		}
		i += 8
	}
	return i
}
