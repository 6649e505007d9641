// Package swar holds word-at-a-time byte tests ("SIMD within a register"):
// eight bytes tested per step instead of one, for the hot scans of ids and
// JSON strings on the seen routes. Each test is exact about whether any
// byte of the word matches (the classic "has zero byte" trick: borrows
// only spread above a byte that already matches), though not about which
// bytes above the first match are flagged.
package swar

// LSB and MSB are the low and high bit of every byte of a word.
const (
	LSB = 0x0101010101010101
	MSB = 0x8080808080808080
)

// Less reports (nonzero) whether a byte of x is below n (n <= 0x80).
func Less(x uint64, n byte) uint64 { return (x - LSB*uint64(n)) & ^x & MSB }

// Has reports (nonzero) whether a byte of x equals c.
func Has(x uint64, c byte) uint64 {
	y := x ^ (LSB * uint64(c))
	return (y - LSB) & ^y & MSB
}
