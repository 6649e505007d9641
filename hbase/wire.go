package hbase

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// Hand-written protobuf codecs for the messages on every call's path: the
// RPC request and response headers, and Multi's request and response. The
// generated code (package pb) encodes through reflection and allocates a
// struct per nested message; a lookup (one Multi of a few Gets) spent about
// a fifth of its client CPU there. These append straight into the frame
// buffer and decode into flat structs that alias the reply frame. The field
// numbers are HBase's (RPC.proto, Client.proto; see internal/pb/hbase.proto):
//
//	RequestHeader      1 call_id  3 method_name  4 request_param
//	                   5 cell_block_meta {1 length}  7 timeout
//	ResponseHeader     1 call_id  2 exception (ExceptionResponse)
//	                   3 cell_block_meta {1 length}
//	MultiRequest       1 regionAction (repeated)  2 nonceGroup
//	RegionAction       1 region {1 type, 2 value}  2 atomic
//	                   3 action (repeated)  4 condition
//	Action             1 index  2 mutation (MutationProto)  3 get
//	Get                1 row  2 column {1 family, 2 qualifier (repeated)}
//	                   5 time_range {1 from, 2 to}  6 max_versions
//	                   10 existence_only
//	MultiResponse      1 regionActionResult (repeated)  2 processed
//	RegionActionResult 1 resultOrException (repeated)
//	                   2 exception {1 name, 2 value}  3 processed
//	ResultOrException  1 index  2 result  3 exception {1 name, 2 value}
//	Result             1 cell (repeated Cell)  2 associated_cell_count
//	                   3 exists  4 stale  5 partial
//
// Decoding follows protobuf's rules where HBase could exercise them: fields
// in any order, unknown fields skipped, the last value of a scalar wins,
// repeated messages accumulate. A singular message field sent twice (which
// protobuf merges and HBase never sends) is a protocol error. The decoders
// are fuzzed against the generated code as the oracle (wire_test.go).

// appendTag appends a field tag.
func appendTag(dst []byte, num protowire.Number, typ protowire.Type) []byte {
	return protowire.AppendTag(dst, num, typ)
}

// appendBytesField appends field num as a length-delimited value.
func appendBytesField(dst []byte, num protowire.Number, b []byte) []byte {
	dst = appendTag(dst, num, protowire.BytesType)
	return protowire.AppendBytes(dst, b)
}

// appendVarintField appends field num as a varint.
func appendVarintField(dst []byte, num protowire.Number, v uint64) []byte {
	dst = appendTag(dst, num, protowire.VarintType)
	return protowire.AppendVarint(dst, v)
}

// appendRequestHeader appends an encoded RequestHeader (without its length
// prefix). timeoutMs 0 leaves the timeout out; cellsLen 0 the cell block meta.
func appendRequestHeader(dst []byte, callID uint32, method string, timeoutMs uint32, cellsLen int) []byte {
	dst = appendVarintField(dst, 1, uint64(callID))
	dst = appendTag(dst, 3, protowire.BytesType)
	dst = protowire.AppendString(dst, method)
	dst = appendVarintField(dst, 4, 1)
	if cellsLen > 0 {
		dst = appendTag(dst, 5, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(protowire.SizeTag(1)+protowire.SizeVarint(uint64(cellsLen))))
		dst = appendVarintField(dst, 1, uint64(uint32(cellsLen)))
	}
	if timeoutMs > 0 {
		dst = appendVarintField(dst, 7, uint64(timeoutMs))
	}
	return dst
}

// appendGetAction appends an encoded Action (index, get) for g.
func appendGetAction(dst []byte, index uint32, g *Get) []byte {
	var body [64]byte
	gb := appendGet(body[:0], g)
	dst = appendVarintField(dst, 1, uint64(index))
	return appendBytesField(dst, 3, gb)
}

// appendGet appends an encoded Get (the fields Get.proto sets).
func appendGet(dst []byte, g *Get) []byte {
	dst = appendBytesField(dst, 1, g.Row)
	for _, c := range g.Columns {
		n := protowire.SizeTag(1) + protowire.SizeBytes(len(c.Family))
		for _, q := range c.Qualifiers {
			n += protowire.SizeTag(2) + protowire.SizeBytes(len(q))
		}
		dst = appendTag(dst, 2, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(n))
		dst = appendBytesField(dst, 1, c.Family)
		for _, q := range c.Qualifiers {
			dst = appendBytesField(dst, 2, q)
		}
	}
	if g.TimeRange != nil {
		n := protowire.SizeTag(1) + protowire.SizeVarint(g.TimeRange.From) + protowire.SizeTag(2) + protowire.SizeVarint(g.TimeRange.To)
		dst = appendTag(dst, 5, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(n))
		dst = appendVarintField(dst, 1, g.TimeRange.From)
		dst = appendVarintField(dst, 2, g.TimeRange.To)
	}
	if g.MaxVersions > 1 {
		dst = appendVarintField(dst, 6, uint64(g.MaxVersions))
	}
	if g.ExistenceOnly {
		dst = appendVarintField(dst, 10, 1)
	}
	return dst
}

// appendMutationAction appends an encoded Action (index, mutation).
func appendMutationAction(dst []byte, index uint32, mp *pb.MutationProto) ([]byte, error) {
	mb, err := proto.Marshal(mp)
	if err != nil {
		return nil, err
	}
	dst = appendVarintField(dst, 1, uint64(index))
	return appendBytesField(dst, 2, mb), nil
}

// regionActionEnc is one RegionAction of a MultiRequest: its region, its
// encoded Actions (each a whole Action message, without a length prefix),
// and an optional encoded Condition.
type regionActionEnc struct {
	region    []byte   // encoded RegionSpecifier (region.specBytes)
	actions   [][]byte // encoded Action messages
	condition []byte   // encoded Condition, or nil
}

func (ra *regionActionEnc) size() int {
	n := protowire.SizeTag(1) + protowire.SizeBytes(len(ra.region))
	for _, a := range ra.actions {
		n += protowire.SizeTag(3) + protowire.SizeBytes(len(a))
	}
	if ra.condition != nil {
		n += protowire.SizeTag(4) + protowire.SizeBytes(len(ra.condition))
	}
	return n
}

// appendMultiRequest appends an encoded MultiRequest.
func appendMultiRequest(dst []byte, ras []regionActionEnc, nonceGroup uint64, hasNonce bool) []byte {
	for i := range ras {
		ra := &ras[i]
		dst = appendTag(dst, 1, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(ra.size()))
		dst = appendBytesField(dst, 1, ra.region)
		for _, a := range ra.actions {
			dst = appendBytesField(dst, 3, a)
		}
		if ra.condition != nil {
			dst = appendBytesField(dst, 4, ra.condition)
		}
	}
	if hasNonce {
		dst = appendVarintField(dst, 2, nonceGroup)
	}
	return dst
}

// regionSpecBytes encodes a RegionSpecifier of type REGION_NAME.
func regionSpecBytes(name []byte) []byte {
	dst := appendVarintField(nil, 1, uint64(pb.RegionSpecifier_REGION_NAME))
	return appendBytesField(dst, 2, name)
}

// field is one decoded protobuf field.
type field struct {
	num protowire.Number
	typ protowire.Type
	v   uint64 // varint and fixed values
	b   []byte // length-delimited values
}

// nextField decodes the field at the start of b and returns it and the
// bytes after it. Groups are skipped like any unknown field.
func nextField(b []byte) (field, []byte, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, nil, protocolErrorf("protobuf tag: %v", protowire.ParseError(n))
	}
	if num > protowire.MaxValidNumber {
		return field{}, nil, protocolErrorf("protobuf field number %d out of range", num)
	}
	b = b[n:]
	f := field{num: num, typ: typ}
	switch typ {
	case protowire.VarintType:
		f.v, n = protowire.ConsumeVarint(b)
	case protowire.BytesType:
		f.b, n = protowire.ConsumeBytes(b)
	case protowire.Fixed32Type:
		var v uint32
		v, n = protowire.ConsumeFixed32(b)
		f.v = uint64(v)
	case protowire.Fixed64Type:
		f.v, n = protowire.ConsumeFixed64(b)
	default:
		n = protowire.ConsumeFieldValue(num, typ, b)
	}
	if n < 0 {
		return field{}, nil, protocolErrorf("protobuf field %d: %v", num, protowire.ParseError(n))
	}
	return f, b[n:], nil
}

// checkFields checks that b is well-formed protobuf (fields only, not
// their meaning).
func checkFields(b []byte) error {
	for len(b) > 0 {
		_, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
	}
	return nil
}

// responseHeader is the decoded ResponseHeader.
type responseHeader struct {
	callID    uint32
	exception *pb.ExceptionResponse // nil unless the call failed
	cellsLen  uint64
}

// decodeResponseHeader decodes a ResponseHeader.
func decodeResponseHeader(b []byte) (responseHeader, error) {
	var h responseHeader
	var exc []byte
	hasExc, hasMeta := false, false
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return h, err
		}
		b = rest
		switch {
		case f.num == 1 && f.typ == protowire.VarintType:
			h.callID = uint32(f.v)
		case f.num == 2 && f.typ == protowire.BytesType:
			if hasExc {
				return h, protocolErrorf("response header: exception sent twice")
			}
			hasExc, exc = true, f.b
		case f.num == 3 && f.typ == protowire.BytesType:
			if hasMeta {
				return h, protocolErrorf("response header: cell block meta sent twice")
			}
			hasMeta = true
			for m := f.b; len(m) > 0; {
				mf, mrest, err := nextField(m)
				if err != nil {
					return h, err
				}
				m = mrest
				if mf.num == 1 && mf.typ == protowire.VarintType {
					h.cellsLen = uint64(uint32(mf.v))
				}
			}
		}
	}
	if hasExc {
		h.exception = &pb.ExceptionResponse{}
		if err := proto.Unmarshal(exc, h.exception); err != nil {
			return h, protocolErrorf("response header exception: %v", err)
		}
	}
	return h, nil
}

// nameBytes is a decoded NameBytesPair (an exception in a Multi reply).
type nameBytes struct {
	name  string
	value []byte
}

func decodeNameBytes(b []byte) (*nameBytes, error) {
	nb := &nameBytes{}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		switch {
		case f.num == 1 && f.typ == protowire.BytesType:
			nb.name = string(f.b)
		case f.num == 2 && f.typ == protowire.BytesType:
			nb.value = f.b
		}
	}
	return nb, nil
}

// resultMsg is a decoded Result. Cells sent in protobuf (rare: the client
// asks for a cell block) stay encoded until converted.
type resultMsg struct {
	protoCells [][]byte // encoded Cell messages
	assoc      int32
	hasExists  bool
	exists     bool
	partial    bool
}

func decodeResult(b []byte, r *resultMsg) error {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.num == 1 && f.typ == protowire.BytesType:
			if err := checkFields(f.b); err != nil {
				return err
			}
			r.protoCells = append(r.protoCells, f.b)
		case f.num == 2 && f.typ == protowire.VarintType:
			r.assoc = int32(f.v)
		case f.num == 3 && f.typ == protowire.VarintType:
			r.hasExists, r.exists = true, f.v != 0
		case f.num == 5 && f.typ == protowire.VarintType:
			r.partial = f.v != 0
		}
	}
	return nil
}

// resultOrException is a decoded ResultOrException.
type resultOrException struct {
	index     uint32
	hasResult bool
	result    resultMsg
	exception *nameBytes
}

// regionActionResult is a decoded RegionActionResult.
type regionActionResult struct {
	roes      []resultOrException
	exception *nameBytes
	processed bool
}

// decodeMultiResponse decodes a MultiResponse's region results into dst
// (reused: pass the previous result's [:0]).
func decodeMultiResponse(b []byte, dst []regionActionResult) ([]regionActionResult, error) {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		if f.num != 1 || f.typ != protowire.BytesType {
			continue // processed, or unknown
		}
		var rar regionActionResult
		hasExc := false
		for m := f.b; len(m) > 0; {
			mf, mrest, err := nextField(m)
			if err != nil {
				return nil, err
			}
			m = mrest
			switch {
			case mf.num == 1 && mf.typ == protowire.BytesType:
				roe, err := decodeROE(mf.b)
				if err != nil {
					return nil, err
				}
				rar.roes = append(rar.roes, roe)
			case mf.num == 2 && mf.typ == protowire.BytesType:
				if hasExc {
					return nil, protocolErrorf("Multi: region exception sent twice")
				}
				hasExc = true
				if rar.exception, err = decodeNameBytes(mf.b); err != nil {
					return nil, err
				}
			case mf.num == 3 && mf.typ == protowire.VarintType:
				rar.processed = mf.v != 0
			}
		}
		dst = append(dst, rar)
	}
	return dst, nil
}

func decodeROE(b []byte) (resultOrException, error) {
	var roe resultOrException
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return roe, err
		}
		b = rest
		switch {
		case f.num == 1 && f.typ == protowire.VarintType:
			roe.index = uint32(f.v)
		case f.num == 2 && f.typ == protowire.BytesType:
			if roe.hasResult {
				return roe, protocolErrorf("Multi: result sent twice")
			}
			roe.hasResult = true
			if err := decodeResult(f.b, &roe.result); err != nil {
				return roe, err
			}
		case f.num == 3 && f.typ == protowire.BytesType:
			if roe.exception != nil {
				return roe, protocolErrorf("Multi: action exception sent twice")
			}
			if roe.exception, err = decodeNameBytes(f.b); err != nil {
				return roe, err
			}
		}
	}
	return roe, nil
}

// toResultMsg converts a decoded Result, taking its associated cells (if
// any) from the cell block. All cells share one allocation.
func toResultMsg(r *resultMsg, cb *cellBlock) (*Result, error) {
	out := &Result{Partial: r.partial}
	if r.hasExists {
		v := r.exists
		out.Exists = &v
	}
	n := int(r.assoc)
	if n < 0 {
		return nil, protocolErrorf("cell block: negative cell count %d", n)
	}
	if n != 0 && cb == nil {
		return nil, protocolErrorf("result has %d cells in a cell block, but the response has none", n)
	}
	if cb != nil && n > len(cb.buf)/16 { // a cell takes at least 4+8+12 bytes
		return nil, protocolErrorf("cell block: %d cells announced, %d bytes left", n, len(cb.buf))
	}
	total := len(r.protoCells) + n
	if total == 0 {
		return out, nil
	}
	slab := make([]Cell, total)
	out.Cells = make([]*Cell, total)
	for i, cbytes := range r.protoCells {
		var pc pb.Cell
		if err := proto.Unmarshal(cbytes, &pc); err != nil {
			return nil, protocolErrorf("result cell: %v", err)
		}
		slab[i] = Cell{Row: pc.GetRow(), Family: pc.GetFamily(), Qualifier: pc.GetQualifier(),
			Timestamp: pc.GetTimestamp(), Type: CellType(pc.GetCellType()), Value: pc.GetValue()}
		out.Cells[i] = &slab[i]
	}
	for i := len(r.protoCells); i < total; i++ {
		if err := cb.nextInto(&slab[i]); err != nil {
			return nil, err
		}
		out.Cells[i] = &slab[i]
	}
	return out, nil
}
