package hbase

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// Column selects one family, or some qualifiers of it.
type Column struct {
	Family     []byte
	Qualifiers [][]byte // nil: the whole family
}

// TimeRange selects cells with From <= timestamp < To (milliseconds).
type TimeRange struct{ From, To uint64 }

// Get reads one row.
type Get struct {
	Row     []byte
	Columns []Column // nil: every column
	// MaxVersions of each column to return (0 means 1).
	MaxVersions uint32
	TimeRange   *TimeRange
	// ExistenceOnly returns no cells, only Result.Exists.
	ExistenceOnly bool
}

// Value is one cell to put. Timestamp 0 takes the Put's timestamp, and when
// that is 0 too, the server's clock.
type Value struct {
	Family, Qualifier, Value []byte
	Timestamp                uint64
}

// Put writes cells of one row.
type Put struct {
	Row       []byte
	Values    []Value
	Timestamp uint64
}

// DeleteKind says what a DeleteTarget removes.
type DeleteKind int

const (
	// DeleteColumnVersions removes every version of the column at or before
	// the timestamp (all versions when it is 0).
	DeleteColumnVersions DeleteKind = iota
	// DeleteColumnVersion removes the one version of the column at exactly
	// the timestamp (the newest when it is 0).
	DeleteColumnVersion
	// DeleteFamily removes every column of the family at or before the
	// timestamp (all when it is 0). Qualifier is ignored.
	DeleteFamily
)

// DeleteTarget is one column, version or family to delete.
type DeleteTarget struct {
	Family, Qualifier []byte
	Kind              DeleteKind
	Timestamp         uint64
}

// Delete removes cells of one row; with no Targets, the whole row (every
// family, at or before Timestamp, all when 0).
type Delete struct {
	Row       []byte
	Targets   []DeleteTarget
	Timestamp uint64
}

// Increment adds to 8-byte big-endian counters of one row and returns their
// new values. Retries are applied once (the client sends a nonce).
type Increment struct {
	Row     []byte
	Columns []IncrementColumn
}

// IncrementColumn is one counter and the amount to add.
type IncrementColumn struct {
	Family, Qualifier []byte
	Amount            int64
}

// Action is one element of a Multi: *Get, *Put, *Delete or *Increment.
type Action interface{ row() []byte }

func (g *Get) row() []byte       { return g.Row }
func (p *Put) row() []byte       { return p.Row }
func (d *Delete) row() []byte    { return d.Row }
func (i *Increment) row() []byte { return i.Row }

func (g *Get) proto() *pb.Get {
	out := &pb.Get{Row: g.Row}
	for _, c := range g.Columns {
		out.Column = append(out.Column, &pb.Column{Family: c.Family, Qualifier: c.Qualifiers})
	}
	if g.MaxVersions > 1 {
		out.MaxVersions = proto.Uint32(g.MaxVersions)
	}
	if g.TimeRange != nil {
		out.TimeRange = &pb.TimeRange{From: proto.Uint64(g.TimeRange.From), To: proto.Uint64(g.TimeRange.To)}
	}
	if g.ExistenceOnly {
		out.ExistenceOnly = proto.Bool(true)
	}
	return out
}

// putNoData is a Put's MutationProto when its cells travel in the request's
// cell block (as HBase's own client sends them: the server reads them
// without converting from protobuf): row, type and cell count only. The
// cells are appended by appendPutCells, in the order of the mutations.
func putNoData(p *Put) (*pb.MutationProto, error) {
	if len(p.Values) == 0 {
		return nil, fmt.Errorf("%w: put of row %q has no values", ErrInvalidArgument, p.Row)
	}
	if len(p.Row) > 1<<15-1 {
		return nil, fmt.Errorf("%w: row key of %d bytes exceeds 32767", ErrInvalidArgument, len(p.Row))
	}
	for _, v := range p.Values {
		if len(v.Family) > 127 {
			return nil, fmt.Errorf("%w: family of %d bytes exceeds 127", ErrInvalidArgument, len(v.Family))
		}
	}
	out := &pb.MutationProto{Row: p.Row, MutateType: pb.MutationProto_PUT.Enum(), AssociatedCellCount: proto.Int32(int32(len(p.Values)))}
	if p.Timestamp != 0 {
		out.Timestamp = proto.Uint64(p.Timestamp)
	}
	return out, nil
}

// appendPutCells appends p's cells in the KeyValueCodec format. A cell
// without a timestamp gets LATEST_TIMESTAMP, which the server replaces with
// its clock, as for protobuf-encoded puts.
func appendPutCells(dst []byte, p *Put) []byte {
	for _, v := range p.Values {
		ts := v.Timestamp
		if ts == 0 {
			ts = p.Timestamp
		}
		if ts == 0 {
			ts = latestTimestamp
		}
		dst = appendCellKV(dst, &Cell{Row: p.Row, Family: v.Family, Qualifier: v.Qualifier, Timestamp: ts, Type: CellPut, Value: v.Value})
	}
	return dst
}

// mutation converts a write action; nonce is used by increments.
func (c *Client) mutation(a Action) (*pb.MutationProto, error) {
	switch m := a.(type) {
	case *Put:
		if len(m.Values) == 0 {
			return nil, fmt.Errorf("%w: put of row %q has no values", ErrInvalidArgument, m.Row)
		}
		out := &pb.MutationProto{Row: m.Row, MutateType: pb.MutationProto_PUT.Enum()}
		if m.Timestamp != 0 {
			out.Timestamp = proto.Uint64(m.Timestamp)
		}
		byFam := map[string]*pb.MutationProto_ColumnValue{}
		for _, v := range m.Values {
			cv := byFam[string(v.Family)]
			if cv == nil {
				cv = &pb.MutationProto_ColumnValue{Family: v.Family}
				byFam[string(v.Family)] = cv
				out.ColumnValue = append(out.ColumnValue, cv)
			}
			qv := &pb.MutationProto_ColumnValue_QualifierValue{Qualifier: v.Qualifier, Value: v.Value}
			if v.Timestamp != 0 {
				qv.Timestamp = proto.Uint64(v.Timestamp)
			} else if m.Timestamp != 0 {
				qv.Timestamp = proto.Uint64(m.Timestamp)
			}
			cv.QualifierValue = append(cv.QualifierValue, qv)
		}
		return out, nil
	case *Delete:
		out := &pb.MutationProto{Row: m.Row, MutateType: pb.MutationProto_DELETE.Enum()}
		if m.Timestamp != 0 {
			out.Timestamp = proto.Uint64(m.Timestamp)
		}
		for _, t := range m.Targets {
			qv := &pb.MutationProto_ColumnValue_QualifierValue{}
			switch t.Kind {
			case DeleteColumnVersions:
				qv.Qualifier = t.Qualifier
				qv.DeleteType = pb.MutationProto_DELETE_MULTIPLE_VERSIONS.Enum()
			case DeleteColumnVersion:
				qv.Qualifier = t.Qualifier
				qv.DeleteType = pb.MutationProto_DELETE_ONE_VERSION.Enum()
			case DeleteFamily:
				qv.DeleteType = pb.MutationProto_DELETE_FAMILY.Enum()
			default:
				return nil, fmt.Errorf("%w: delete kind %d", ErrInvalidArgument, t.Kind)
			}
			ts := t.Timestamp
			if ts == 0 {
				ts = m.Timestamp
			}
			if ts != 0 {
				qv.Timestamp = proto.Uint64(ts)
			} else if t.Kind != DeleteColumnVersion {
				// "Everything up to now": the server's LATEST_TIMESTAMP.
				qv.Timestamp = proto.Uint64(latestTimestamp)
			}
			out.ColumnValue = append(out.ColumnValue, &pb.MutationProto_ColumnValue{Family: t.Family, QualifierValue: []*pb.MutationProto_ColumnValue_QualifierValue{qv}})
		}
		return out, nil
	case *Increment:
		if len(m.Columns) == 0 {
			return nil, fmt.Errorf("%w: increment of row %q has no columns", ErrInvalidArgument, m.Row)
		}
		out := &pb.MutationProto{Row: m.Row, MutateType: pb.MutationProto_INCREMENT.Enum(), Nonce: proto.Uint64(c.nonce())}
		for _, col := range m.Columns {
			v := make([]byte, 8)
			for i := range 8 {
				v[7-i] = byte(uint64(col.Amount) >> (8 * i))
			}
			out.ColumnValue = append(out.ColumnValue, &pb.MutationProto_ColumnValue{Family: col.Family,
				QualifierValue: []*pb.MutationProto_ColumnValue_QualifierValue{{Qualifier: col.Qualifier, Value: v}}})
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: %T is not a mutation", ErrInvalidArgument, a)
}

// latestTimestamp is HBase's HConstants.LATEST_TIMESTAMP (Long.MAX_VALUE).
const latestTimestamp = 1<<63 - 1

// onRegion runs one single-region call with locating and retries: it finds
// the region of row, connects to its server and calls fn; retryable failures
// drop the cached region (for region errors and lost connections) and retry.
func (c *Client) onRegion(ctx context.Context, op, table string, row []byte, fn func(ctx context.Context, cn *conn, r *region) error) error {
	if len(row) == 0 {
		return fmt.Errorf("%w: %s: empty row key", ErrInvalidArgument, op)
	}
	return c.retry(ctx, op, func(ctx context.Context) error {
		r, err := c.locate(ctx, table, row)
		if err != nil {
			return err
		}
		cn, err := c.getConn(ctx, r.addr, serviceClient)
		if err == nil {
			err = fn(ctx, cn, r)
		}
		if err != nil && needsRelocate(err) {
			c.regions.drop(r)
		}
		return err
	})
}

// needsRelocate reports errors after which the cached region may be wrong.
func needsRelocate(err error) bool {
	if errIsConnection(err) {
		return true
	}
	re, ok := asRemote(err)
	return ok && re.Kind == KindRegion
}

// Get reads one row; a row with no cells gives a Result with no Cells.
func (c *Client) Get(ctx context.Context, table string, g *Get) (*Result, error) {
	var out *Result
	err := c.onRegion(ctx, "Get", table, g.Row, func(ctx context.Context, cn *conn, r *region) error {
		var resp pb.GetResponse
		cb, err := c.rpc(ctx, cn, "Get", &pb.GetRequest{Region: r.spec(), Get: g.proto()}, &resp)
		if err != nil {
			return err
		}
		out, err = toResult(resp.GetResult(), cb)
		return err
	})
	return out, err
}

// mutate sends one MutateRequest (optionally conditional).
func (c *Client) mutate(ctx context.Context, op, table string, a Action, cond *pb.Condition) (*pb.MutateResponse, *Result, error) {
	var mp *pb.MutationProto
	var cells []byte
	var err error
	if p, ok := a.(*Put); ok {
		mp, err = putNoData(p)
		cells = appendPutCells(nil, p)
	} else {
		mp, err = c.mutation(a)
	}
	if err != nil {
		return nil, nil, err
	}
	var resp pb.MutateResponse
	var res *Result
	err = c.onRegion(ctx, op, table, a.row(), func(ctx context.Context, cn *conn, r *region) error {
		req := &pb.MutateRequest{Region: r.spec(), Mutation: mp, Condition: cond}
		if mp.Nonce != nil {
			req.NonceGroup = proto.Uint64(c.nonceGroup)
		}
		resp.Reset()
		cb, err := c.rpcCells(ctx, cn, "Mutate", req, cells, &resp)
		if err != nil {
			return err
		}
		res, err = toResult(resp.GetResult(), cb)
		return err
	})
	return &resp, res, err
}

// Put writes the cells of p.
func (c *Client) Put(ctx context.Context, table string, p *Put) error {
	_, _, err := c.mutate(ctx, "Put", table, p, nil)
	return err
}

// Delete removes what d names.
func (c *Client) Delete(ctx context.Context, table string, d *Delete) error {
	_, _, err := c.mutate(ctx, "Delete", table, d, nil)
	return err
}

// Increment adds to counters and returns their new values.
func (c *Client) Increment(ctx context.Context, table string, inc *Increment) (*Result, error) {
	_, res, err := c.mutate(ctx, "Increment", table, inc, nil)
	return res, err
}

// CompareOp compares the stored value of a CheckAndMutate column with the
// given one: stored OP given.
type CompareOp int

// Comparisons of CheckAndMutate (HBase's CompareType).
const (
	Less CompareOp = iota
	LessOrEqual
	Equal
	NotEqual
	GreaterOrEqual
	Greater
)

// Check is the condition of a CheckAndMutate: the newest value of
// Family:Qualifier in Row compared with Value. A nil or empty Value with
// Equal means "the column does not exist (or is empty)".
type Check struct {
	Row, Family, Qualifier []byte
	Op                     CompareOp
	Value                  []byte
}

// CheckAndMutate applies m (a *Put or *Delete of the same row) atomically
// if the check holds on the server, and reports whether it did. This is
// how two writers race for the same cell and exactly one wins. If the
// connection is lost after the server applied m, the retry finds the check
// no longer holding and reports false: a caller that must know reads the
// cell back.
func (c *Client) CheckAndMutate(ctx context.Context, table string, chk Check, m Action) (bool, error) {
	switch m.(type) {
	case *Put, *Delete:
	default:
		return false, fmt.Errorf("%w: CheckAndMutate takes a *Put or *Delete, not %T", ErrInvalidArgument, m)
	}
	if string(m.row()) != string(chk.Row) {
		return false, fmt.Errorf("%w: CheckAndMutate row %q differs from mutation row %q", ErrInvalidArgument, chk.Row, m.row())
	}
	cmp, err := proto.Marshal(&pb.BinaryComparator{Comparable: &pb.ByteArrayComparable{Value: chk.Value}})
	if err != nil {
		return false, err
	}
	cond := &pb.Condition{
		Row: chk.Row, Family: chk.Family, Qualifier: chk.Qualifier,
		CompareType: pb.CompareType(chk.Op).Enum(),
		Comparator:  &pb.Comparator{Name: proto.String("org.apache.hadoop.hbase.filter.BinaryComparator"), SerializedComparator: cmp},
	}
	resp, _, err := c.mutate(ctx, "CheckAndMutate", table, m, cond)
	if err != nil {
		return false, err
	}
	return resp.GetProcessed(), nil
}
