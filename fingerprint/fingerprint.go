// Package fingerprint turns documents into the numbers the simdex index stores:
// a 64-bit weighted simhash of the body, a title simhash and an exact-content
// hash, together with the helpers the index needs to work with fingerprints
// (Hamming distance, parsing and formatting, and the block-permutation layout
// that the pigeonhole index is built on).
package fingerprint

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// ErrBadFingerprint is returned (wrapped) when a textual fingerprint cannot be parsed.
var ErrBadFingerprint = errors.New("fingerprint: bad fingerprint")

// Fingerprint is a 64-bit simhash. Two fingerprints of near-identical text
// differ in few bits; Distance counts them.
type Fingerprint uint64

// Distance returns the Hamming distance between a and b (0..64).
func Distance(a, b Fingerprint) int {
	return bits.OnesCount64(uint64(a ^ b))
}

// String formats f as 16 lower-case hexadecimal digits, the canonical form
// simdex uses in JSON, logs and tools.
func (f Fingerprint) String() string {
	var buf [16]byte
	const hexdigits = "0123456789abcdef"
	v := uint64(f)
	for i := 15; i >= 0; i-- {
		buf[i] = hexdigits[v&0xf]
		v >>= 4
	}
	return string(buf[:])
}

// MarshalText implements encoding.TextMarshaler (the canonical hex form), so a
// Fingerprint is a JSON string: JSON numbers lose precision above 2^53.
func (f Fingerprint) MarshalText() ([]byte, error) {
	return []byte(f.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with the rules of Parse.
func (f *Fingerprint) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// Parse reads a fingerprint written as exactly 16 hexadecimal digits
// (optionally with a 0x prefix, either case) or as an unsigned decimal number
// (optionally with a "d:" prefix to force decimal for 16-digit numbers).
// Anything else is an error wrapping ErrBadFingerprint.
func Parse(s string) (Fingerprint, error) {
	orig := s
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return 0, fmt.Errorf("%w: empty", ErrBadFingerprint)
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		h := s[2:]
		if len(h) == 0 || len(h) > 16 {
			return 0, fmt.Errorf("%w: %q: want 1-16 hex digits after 0x", ErrBadFingerprint, orig)
		}
		v, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not hexadecimal", ErrBadFingerprint, orig)
		}
		return Fingerprint(v), nil
	case strings.HasPrefix(s, "d:"):
		v, err := strconv.ParseUint(s[2:], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not an unsigned 64-bit decimal", ErrBadFingerprint, orig)
		}
		return Fingerprint(v), nil
	case len(s) == 16:
		v, err := strconv.ParseUint(s, 16, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not 16 hexadecimal digits", ErrBadFingerprint, orig)
		}
		return Fingerprint(v), nil
	default:
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q: want 16 hex digits, 0x-prefixed hex or an unsigned decimal", ErrBadFingerprint, orig)
		}
		return Fingerprint(v), nil
	}
}
