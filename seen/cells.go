package seen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/internal/swar"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// FormatVersion is the version of the seen table's layout (docs/FORMAT.md,
// "seen table"). It is kept in the meta table's "seen" row.
const FormatVersion = 1

// Seen-row cell kinds (the qualifier's first byte). Their order keeps base
// sets, fingerprint sets, deltas, fingerprint deltas and tombstones together
// in a row, and tombstones last.
const (
	qualBase  = 'b' // 'b' bucket(4) chunk(2): folded item hashes of a bucket
	qualFPs   = 'c' // 'c' bucket(4) chunk(2): folded (hash, fingerprint) pairs
	qualDelta = 'd' // 'd' bucket(4) hash(8): one mark, empty value
	qualFPDel = 'e' // 'e' bucket(4) hash(8): a mark's fingerprint, 8-byte value
	qualTomb  = 'x' // 'x' hash(8): a deleted item, 8-byte deletion time value
)

const (
	chunkQualLen = 1 + 4 + 2
	deltaQualLen = 1 + 4 + 8
	tombQualLen  = 1 + 8
	saltLen      = 2
)

// Fingerprint-set cell value (qualFPs), docs/FORMAT.md:
//
//	byte 0     fpSetV1
//	bytes 1-4  CRC-32C (Castagnoli) of bytes 5.., big-endian
//	bytes 5..  uvarint n (>= 1), then n pairs sorted by hash, strictly
//	           increasing: uvarint hash gap (the first pair's hash itself,
//	           then hash[i] - hash[i-1] >= 1), 8-byte big-endian fingerprint
const (
	fpSetV1        = 0x01
	fpSetHeaderLen = 5
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errCell = errors.New("bad seen cell")

// RowKey is the seen-table row key of user: a 2-byte salt (the top 16 bits
// of xxhash64(user), big-endian) then the user id's bytes. The salt spreads
// users over the table's regions.
func RowKey(user string) []byte {
	k := make([]byte, saltLen, saltLen+len(user))
	binary.BigEndian.PutUint16(k, uint16(xxhash.Sum64String(user)>>48))
	return append(k, user...)
}

// UserOf returns the user id of a seen row key, checking its salt.
func UserOf(key []byte) (string, error) {
	if len(key) <= saltLen {
		return "", fmt.Errorf("%w: row key %x too short", errCell, key)
	}
	user := string(key[saltLen:])
	if binary.BigEndian.Uint16(key) != uint16(xxhash.Sum64String(user)>>48) {
		return "", fmt.Errorf("%w: row key %x: salt does not match the user", errCell, key)
	}
	return user, nil
}

// ItemHash is the hash kept for item of user: the top bits bits of
// xxhash64(user | 0x00 | item). Salting with the user makes two users'
// collisions independent. Ids never hold NUL (checkID), so the input is
// unambiguous.
func ItemHash(user, item string, bits int) uint64 {
	var h hasher
	return h.hash(user, item, bits)
}

// hasher computes ItemHash with a reusable buffer (one-shot hashing of
// user | 0 | item is faster than a streaming digest).
type hasher struct {
	buf []byte
	n   int // length of the user | 0 prefix in buf (forUser)
}

func (h *hasher) hash(user, item string, bits int) uint64 {
	h.buf = append(append(append(h.buf[:0], user...), 0), item...)
	h.n = 0
	return xxhash.Sum64(h.buf) >> (64 - bits)
}

// forUser starts a run of item hashes of one user: the user | 0 prefix is
// written once, and item only appends each id to it (a filter hashes
// hundreds of candidates of one user).
func (h *hasher) forUser(user string) {
	h.buf = append(append(h.buf[:0], user...), 0)
	h.n = len(h.buf)
}

// item is ItemHash(user, item, bits) for the user of the last forUser.
func (h *hasher) item(item string, bits int) uint64 {
	h.buf = append(h.buf[:h.n], item...)
	return xxhash.Sum64(h.buf) >> (64 - bits)
}

func chunkQualifier(kind byte, bucket uint32, chunk int) []byte {
	q := make([]byte, chunkQualLen)
	q[0] = kind
	binary.BigEndian.PutUint32(q[1:], bucket)
	binary.BigEndian.PutUint16(q[5:], uint16(chunk))
	return q
}

func deltaQualifier(kind byte, bucket uint32, h uint64) []byte {
	return storage.BucketQualifier(kind, bucket, h)
}

func tombQualifier(h uint64) []byte { return storage.ValueQualifier(qualTomb, h) }

// qual is a decoded seen-row qualifier.
type qual struct {
	kind   byte
	bucket uint32
	chunk  int
	hash   uint64
}

func parseQualifier(q []byte, hashBits int) (qual, error) {
	if len(q) == 0 {
		return qual{}, fmt.Errorf("%w: empty qualifier", errCell)
	}
	want := 0
	switch q[0] {
	case qualBase, qualFPs:
		want = chunkQualLen
	case qualDelta, qualFPDel:
		want = deltaQualLen
	case qualTomb:
		want = tombQualLen
	default:
		return qual{}, fmt.Errorf("%w: unknown qualifier kind %q", errCell, q[0])
	}
	if len(q) != want {
		return qual{}, fmt.Errorf("%w: qualifier kind %q of %d bytes, want %d", errCell, q[0], len(q), want)
	}
	out := qual{kind: q[0]}
	switch q[0] {
	case qualBase, qualFPs:
		out.bucket, out.chunk = binary.BigEndian.Uint32(q[1:]), int(binary.BigEndian.Uint16(q[5:]))
	case qualDelta, qualFPDel:
		out.bucket, out.hash = binary.BigEndian.Uint32(q[1:]), binary.BigEndian.Uint64(q[5:])
	case qualTomb:
		out.hash = binary.BigEndian.Uint64(q[1:])
	}
	if hashBits < 64 && out.hash>>hashBits != 0 {
		return qual{}, fmt.Errorf("%w: hash %x wider than %d bits", errCell, out.hash, hashBits)
	}
	return out, nil
}

// fpPair is one seen item's fingerprint.
type fpPair struct {
	hash uint64
	fp   uint64
}

// encodeFPSet encodes pairs (sorted by hash, distinct hashes) into cell
// values of at most maxCellBytes each.
func encodeFPSet(pairs []fpPair, maxCellBytes int) [][]byte {
	var out [][]byte
	for len(pairs) > 0 {
		// Each pair takes at most 10 + 8 bytes; a header and the count 15.
		n := min(len(pairs), (maxCellBytes-fpSetHeaderLen-10)/18)
		v := make([]byte, fpSetHeaderLen, fpSetHeaderLen+10+18*n)
		v[0] = fpSetV1
		v = binary.AppendUvarint(v, uint64(n))
		prev := uint64(0)
		for i, p := range pairs[:n] {
			g := p.hash
			if i > 0 {
				g = p.hash - prev
			}
			v = binary.AppendUvarint(v, g)
			v = binary.BigEndian.AppendUint64(v, p.fp)
			prev = p.hash
		}
		binary.BigEndian.PutUint32(v[1:], crc32.Checksum(v[fpSetHeaderLen:], castagnoli))
		out = append(out, v)
		pairs = pairs[n:]
	}
	return out
}

// decodeFPSet appends the pairs of one fingerprint-set cell to dst. It
// checks the version, checksum, count, order and hash width; nothing of a
// damaged cell is returned.
func decodeFPSet(dst []fpPair, v []byte, hashBits int) ([]fpPair, error) {
	n0 := len(dst)
	fail := func(format string, args ...any) ([]fpPair, error) {
		return dst[:n0], fmt.Errorf("%w: fingerprint set: %s", errCell, fmt.Sprintf(format, args...))
	}
	if len(v) < fpSetHeaderLen+1 {
		return fail("%d bytes, shorter than the header", len(v))
	}
	if v[0] != fpSetV1 {
		return fail("unknown encoding %#x", v[0])
	}
	if got, want := crc32.Checksum(v[fpSetHeaderLen:], castagnoli), binary.BigEndian.Uint32(v[1:]); got != want {
		return fail("checksum %08x, want %08x", got, want)
	}
	p := v[fpSetHeaderLen:]
	n, w := binary.Uvarint(p)
	if w <= 0 || n == 0 || n > uint64(len(p))/9 {
		return fail("bad count")
	}
	p = p[w:]
	var h uint64
	for i := uint64(0); i < n; i++ {
		g, w := binary.Uvarint(p)
		if w <= 0 || len(p) < w+8 {
			return fail("truncated at pair %d", i)
		}
		if i > 0 && (g == 0 || h+g < h) {
			return fail("pair %d out of order", i)
		}
		h += g
		if hashBits < 64 && h>>hashBits != 0 {
			return fail("hash %x wider than %d bits", h, hashBits)
		}
		dst = append(dst, fpPair{hash: h, fp: binary.BigEndian.Uint64(p[w:])})
		p = p[w+8:]
	}
	if len(p) != 0 {
		return fail("%d trailing bytes", len(p))
	}
	return dst, nil
}

// checkID reports whether id can be a user (user true) or item id: 1..
// MaxIDBytes bytes of UTF-8 without control characters; user ids also
// without '/', since they are one URL path segment.
func checkID(id string, user bool) error {
	if plainID(id, user) {
		return nil
	}
	sentinel, what := ErrBadItem, "item id"
	if user {
		sentinel, what = ErrBadUser, "user id"
	}
	switch {
	case id == "":
		return fmt.Errorf("%w: empty %s", sentinel, what)
	case len(id) > MaxIDBytes:
		return fmt.Errorf("%w: %s of %d bytes (at most %d)", sentinel, what, len(id), MaxIDBytes)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: %s is not valid UTF-8", sentinel, what)
	case hasControl(id):
		return fmt.Errorf("%w: %s %q holds control characters", sentinel, what, id)
	case user && strings.Contains(id, "/"):
		return fmt.Errorf("%w: user id %q holds '/'", sentinel, id)
	}
	return nil
}

// plainID reports whether id is 1..MaxIDBytes bytes of printable ASCII
// (without '/' for a user): such an id passes every check of checkID, in
// one pass over its bytes instead of a UTF-8 pass and a control-character
// pass (checking the 500 candidate ids was ~10% of a filter's CPU).
func plainID(id string, user bool) bool {
	if len(id) == 0 || len(id) > MaxIDBytes {
		return false
	}
	// Eight bytes a step (ids are typically 16-40 bytes), the last step on
	// the id's last eight bytes (overlapping the one before: checking a
	// byte twice is harmless); ids under eight bytes byte by byte.
	if len(id) < 8 {
		for i := 0; i < len(id); i++ {
			if c := id[i]; c < 0x20 || c >= 0x7f || (user && c == '/') {
				return false
			}
		}
		return true
	}
	for i := 0; ; i += 8 {
		if i+8 > len(id) {
			i = len(id) - 8
		}
		x := binary.LittleEndian.Uint64([]byte(id[i : i+8]))
		bad := swar.Less(x, 0x20) | x&swar.MSB | swar.Has(x, 0x7f)
		if user {
			bad |= swar.Has(x, '/')
		}
		if bad != 0 {
			return false
		}
		if i+8 == len(id) {
			return true
		}
	}
}

// corrupt names the cell of a decoding failure (kvindex.ErrCorrupt).
func corrupt(row, q []byte, err error) error {
	return &kvindex.CorruptError{Table: storage.TableSeen, Row: slices.Clone(row), Qualifier: slices.Clone(q), Reason: err.Error()}
}

// hasControl reports whether id holds a C0 or C1 control character or DEL;
// ASCII ids (the common case) take a byte loop.
func hasControl(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 0x80 {
			return strings.ContainsFunc(id[i:], func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) })
		}
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}
