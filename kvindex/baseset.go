package kvindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/golang/snappy"
)

// Base-set cell value layout (docs/FORMAT.md, "Base set"):
//
//	byte 0     encoding: baseSnappy (payload Snappy block-compressed) or
//	           baseRaw (payload stored as is, when Snappy would not shrink it)
//	bytes 1-4  CRC-32C (Castagnoli) of bytes 5.. (big-endian)
//	bytes 5..  the (compressed) payload:
//	             uvarint n          number of residuals, >= 1
//	             uvarint r0         the smallest residual
//	             n-1 x uvarint d    r[i] - r[i-1], each >= 1 (strictly sorted)
const (
	baseSnappy    = 0x01
	baseRaw       = 0x02
	baseHeaderLen = 5
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBaseSet is wrapped by base-set decoding errors (before they are turned
// into a CorruptError naming the cell).
var errBaseSet = errors.New("bad base set")

// MinCellBytes is the smallest accepted base-set chunk limit: room for the
// header and a few residuals.
const MinCellBytes = 64

// BaseSetBuilder turns a strictly increasing stream of residuals into
// base-set cell values, each at most maxCellBytes long. Bulk load and
// compaction feed it sorted runs; it never holds more than one chunk.
type BaseSetBuilder struct {
	maxPayload   int
	residualBits int
	count        int
	first        bool
	prev         uint64
	body         []byte // uvarint r0 and deltas of the open chunk
	cells        [][]byte
	total        int
}

// NewBaseSetBuilder returns a builder for residuals of residualBits bits
// (1..64) and cells of at most maxCellBytes (>= MinCellBytes) bytes.
func NewBaseSetBuilder(residualBits, maxCellBytes int) (*BaseSetBuilder, error) {
	if residualBits < 1 || residualBits > 64 {
		return nil, fmt.Errorf("%w: residual bits %d, want 1..64", ErrBadDocument, residualBits)
	}
	if maxCellBytes < MinCellBytes {
		return nil, fmt.Errorf("kvindex: max cell bytes %d < %d", maxCellBytes, MinCellBytes)
	}
	// The payload is stored raw when Snappy does not shrink it, so a cell is
	// at most header + payload; the count varint takes at most 10 bytes.
	return &BaseSetBuilder{maxPayload: maxCellBytes - baseHeaderLen - binary.MaxVarintLen64, residualBits: residualBits, first: true}, nil
}

// Add appends residual r, which must be greater than the previous one and
// fit in the residual width.
func (b *BaseSetBuilder) Add(r uint64) error {
	if b.residualBits < 64 && r>>b.residualBits != 0 {
		return fmt.Errorf("kvindex: residual %#x wider than %d bits", r, b.residualBits)
	}
	if !b.first && r <= b.prev {
		return fmt.Errorf("kvindex: residuals not strictly increasing: %#x after %#x", r, b.prev)
	}
	v := r - b.prev
	if b.count == 0 {
		v = r
	}
	if b.count > 0 && len(b.body)+uvarintLen(v) > b.maxPayload {
		b.flush()
		v = r
	}
	b.body = binary.AppendUvarint(b.body, v)
	b.count++
	b.prev = r
	b.first = false
	b.total++
	return nil
}

// Len is the number of residuals added so far.
func (b *BaseSetBuilder) Len() int { return b.total }

// Finish returns the cell values, chunk 0 first. It returns no cells when no
// residual was added. More than MaxChunks chunks is an error (raise the cell
// limit or use finer time buckets).
func (b *BaseSetBuilder) Finish() ([][]byte, error) {
	if b.count > 0 {
		b.flush()
	}
	if len(b.cells) > MaxChunks {
		return nil, fmt.Errorf("kvindex: base set needs %d chunks, at most %d", len(b.cells), MaxChunks)
	}
	return b.cells, nil
}

func (b *BaseSetBuilder) flush() {
	payload := make([]byte, 0, binary.MaxVarintLen64+len(b.body))
	payload = binary.AppendUvarint(payload, uint64(b.count))
	payload = append(payload, b.body...)
	b.cells = append(b.cells, sealBaseSet(payload))
	b.body = b.body[:0]
	b.count = 0
}

func sealBaseSet(payload []byte) []byte {
	comp := snappy.Encode(nil, payload)
	enc, body := byte(baseSnappy), comp
	if len(comp) >= len(payload) {
		enc, body = baseRaw, payload
	}
	out := make([]byte, baseHeaderLen+len(body))
	out[0] = enc
	copy(out[baseHeaderLen:], body)
	binary.BigEndian.PutUint32(out[1:], crc32.Checksum(body, castagnoli))
	return out
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// EncodeBaseSet encodes sorted, distinct residuals into cell values.
func EncodeBaseSet(residuals []uint64, residualBits, maxCellBytes int) ([][]byte, error) {
	b, err := NewBaseSetBuilder(residualBits, maxCellBytes)
	if err != nil {
		return nil, err
	}
	for _, r := range residuals {
		if err := b.Add(r); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// bufPool holds decompression buffers, so decoding allocates nothing in the
// steady state.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// DecodeBaseSet appends the residuals of one base-set cell value to dst and
// returns it. It checks everything a damaged cell could break: encoding,
// checksum, count, strict order and residual width. Errors wrap errBaseSet;
// the index turns them into a CorruptError naming the cell.
func DecodeBaseSet(dst []uint64, value []byte, residualBits int) ([]uint64, error) {
	n := len(dst)
	out, err := decodeBaseSet(dst, value, residualBits)
	if err != nil {
		return dst[:n], err // nothing of a damaged cell is returned
	}
	return out, nil
}

func decodeBaseSet(dst []uint64, value []byte, residualBits int) ([]uint64, error) {
	if len(value) < baseHeaderLen {
		return dst, fmt.Errorf("%w: %d bytes, shorter than the header", errBaseSet, len(value))
	}
	body := value[baseHeaderLen:]
	if got, want := crc32.Checksum(body, castagnoli), binary.BigEndian.Uint32(value[1:]); got != want {
		return dst, fmt.Errorf("%w: checksum %08x, stored %08x", errBaseSet, got, want)
	}
	var payload []byte
	switch value[0] {
	case baseRaw:
		payload = body
	case baseSnappy:
		n, err := snappy.DecodedLen(body)
		if err != nil {
			return dst, fmt.Errorf("%w: %v", errBaseSet, err)
		}
		// A valid payload holds at least one byte per residual plus the
		// count; refuse absurd lengths before allocating.
		if n > len(body)*64+64 {
			return dst, fmt.Errorf("%w: decoded length %d", errBaseSet, n)
		}
		bp := bufPool.Get().(*[]byte)
		defer bufPool.Put(bp)
		if cap(*bp) < n {
			*bp = make([]byte, n)
		}
		payload, err = snappy.Decode((*bp)[:n], body)
		if err != nil {
			return dst, fmt.Errorf("%w: %v", errBaseSet, err)
		}
	default:
		return dst, fmt.Errorf("%w: unknown encoding %#x", errBaseSet, value[0])
	}
	count, k := binary.Uvarint(payload)
	if k <= 0 || count == 0 || count > uint64(len(payload)) {
		return dst, fmt.Errorf("%w: bad count", errBaseSet)
	}
	p := payload[k:]
	var prev uint64
	for i := uint64(0); i < count; i++ {
		v, k := binary.Uvarint(p)
		if k <= 0 {
			return dst, fmt.Errorf("%w: truncated at residual %d of %d", errBaseSet, i, count)
		}
		p = p[k:]
		r := v
		if i > 0 {
			if v == 0 {
				return dst, fmt.Errorf("%w: residual %d repeats", errBaseSet, i)
			}
			r = prev + v
			if r < prev {
				return dst, fmt.Errorf("%w: residual %d overflows", errBaseSet, i)
			}
		}
		if residualBits < 64 && r>>residualBits != 0 {
			return dst, fmt.Errorf("%w: residual %d wider than %d bits", errBaseSet, i, residualBits)
		}
		dst = append(dst, r)
		prev = r
	}
	if len(p) != 0 {
		return dst, fmt.Errorf("%w: %d trailing bytes", errBaseSet, len(p))
	}
	return dst, nil
}
