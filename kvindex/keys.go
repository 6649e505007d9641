package kvindex

import (
	"encoding/binary"
	"fmt"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/storage"
)

// Cell qualifier kinds in index rows. Their byte order ('b' < 'd' < 'x')
// keeps base sets, then deltas, then tombstones together in a row.
const (
	qualBase      = 'b'
	qualDelta     = 'd'
	qualTombstone = 'x'
)

// Qualifier lengths in index rows.
const (
	baseQualLen      = 1 + 4 + 2 // 'b' bucket(4) chunk(2)
	deltaQualLen     = 1 + 4 + 8 // 'd' bucket(4) residual(8)
	tombstoneQualLen = 1 + 8     // 'x' residual(8)
)

// IndexRowKey appends the index row key of (table, prefix) to dst: the table
// id byte, then the prefix right-aligned in ceil(prefixBits/8) big-endian
// bytes.
func IndexRowKey(dst []byte, table int, prefix uint64, prefixBits int) []byte {
	dst = append(dst, byte(table))
	n := (prefixBits + 7) / 8
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(prefix>>(8*i)))
	}
	return dst
}

// ParseIndexRowKey splits an index row key into table and prefix, checking
// its length against the table's prefix width in prefixBits (one entry per
// table).
func ParseIndexRowKey(key []byte, prefixBits []int) (table int, prefix uint64, err error) {
	if len(key) < 1 {
		return 0, 0, fmt.Errorf("empty index row key")
	}
	table = int(key[0])
	if table >= len(prefixBits) {
		return 0, 0, fmt.Errorf("index row key %x: table %d of %d", key, table, len(prefixBits))
	}
	n := (prefixBits[table] + 7) / 8
	if len(key) != 1+n {
		return 0, 0, fmt.Errorf("index row key %x: %d bytes, want %d", key, len(key), 1+n)
	}
	for _, b := range key[1:] {
		prefix = prefix<<8 | uint64(b)
	}
	if prefixBits[table] < 64 && prefix>>prefixBits[table] != 0 {
		return 0, 0, fmt.Errorf("index row key %x: prefix wider than %d bits", key, prefixBits[table])
	}
	return table, prefix, nil
}

// baseQualifier is the qualifier of chunk `chunk` of the base set of time
// bucket `bucket`: 'b', bucket (4 bytes big-endian), chunk (2 bytes).
func baseQualifier(bucket uint32, chunk int) []byte {
	q := make([]byte, baseQualLen)
	q[0] = qualBase
	binary.BigEndian.PutUint32(q[1:], bucket)
	binary.BigEndian.PutUint16(q[5:], uint16(chunk))
	return q
}

// deltaQualifier is the qualifier of one online insert of residual r in time
// bucket `bucket`: 'd', bucket (4 bytes), residual (8 bytes), big-endian.
func deltaQualifier(bucket uint32, r uint64) []byte {
	return storage.BucketQualifier(qualDelta, bucket, r)
}

// tombstoneQualifier is the qualifier that deletes residual r from a row in
// every bucket: 'x', residual (8 bytes big-endian).
func tombstoneQualifier(r uint64) []byte {
	return storage.ValueQualifier(qualTombstone, r)
}

// IndexCellKind is the kind of a cell in an index row.
type IndexCellKind uint8

// Index cell kinds.
const (
	BaseCell IndexCellKind = iota + 1
	DeltaCell
	TombstoneCell
)

// indexQualifier is a decoded index-row qualifier.
type indexQualifier struct {
	Kind     IndexCellKind
	Bucket   uint32 // BaseCell, DeltaCell
	Chunk    int    // BaseCell
	Residual uint64 // DeltaCell, TombstoneCell
}

// parseIndexQualifier decodes an index-row qualifier.
func parseIndexQualifier(q []byte) (indexQualifier, error) {
	if len(q) == 0 {
		return indexQualifier{}, fmt.Errorf("empty qualifier")
	}
	switch q[0] {
	case qualBase:
		if len(q) != baseQualLen {
			return indexQualifier{}, fmt.Errorf("base-set qualifier of %d bytes, want %d", len(q), baseQualLen)
		}
		return indexQualifier{Kind: BaseCell, Bucket: binary.BigEndian.Uint32(q[1:]), Chunk: int(binary.BigEndian.Uint16(q[5:]))}, nil
	case qualDelta:
		if len(q) != deltaQualLen {
			return indexQualifier{}, fmt.Errorf("delta qualifier of %d bytes, want %d", len(q), deltaQualLen)
		}
		return indexQualifier{Kind: DeltaCell, Bucket: binary.BigEndian.Uint32(q[1:]), Residual: binary.BigEndian.Uint64(q[5:])}, nil
	case qualTombstone:
		if len(q) != tombstoneQualLen {
			return indexQualifier{}, fmt.Errorf("tombstone qualifier of %d bytes, want %d", len(q), tombstoneQualLen)
		}
		return indexQualifier{Kind: TombstoneCell, Residual: binary.BigEndian.Uint64(q[1:])}, nil
	}
	return indexQualifier{}, fmt.Errorf("unknown qualifier kind %q", q[0])
}

// FPRowKey is the fp-table row key of a fingerprint: 8 bytes big-endian.
func FPRowKey(fp uint64) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, fp)
	return k
}

// bandRowKeyLen is the length of a bands-table row key.
const bandRowKeyLen = 1 + 8

// BandRowKey is the bands-table row key of band `band` with hash h: the
// band index (1 byte: 0..31 an LSH band, fingerprint.TextKeyBand (32) a
// text key, SourceKeyBand (33) a text key scoped to a source), then h (8
// bytes big-endian).
func BandRowKey(band int, h uint64) []byte {
	k := make([]byte, bandRowKeyLen)
	putBandRowKey(k, band, h)
	return k
}

// putBandRowKey writes the band row key of (band, h) into k[:bandRowKeyLen].
func putBandRowKey(k []byte, band int, h uint64) {
	k[0] = byte(band)
	binary.BigEndian.PutUint64(k[1:], h)
}

// ParseBandRowKey splits a bands-table row key into band index and hash.
func ParseBandRowKey(key []byte) (band int, h uint64, err error) {
	if len(key) != bandRowKeyLen {
		return 0, 0, fmt.Errorf("band row key %x: %d bytes, want %d", key, len(key), bandRowKeyLen)
	}
	if int(key[0]) > SourceKeyBand {
		return 0, 0, fmt.Errorf("band row key %x: band %d of %d (and text keys %d, scoped %d)", key, key[0], fingerprint.NumBands, fingerprint.TextKeyBand, SourceKeyBand)
	}
	return int(key[0]), binary.BigEndian.Uint64(key[1:]), nil
}
