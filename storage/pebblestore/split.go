package pebblestore

import (
	"bytes"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// Row prefixes and bloom filters.
//
// A check by text reads 32 band rows, nearly all absent, with random keys.
// Without filters each absent row costs a seek in every sstable whose key
// range covers it (all of them, for random keys). With the comparer's
// Split ending a key's prefix after the row terminator (table | escaped row
// | 0x00 0x01), Pebble builds a bloom filter of the row prefixes of each
// sstable, and SeekPrefixGE(row prefix) skips every sstable whose filter
// says the row is not there (~1% false positives at 10 bits per key).
//
// Compatibility with stores written before (no Split, no filters):
//
//   - Order is unchanged. The comparer is Pebble's bytewise comparer with
//     its name ("leveldb.BytewiseComparator"); only Split is added. Split
//     is consistent with bytewise order because row prefixes are
//     prefix-free: a prefix ends with the first 0x00 0x01 after the table
//     byte, and inside an escaped row every 0x00 is followed by 0xFF, so no
//     row prefix is a proper prefix of another and comparing whole keys
//     bytewise equals comparing (prefix, then suffix) bytewise, as Pebble
//     requires. The store's format major version is unchanged and keeps
//     row-oriented sstables, whose blocks do not depend on Split.
//   - Old sstables have no filter block: Pebble simply reads them (a seek,
//     as before). Compactions rewrite them with filters over time.
//   - A binary without this change opening a store written with it ignores
//     the filter blocks (it configures no filter policy, and Pebble only
//     uses filters it is configured with), so going back is safe too.
//
// TestOpensStoreWrittenWithoutFilters checks both directions. Any future
// change of the key layout must keep Split's prefix-free argument or change
// the comparer's name (which Pebble then refuses to mix).

// filterBitsPerKey sizes the bloom filters: 10 bits per row prefix gives
// about 1% false positives.
const filterBitsPerKey = 10

// splitRow returns the length of key's row prefix: up to and including the
// first 0x00 0x01 after the table byte, or the whole key when it has no row
// terminator (not a key this store writes; Pebble may also call Split on
// prefixes and on arbitrary seek keys).
func splitRow(key []byte) int {
	if len(key) < 1 {
		return len(key)
	}
	// The first 0x00 0x01 after the table byte: each 0x00 is found with
	// IndexByte (a 0x00 inside a row is followed by 0xFF), which is
	// cheaper than bytes.Index's search for the pair on keys this short.
	k := key[1:]
	for from := 0; ; {
		i := bytes.IndexByte(k[from:], 0)
		if i < 0 {
			return len(key)
		}
		j := from + i
		if j+1 < len(k) && k[j+1] == rowTerminator[1] {
			return 1 + j + len(rowTerminator)
		}
		from = j + 1
	}
}

var rowTerminator = []byte{0x00, 0x01}

// comparer is Pebble's bytewise comparer, same name and order, with
// splitRow as its Split.
var comparer = func() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Split = splitRow
	return &c
}()

// setTableOptions configures the comparer and the row-prefix bloom filters
// of every level (Pebble's default has no filters). A filter is one block
// per sstable, read through the block cache: with a cache much smaller than
// the server's default (256 MiB), the large filters of the bottom levels
// are evicted and re-read (measured: 40% of a batch insert's CPU with a 32
// MiB cache, none with 256 MiB).
func setTableOptions(po *pebble.Options) {
	po.Comparer = comparer
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(filterBitsPerKey)
	}
}
