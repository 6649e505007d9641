package pebblestore

import (
	"testing"

	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storage.Store {
		s, err := Open(t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestSplitKeyRoundTrip(t *testing.T) {
	for _, row := range []string{"", "a", "\x00", "\x00\xff\x00", "\xff\x01\x00"} {
		k := append(rowPrefix(nil, storage.TableFP, []byte(row)), "qual\x00"...)
		r, q, err := splitKey(k)
		if err != nil || string(r) != row || string(q) != "qual\x00" {
			t.Errorf("splitKey(%x) = %q %q %v", k, r, q, err)
		}
	}
	for _, bad := range []string{"", "\x01abc", "\x01a\x00", "\x01a\x00\x05"} {
		if _, _, err := splitKey([]byte(bad)); err == nil {
			t.Errorf("splitKey(%x) accepted", bad)
		}
	}
}
