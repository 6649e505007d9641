package hbase

import (
	"encoding/binary"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// CellType is the type byte of a cell (HBase's KeyValue.Type).
type CellType uint8

// Cell types as HBase stores them.
const (
	CellPut                 CellType = 4
	CellDelete              CellType = 8
	CellDeleteFamilyVersion CellType = 10
	CellDeleteColumn        CellType = 12
	CellDeleteFamily        CellType = 14
)

// Cell is one versioned value: row, column (family:qualifier), timestamp in
// milliseconds, type and value. Slices may share memory with the response
// they came from; they are never modified by the client after being returned.
type Cell struct {
	Row       []byte
	Family    []byte
	Qualifier []byte
	Timestamp uint64
	Type      CellType
	Value     []byte
}

// Result is the cells of one row, sorted as HBase returns them (family,
// qualifier, newest first).
type Result struct {
	Cells []*Cell
	// Exists is set by a Get with ExistenceOnly.
	Exists *bool
	// Partial means more cells of the same row follow in the next Result of
	// a scan with AllowPartial.
	Partial bool
}

// Row is the row key of the result's cells (nil when empty).
func (r *Result) Row() []byte {
	if r == nil || len(r.Cells) == 0 {
		return nil
	}
	return r.Cells[0].Row
}

// Value returns the newest value of family:qualifier, or nil, false.
func (r *Result) Value(family, qualifier string) ([]byte, bool) {
	if r == nil {
		return nil, false
	}
	for _, c := range r.Cells {
		if string(c.Family) == family && string(c.Qualifier) == qualifier {
			return c.Value, true
		}
	}
	return nil, false
}

// Cell block format (KeyValueCodec, no tags), which the client asks the
// server to use for the cells of its responses, one cell after another:
//
//	uint32  kvLen        big-endian; length of what follows for this cell
//	uint32  keyLen       big-endian
//	uint32  valueLen     big-endian
//	key:    uint16 rowLen, row, uint8 familyLen, family, qualifier,
//	        uint64 timestamp, uint8 type   (qualifier fills what is left)
//	value   valueLen bytes
//
// kvLen must equal 8 + keyLen + valueLen.
const kvCodecClass = "org.apache.hadoop.hbase.codec.KeyValueCodec"

// cellBlock reads cells one at a time out of a response's cell block.
type cellBlock struct {
	buf []byte
}

// next decodes one cell; it never reads outside buf and never panics.
func (b *cellBlock) next() (*Cell, error) {
	c := &Cell{}
	if err := b.nextInto(c); err != nil {
		return nil, err
	}
	return c, nil
}

// nextInto decodes one cell into c (its slices alias buf).
func (b *cellBlock) nextInto(c *Cell) error {
	if len(b.buf) < 4 {
		return protocolErrorf("cell block: %d bytes left, need a 4-byte cell length", len(b.buf))
	}
	kvLen := uint64(binary.BigEndian.Uint32(b.buf))
	if kvLen > uint64(len(b.buf)-4) {
		return protocolErrorf("cell block: cell of %d bytes, only %d left", kvLen, len(b.buf)-4)
	}
	kv := b.buf[4 : 4+kvLen]
	b.buf = b.buf[4+kvLen:]
	if len(kv) < 8 {
		return protocolErrorf("cell block: cell of %d bytes too short", len(kv))
	}
	keyLen := uint64(binary.BigEndian.Uint32(kv))
	valLen := uint64(binary.BigEndian.Uint32(kv[4:]))
	if 8+keyLen+valLen != uint64(len(kv)) {
		return protocolErrorf("cell block: key %d + value %d bytes do not fill a cell of %d", keyLen, valLen, len(kv))
	}
	key := kv[8 : 8+keyLen]
	val := kv[8+keyLen:]
	// Fixed key parts: rowLen(2) familyLen(1) timestamp(8) type(1).
	if len(key) < 12 {
		return protocolErrorf("cell block: key of %d bytes too short", len(key))
	}
	rowLen := int(binary.BigEndian.Uint16(key))
	if 2+rowLen+1 > len(key)-9 {
		return protocolErrorf("cell block: row of %d bytes overruns key of %d", rowLen, len(key))
	}
	row := key[2 : 2+rowLen]
	famLen := int(key[2+rowLen])
	famStart := 3 + rowLen
	if famStart+famLen > len(key)-9 {
		return protocolErrorf("cell block: family of %d bytes overruns key of %d", famLen, len(key))
	}
	tail := len(key) - 9
	// Full slice expressions: an append to a returned slice must not run
	// into the next cell's bytes.
	*c = Cell{
		Row:       row[:len(row):len(row)],
		Family:    key[famStart : famStart+famLen : famStart+famLen],
		Qualifier: key[famStart+famLen : tail : tail],
		Timestamp: binary.BigEndian.Uint64(key[tail:]),
		Type:      CellType(key[tail+8]),
		Value:     val[:len(val):len(val)],
	}
	return nil
}

// take decodes n cells.
func (b *cellBlock) take(n int) ([]*Cell, error) {
	if n < 0 {
		return nil, protocolErrorf("cell block: negative cell count %d", n)
	}
	if n > len(b.buf)/16 { // a cell takes at least 4+8+12 bytes
		return nil, protocolErrorf("cell block: %d cells announced, %d bytes left", n, len(b.buf))
	}
	cells := make([]*Cell, 0, n)
	for range n {
		c, err := b.next()
		if err != nil {
			return nil, err
		}
		cells = append(cells, c)
	}
	return cells, nil
}

// appendCellKV encodes c in the cell block format (for tests and fakes).
func appendCellKV(dst []byte, c *Cell) []byte {
	keyLen := 2 + len(c.Row) + 1 + len(c.Family) + len(c.Qualifier) + 8 + 1
	dst = binary.BigEndian.AppendUint32(dst, uint32(8+keyLen+len(c.Value)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(keyLen))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(c.Value)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(c.Row)))
	dst = append(dst, c.Row...)
	dst = append(dst, byte(len(c.Family)))
	dst = append(dst, c.Family...)
	dst = append(dst, c.Qualifier...)
	dst = binary.BigEndian.AppendUint64(dst, c.Timestamp)
	dst = append(dst, byte(c.Type))
	return append(dst, c.Value...)
}

// toResult converts a protobuf Result, taking its associated cells (if any)
// from the cell block.
func toResult(r *pb.Result, cb *cellBlock) (*Result, error) {
	if r == nil {
		return &Result{}, nil
	}
	out := &Result{Partial: r.GetPartial()}
	if r.Exists != nil {
		v := r.GetExists()
		out.Exists = &v
	}
	for _, c := range r.GetCell() {
		out.Cells = append(out.Cells, &Cell{Row: c.GetRow(), Family: c.GetFamily(), Qualifier: c.GetQualifier(),
			Timestamp: c.GetTimestamp(), Type: CellType(c.GetCellType()), Value: c.GetValue()})
	}
	if n := int(r.GetAssociatedCellCount()); n != 0 {
		if cb == nil {
			return nil, protocolErrorf("result has %d cells in a cell block, but the response has none", n)
		}
		cells, err := cb.take(n)
		if err != nil {
			return nil, err
		}
		out.Cells = append(out.Cells, cells...)
	}
	return out, nil
}
