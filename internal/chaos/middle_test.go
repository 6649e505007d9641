package chaos

import (
	"bytes"
	"testing"
)

// TestMiddle checks the split points splitAll picks: strictly inside the
// region, or none when the first four bytes leave no room.
func TestMiddle(t *testing.T) {
	for _, tc := range []struct {
		start, end, want []byte
	}{
		{nil, nil, []byte{0x80}},
		{nil, []byte{1}, []byte{0, 0x80}},
		{[]byte{1}, []byte{2}, []byte{1, 0x80}},
		{[]byte{2, 0x40}, nil, []byte{0x81, 0x20}},
		{[]byte{1, 0, 0, 0}, []byte{1, 0, 0, 1}, nil},
		{[]byte{1, 0, 0, 0, 5}, []byte{1, 0, 0, 1}, nil},
		{[]byte{0xff, 0xff, 0xff, 0xff}, nil, nil},
	} {
		got := middle(tc.start, tc.end)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("middle(%x, %x) = %x, want %x", tc.start, tc.end, got, tc.want)
		}
		if got != nil && (bytes.Compare(got, tc.start) <= 0 || (len(tc.end) > 0 && bytes.Compare(got, tc.end) >= 0)) {
			t.Errorf("middle(%x, %x) = %x is not inside", tc.start, tc.end, got)
		}
	}
}
