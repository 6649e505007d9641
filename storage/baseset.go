package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"sync"

	"github.com/golang/snappy"
)

// Base-set cell value layout (docs/FORMAT.md, "Base set"):
//
//	byte 0     encoding: baseSnappy (varint payload, Snappy block-compressed),
//	           baseRaw (varint payload stored as is) or baseRice (Rice-coded
//	           gaps); the builder keeps whichever is smallest
//	bytes 1-4  CRC-32C (Castagnoli) of bytes 5.. (big-endian)
//	bytes 5..  the payload. Varint payload:
//	             uvarint n          number of residuals, >= 1
//	             uvarint r0         the smallest residual
//	             n-1 x uvarint d    r[i] - r[i-1], each >= 1 (strictly sorted)
//	           Rice payload:
//	             uvarint n, uvarint r0, then one byte L (0..63), then a bit
//	             stream (most significant bit of each byte first) holding,
//	             for each gap g = r[i] - r[i-1] - 1: q = g >> L as q one-bits
//	             and a zero-bit (q <= 62), then the low L bits of g; zero
//	             padding to the byte boundary.
//
// Random fingerprints make the gaps of a row roughly geometric, for which a
// Rice code with L = floor(log2(mean gap)) costs about L + 2 bits per
// residual, while a varint rounds every gap up to 7-bit groups (about 6-7
// bytes for 48-bit residuals); clustered rows have small gaps that
// varint + Snappy handle best.
const (
	baseSnappy    = 0x01
	baseRaw       = 0x02
	baseRice      = 0x03
	baseHeaderLen = 5
	maxRiceQ      = 62
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBaseSet is wrapped by base-set decoding errors (before they are turned
// into a CorruptError naming the cell).
var errBaseSet = errors.New("bad base set")

// MinCellBytes is the smallest accepted base-set chunk limit: room for the
// header and a few residuals.
const MinCellBytes = 64

// MaxChunks is the largest number of chunks a base set is cut into (the
// chunk number takes 2 bytes of an index cell's qualifier).
const MaxChunks = 1 << 16

// BaseSetBuilder turns a strictly increasing stream of residuals into
// base-set cell values, each at most maxCellBytes long. Bulk load and
// compaction feed it sorted runs; it never holds more than one chunk.
type BaseSetBuilder struct {
	maxPayload   int
	residualBits int
	count        int
	first        bool
	prev         uint64
	body         []byte   // uvarint r0 and deltas of the open chunk
	gaps         []uint64 // the open chunk's deltas, for the Rice code
	r0           uint64   // the open chunk's first residual
	payload      []byte   // scratch: count and body of the chunk being sealed
	seen         []uint64 // scratch: repeats4's set (generation<<32 | sequence)
	seenGen      uint32   // repeats4's current generation in seen
	cells        [][]byte
	total        int
}

// NewBaseSetBuilder returns a builder for residuals of residualBits bits
// (1..64) and cells of at most maxCellBytes (>= MinCellBytes) bytes.
func NewBaseSetBuilder(residualBits, maxCellBytes int) (*BaseSetBuilder, error) {
	if err := checkBuilderArgs(residualBits, maxCellBytes); err != nil {
		return nil, err
	}
	// The payload is stored raw when Snappy does not shrink it, so a cell is
	// at most header + payload; the count varint takes at most 10 bytes.
	return &BaseSetBuilder{maxPayload: maxCellBytes - baseHeaderLen - binary.MaxVarintLen64, residualBits: residualBits, first: true}, nil
}

func checkBuilderArgs(residualBits, maxCellBytes int) error {
	if residualBits < 1 || residualBits > 64 {
		return fmt.Errorf("storage: residual bits %d, want 1..64", residualBits)
	}
	if maxCellBytes < MinCellBytes {
		return fmt.Errorf("storage: max cell bytes %d < %d", maxCellBytes, MinCellBytes)
	}
	return nil
}

// Add appends residual r, which must be greater than the previous one and
// fit in the residual width.
func (b *BaseSetBuilder) Add(r uint64) error {
	if b.residualBits < 64 && r>>b.residualBits != 0 {
		return fmt.Errorf("storage: residual %#x wider than %d bits", r, b.residualBits)
	}
	if !b.first && r <= b.prev {
		return fmt.Errorf("storage: residuals not strictly increasing: %#x after %#x", r, b.prev)
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
	if b.count == 0 {
		b.r0 = r
	} else {
		b.gaps = append(b.gaps, v)
	}
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
		return nil, fmt.Errorf("storage: base set needs %d chunks, at most %d", len(b.cells), MaxChunks)
	}
	return b.cells, nil
}

func (b *BaseSetBuilder) flush() {
	b.cells = append(b.cells, b.encodeChunk())
	b.body = b.body[:0]
	b.gaps = b.gaps[:0]
	b.count = 0
}

// encodeChunk returns the smallest cell value of the open chunk: Snappy,
// raw or Rice, the first of them on a tie in that order. It allocates only
// the returned cell.
//
// The Snappy trial is skipped when it cannot win: Snappy's encoder emits a
// copy only for a repeated sequence of at least 4 bytes, so a payload
// without a repeated 4-byte sequence compresses to its own length plus
// headers, and the raw encoding is kept. Payloads of random fingerprints'
// rows (what loads write) have none, and the trial was a third of the
// encoder's time; dense and regular rows have many and still get the full
// trial. TestChunkChoiceMatchesFullTrial checks the choice against the
// three-way trial.
func (b *BaseSetBuilder) encodeChunk() []byte {
	L, nbits, riceOK := riceParams(b.gaps)
	riceLen := 0
	if riceOK {
		riceLen = baseHeaderLen + uvarintLen(uint64(b.count)) + uvarintLen(b.r0) + 1 + (nbits+7)/8
	}
	b.payload = binary.AppendUvarint(b.payload[:0], uint64(b.count))
	b.payload = append(b.payload, b.body...)
	rawLen := baseHeaderLen + len(b.payload)
	if !b.repeats4(b.payload) {
		if riceOK && riceLen < rawLen {
			return riceCell(b.count, b.r0, L, b.gaps, riceLen)
		}
		return rawCell(b.payload, rawLen)
	}
	cell := sealBaseSet(b.payload)
	if riceOK && riceLen < len(cell) {
		cell = riceCell(b.count, b.r0, L, b.gaps, riceLen)
	}
	return cell
}

// repeats4 reports whether some 4-byte sequence occurs twice in p (at any
// two positions), with an open-addressing set of the sequences seen. A
// slot holds its generation in the high 32 bits and the sequence in the
// low 32: a slot of an older generation is empty, so the table is never
// cleared between calls, and it is sized at 8 slots per sequence (at
// least minSeenSlots) so that probes rarely collide. With a table cleared
// per call at 2 slots per sequence, the collisions and the clearing were
// most of this function's time (1.3 s of a 10^7 bulk load's profile).
func (b *BaseSetBuilder) repeats4(p []byte) bool {
	if len(p) < 5 {
		return false
	}
	windows := len(p) - 3
	size := minSeenSlots
	for size < 8*windows {
		size <<= 1
	}
	if len(b.seen) < size {
		b.seen = make([]uint64, size) // generation 0: empty
		b.seenGen = 0
	}
	b.seenGen++
	if b.seenGen == 0 { // wrapped: older generations would look current
		clear(b.seen)
		b.seenGen = 1
	}
	gen := uint64(b.seenGen) << 32
	seen := b.seen[:size]
	shift := 32 - uint(bits.TrailingZeros(uint(size)))
	mask := uint32(size - 1)
	for i := range windows {
		v := binary.LittleEndian.Uint32(p[i:])
		slot := (v * 0x9E3779B1) >> shift
		for {
			e := seen[slot]
			if e&^(1<<32-1) != gen {
				seen[slot] = gen | uint64(v)
				break
			}
			if uint32(e) == v {
				return true
			}
			slot = (slot + 1) & mask
		}
	}
	return false
}

// minSeenSlots is repeats4's smallest table: 32 KiB, the size of a core's
// L1 data cache.
const minSeenSlots = 4096

// riceParams returns the Rice parameter of a chunk's gaps and the length
// of their bit stream, or false when a gap is too far above the mean for
// the code (a quotient over maxRiceQ).
func riceParams(gaps []uint64) (L, nbits int, ok bool) {
	var sum float64
	for _, g := range gaps {
		sum += float64(g - 1)
	}
	if len(gaps) > 0 {
		if mean := sum / float64(len(gaps)); mean >= 2 {
			L = bits.Len64(uint64(mean)) - 1
		}
	}
	for _, g := range gaps {
		q := (g - 1) >> L
		if q > maxRiceQ {
			return 0, 0, false
		}
		nbits += int(q) + 1 + L
	}
	return L, nbits, true
}

// riceCell encodes a chunk with the Rice code into a cell of size bytes.
func riceCell(count int, r0 uint64, L int, gaps []uint64, size int) []byte {
	out := make([]byte, baseHeaderLen, size)
	out = binary.AppendUvarint(out, uint64(count))
	out = binary.AppendUvarint(out, r0)
	out = append(out, byte(L))
	w := bitWriter{buf: out}
	for _, g := range gaps {
		g--
		q := int(g >> L) // <= maxRiceQ, checked by riceParams
		// q one-bits, a zero-bit, then the low L bits: one write when
		// they fit in 64 bits.
		unary := uint64(1)<<(q+1) - 2
		if q+1+L <= 64 {
			w.write(unary<<L|g&(1<<L-1), q+1+L)
			continue
		}
		w.write(unary, q+1)
		w.write(g&(1<<L-1), L)
	}
	out = w.finish()
	out[0] = baseRice
	binary.BigEndian.PutUint32(out[1:], crc32.Checksum(out[baseHeaderLen:], castagnoli))
	return out
}

// rawCell stores a chunk's varint payload as is, in a cell of size bytes.
func rawCell(payload []byte, size int) []byte {
	out := make([]byte, baseHeaderLen, size)
	out = append(out, payload...)
	out[0] = baseRaw
	binary.BigEndian.PutUint32(out[1:], crc32.Checksum(out[baseHeaderLen:], castagnoli))
	return out
}

// bitWriter appends bits most-significant first: acc holds nacc (< 32
// between calls) pending bits in its low end, whole 32-bit words go to buf.
type bitWriter struct {
	buf  []byte
	acc  uint64
	nacc int
}

// write appends the low n (<= 64) bits of v.
func (w *bitWriter) write(v uint64, n int) {
	for n > 0 {
		take := min(n, 64-w.nacc)
		w.acc = w.acc<<take | (v>>(n-take))&(1<<take-1)
		w.nacc += take
		n -= take
		if w.nacc >= 32 {
			w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(w.acc>>(w.nacc-32)))
			w.nacc -= 32
		}
	}
}

func (w *bitWriter) finish() []byte {
	for w.nacc >= 8 {
		w.buf = append(w.buf, byte(w.acc>>(w.nacc-8)))
		w.nacc -= 8
	}
	if w.nacc > 0 {
		w.buf = append(w.buf, byte(w.acc<<(8-w.nacc)))
		w.nacc = 0
	}
	return w.buf
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
// Bulk load and compaction call it once per row and bucket (millions of
// times), so the builder's scratch buffers are pooled; only the cells are
// allocated.
func EncodeBaseSet(residuals []uint64, residualBits, maxCellBytes int) ([][]byte, error) {
	if err := checkBuilderArgs(residualBits, maxCellBytes); err != nil {
		return nil, err
	}
	b := builderPool.Get().(*BaseSetBuilder)
	*b = BaseSetBuilder{maxPayload: maxCellBytes - baseHeaderLen - binary.MaxVarintLen64, residualBits: residualBits, first: true,
		body: b.body[:0], gaps: b.gaps[:0], payload: b.payload, seen: b.seen, seenGen: b.seenGen}
	defer func() {
		b.cells = nil
		builderPool.Put(b)
	}()
	for _, r := range residuals {
		if err := b.Add(r); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// builderPool holds EncodeBaseSet's builders (their body and gaps buffers).
var builderPool = sync.Pool{New: func() any { return new(BaseSetBuilder) }}

// bufPool holds decompression buffers, so decoding allocates nothing in the
// steady state.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// DecodeBaseSet appends the residuals of one base-set cell value to dst and
// returns it. It checks everything a damaged cell could break: encoding,
// checksum, count, strict order and residual width. Errors wrap errBaseSet;
// the index and the seen sets turn them into a CorruptError naming the
// cell.
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
	case baseRice:
		return decodeRice(dst, body, residualBits)
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

func decodeRice(dst []uint64, p []byte, residualBits int) ([]uint64, error) {
	count, k := binary.Uvarint(p)
	if k <= 0 || count == 0 || count-1 > uint64(len(p))*8 {
		return dst, fmt.Errorf("%w: bad count", errBaseSet)
	}
	p = p[k:]
	r, k := binary.Uvarint(p)
	if k <= 0 || len(p) < k+1 {
		return dst, fmt.Errorf("%w: truncated header", errBaseSet)
	}
	L := int(p[k])
	if L > 63 {
		return dst, fmt.Errorf("%w: Rice parameter %d", errBaseSet, L)
	}
	p = p[k+1:]
	if residualBits < 64 && r>>residualBits != 0 {
		return dst, fmt.Errorf("%w: residual 0 wider than %d bits", errBaseSet, residualBits)
	}
	dst = append(dst, r)
	rd := bitReader{p: p}
	rd.refill()
	for i := uint64(1); i < count; i++ {
		// Fast path: the whole code (q one-bits, a zero, L bits) is among
		// the valid bits after one refill (at least 57 of them away from
		// the end of the data), as it is for every gap of a random row
		// (L + 2 bits on average). One branch decides it; the general
		// path below handles the rest.
		if rd.nacc < 57 {
			rd.refill()
		}
		if q := bits.LeadingZeros64(^rd.acc); q <= maxRiceQ && q+1+L <= rd.nacc {
			// Shifts by 64 yield 0 in Go, so L == 0 and q+1+L == 64 need
			// no special case.
			low := rd.acc << (q + 1) >> (64 - L)
			if L > 0 && uint64(q)>>(64-L) != 0 {
				return dst, fmt.Errorf("%w: gap %d overflows", errBaseSet, i)
			}
			g := uint64(q)<<L | low
			rd.acc <<= q + 1 + L
			rd.nacc -= q + 1 + L
			next := r + g + 1
			if next <= r {
				return dst, fmt.Errorf("%w: residual %d overflows", errBaseSet, i)
			}
			if residualBits < 64 && next>>residualBits != 0 {
				return dst, fmt.Errorf("%w: residual %d wider than %d bits", errBaseSet, i, residualBits)
			}
			dst = append(dst, next)
			r = next
			continue
		}
		// The quotient: leading one-bits. Bits past nacc are zero in acc,
		// so the count never runs past the valid bits.
		q := bits.LeadingZeros64(^rd.acc)
		if q >= rd.nacc {
			if rd.refill(); q >= rd.nacc {
				return dst, fmt.Errorf("%w: truncated at residual %d of %d", errBaseSet, i, count)
			}
			q = bits.LeadingZeros64(^rd.acc)
		}
		if q > maxRiceQ {
			return dst, fmt.Errorf("%w: Rice quotient over %d", errBaseSet, maxRiceQ)
		}
		rd.acc <<= q + 1
		rd.nacc -= q + 1
		if rd.nacc < L {
			rd.refill()
		}
		var low uint64
		switch {
		case L == 0:
		case rd.nacc >= L:
			low = rd.acc >> (64 - L)
			rd.acc <<= L
			rd.nacc -= L
		default:
			// L is close to 64 and straddles a refill: take the valid bits
			// first, then the rest.
			h := rd.nacc
			low = rd.acc >> (64 - h)
			rd.acc, rd.nacc = 0, 0
			rd.refill()
			rem := L - h
			if rd.nacc < rem {
				return dst, fmt.Errorf("%w: truncated at residual %d of %d", errBaseSet, i, count)
			}
			low = low<<rem | rd.acc>>(64-rem)
			rd.acc <<= rem
			rd.nacc -= rem
		}
		hi, carry := bits.Mul64(uint64(q), 1<<L)
		g := carry | low
		if hi != 0 || g == ^uint64(0) {
			return dst, fmt.Errorf("%w: gap %d overflows", errBaseSet, i)
		}
		next := r + g + 1
		if next <= r {
			return dst, fmt.Errorf("%w: residual %d overflows", errBaseSet, i)
		}
		if residualBits < 64 && next>>residualBits != 0 {
			return dst, fmt.Errorf("%w: residual %d wider than %d bits", errBaseSet, i, residualBits)
		}
		dst = append(dst, next)
		r = next
	}
	// Only zero padding (fewer than 8 bits) may remain.
	if rd.pos != len(rd.p) || rd.nacc >= 8 || rd.acc != 0 {
		return dst, fmt.Errorf("%w: trailing bits", errBaseSet)
	}
	return dst, nil
}

// bitReader reads bits most-significant first: acc holds nacc valid bits
// at its top, zeros below; p[pos:] is still unread.
type bitReader struct {
	p    []byte
	pos  int
	acc  uint64
	nacc int
}

// refill tops acc up to at least 57 valid bits, or to the end of the data.
// The fast path is small enough to inline: it runs once per residual.
func (r *bitReader) refill() {
	if r.pos+8 <= len(r.p) {
		// Whole bytes that fit; the partial byte after them is masked off
		// so that the bits past nacc stay zero.
		take := (64 - r.nacc) >> 3
		n := r.nacc + take<<3
		r.acc = (r.acc | binary.BigEndian.Uint64(r.p[r.pos:])>>r.nacc) & ^(^uint64(0) >> n)
		r.nacc = n
		r.pos += take
		return
	}
	r.refillTail()
}

func (r *bitReader) refillTail() {
	for r.nacc <= 56 && r.pos < len(r.p) {
		r.acc |= uint64(r.p[r.pos]) << (56 - r.nacc)
		r.nacc += 8
		r.pos++
	}
}

// BaseSetLen reads the residual count of a base-set cell value without
// decoding the residuals (the header is not checked against the checksum).
func BaseSetLen(v []byte) (int, error) {
	if len(v) < baseHeaderLen {
		return 0, fmt.Errorf("%w: short cell", errBaseSet)
	}
	body := v[baseHeaderLen:]
	if v[0] == baseSnappy {
		var err error
		if body, err = snappy.Decode(nil, body); err != nil {
			return 0, fmt.Errorf("%w: %v", errBaseSet, err)
		}
	}
	n, k := binary.Uvarint(body)
	if k <= 0 {
		return 0, fmt.Errorf("%w: bad count", errBaseSet)
	}
	return int(n), nil
}
