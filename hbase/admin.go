package hbase

import (
	"context"
	"fmt"
	"sort"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// Column family and table attribute names as HBase spells them (the keys of
// FamilyDescriptor.Attributes and TableDescriptor.Attributes), with example
// values: COMPRESSION "SNAPPY"|"NONE"|..., DATA_BLOCK_ENCODING
// "FAST_DIFF"|"NONE"|..., BLOOMFILTER "ROW"|"ROWCOL"|"NONE", VERSIONS "1",
// TTL seconds "86400", IS_MOB "true", MOB_THRESHOLD bytes "102400".
const (
	AttrCompression       = "COMPRESSION"
	AttrDataBlockEncoding = "DATA_BLOCK_ENCODING"
	AttrBloomFilter       = "BLOOMFILTER"
	AttrVersions          = "VERSIONS"
	AttrTTL               = "TTL"
	AttrIsMOB             = "IS_MOB"
	AttrMOBThreshold      = "MOB_THRESHOLD"
	AttrBlockSize         = "BLOCKSIZE"
	AttrInMemory          = "IN_MEMORY"
)

// FamilyDescriptor is a column family's schema.
type FamilyDescriptor struct {
	Name       string
	Attributes map[string]string
}

// TableDescriptor is a table's schema. Name is "namespace:table" or
// "table" (namespace "default").
type TableDescriptor struct {
	Name       string
	Attributes map[string]string
	Families   []FamilyDescriptor
}

func tableNamePB(name string) (*pb.TableName, error) {
	ns, qual, err := canonicalTable(name)
	if err != nil {
		return nil, err
	}
	return &pb.TableName{Namespace: []byte(ns), Qualifier: []byte(qual)}, nil
}

func pairs(m map[string]string) []*pb.BytesBytesPair {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*pb.BytesBytesPair, 0, len(m))
	for _, k := range keys {
		out = append(out, &pb.BytesBytesPair{First: []byte(k), Second: []byte(m[k])})
	}
	return out
}

func unpairs(ps []*pb.BytesBytesPair) map[string]string {
	m := make(map[string]string, len(ps))
	for _, p := range ps {
		m[string(p.GetFirst())] = string(p.GetSecond())
	}
	return m
}

func (td *TableDescriptor) proto() (*pb.TableSchema, error) {
	tn, err := tableNamePB(td.Name)
	if err != nil {
		return nil, err
	}
	if len(td.Families) == 0 {
		return nil, fmt.Errorf("%w: table %s has no column families", ErrInvalidArgument, td.Name)
	}
	s := &pb.TableSchema{TableName: tn, Attributes: pairs(td.Attributes)}
	for _, f := range td.Families {
		if f.Name == "" {
			return nil, fmt.Errorf("%w: table %s: empty family name", ErrInvalidArgument, td.Name)
		}
		s.ColumnFamilies = append(s.ColumnFamilies, &pb.ColumnFamilySchema{Name: []byte(f.Name), Attributes: pairs(f.Attributes)})
	}
	return s, nil
}

func fromSchema(s *pb.TableSchema) *TableDescriptor {
	tn := s.GetTableName()
	td := &TableDescriptor{Name: string(tn.GetNamespace()) + ":" + string(tn.GetQualifier()), Attributes: unpairs(s.GetAttributes())}
	for _, f := range s.GetColumnFamilies() {
		td.Families = append(td.Families, FamilyDescriptor{Name: string(f.GetName()), Attributes: unpairs(f.GetAttributes())})
	}
	return td
}

// onMaster calls a MasterService method with retries (a master that is
// starting says PleaseHold; a lost one is looked up again in ZooKeeper).
func (c *Client) onMaster(ctx context.Context, method string, req, resp proto.Message) error {
	return c.retry(ctx, method, func(ctx context.Context) error {
		cn, err := c.master(ctx)
		if err == nil {
			proto.Reset(resp)
			_, err = c.rpc(ctx, cn, method, req, resp)
		}
		if err != nil && needsRelocate(err) {
			c.forgetMaster()
		}
		return err
	})
}

// Namespaces lists the namespaces.
func (c *Client) Namespaces(ctx context.Context) ([]string, error) {
	var resp pb.ListNamespaceDescriptorsResponse
	if err := c.onMaster(ctx, "ListNamespaceDescriptors", &pb.ListNamespaceDescriptorsRequest{}, &resp); err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range resp.GetNamespaceDescriptor() {
		out = append(out, string(ns.GetName()))
	}
	return out, nil
}

// CreateNamespace creates a namespace and waits until it exists.
func (c *Client) CreateNamespace(ctx context.Context, name string) error {
	var resp pb.CreateNamespaceResponse
	req := &pb.CreateNamespaceRequest{NamespaceDescriptor: &pb.NamespaceDescriptor{Name: []byte(name)},
		NonceGroup: proto.Uint64(c.nonceGroup), Nonce: proto.Uint64(c.nonce())}
	if err := c.onMaster(ctx, "CreateNamespace", req, &resp); err != nil {
		return err
	}
	return c.waitProcedure(ctx, resp.GetProcId())
}

// DeleteNamespace deletes an empty namespace.
func (c *Client) DeleteNamespace(ctx context.Context, name string) error {
	var resp pb.DeleteNamespaceResponse
	req := &pb.DeleteNamespaceRequest{NamespaceName: proto.String(name), NonceGroup: proto.Uint64(c.nonceGroup), Nonce: proto.Uint64(c.nonce())}
	if err := c.onMaster(ctx, "DeleteNamespace", req, &resp); err != nil {
		return err
	}
	return c.waitProcedure(ctx, resp.GetProcId())
}

// CreateTable creates a table, pre-split at splitKeys (sorted, distinct,
// non-empty), and waits until its regions are online.
func (c *Client) CreateTable(ctx context.Context, td *TableDescriptor, splitKeys [][]byte) error {
	schema, err := td.proto()
	if err != nil {
		return err
	}
	var resp pb.CreateTableResponse
	req := &pb.CreateTableRequest{TableSchema: schema, SplitKeys: splitKeys, NonceGroup: proto.Uint64(c.nonceGroup), Nonce: proto.Uint64(c.nonce())}
	if err := c.onMaster(ctx, "CreateTable", req, &resp); err != nil {
		return err
	}
	return c.waitProcedure(ctx, resp.GetProcId())
}

// DescribeTable returns a table's schema as the master has it, with every
// attribute HBase stores for it.
func (c *Client) DescribeTable(ctx context.Context, name string) (*TableDescriptor, error) {
	tn, err := tableNamePB(name)
	if err != nil {
		return nil, err
	}
	var resp pb.GetTableDescriptorsResponse
	if err := c.onMaster(ctx, "GetTableDescriptors", &pb.GetTableDescriptorsRequest{TableNames: []*pb.TableName{tn}}, &resp); err != nil {
		return nil, err
	}
	if len(resp.GetTableSchema()) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrTableNotFound, name)
	}
	return fromSchema(resp.GetTableSchema()[0]), nil
}

// ListTables returns the names ("namespace:table") of the user tables.
func (c *Client) ListTables(ctx context.Context) ([]string, error) {
	var resp pb.GetTableDescriptorsResponse
	if err := c.onMaster(ctx, "GetTableDescriptors", &pb.GetTableDescriptorsRequest{}, &resp); err != nil {
		return nil, err
	}
	var out []string
	for _, s := range resp.GetTableSchema() {
		out = append(out, fromSchema(s).Name)
	}
	return out, nil
}

// TableEnabled reports whether a table is enabled.
func (c *Client) TableEnabled(ctx context.Context, name string) (bool, error) {
	tn, err := tableNamePB(name)
	if err != nil {
		return false, err
	}
	var resp pb.GetTableStateResponse
	if err := c.onMaster(ctx, "GetTableState", &pb.GetTableStateRequest{TableName: tn}, &resp); err != nil {
		return false, err
	}
	return resp.GetTableState().GetState() == pb.TableState_ENABLED, nil
}

// tableProc runs a table procedure (enable, disable, delete) and waits.
func (c *Client) tableProc(ctx context.Context, method, name string, mk func(*pb.TableName, *uint64, *uint64) proto.Message, resp interface{ GetProcId() uint64 }) error {
	tn, err := tableNamePB(name)
	if err != nil {
		return err
	}
	if err := c.onMaster(ctx, method, mk(tn, proto.Uint64(c.nonceGroup), proto.Uint64(c.nonce())), resp.(proto.Message)); err != nil {
		return err
	}
	c.regions.dropTable(string(tn.GetNamespace()) + ":" + string(tn.GetQualifier()))
	return c.waitProcedure(ctx, resp.GetProcId())
}

// EnableTable enables a disabled table and waits.
func (c *Client) EnableTable(ctx context.Context, name string) error {
	return c.tableProc(ctx, "EnableTable", name, func(tn *pb.TableName, g, n *uint64) proto.Message {
		return &pb.EnableTableRequest{TableName: tn, NonceGroup: g, Nonce: n}
	}, &pb.EnableTableResponse{})
}

// DisableTable disables a table and waits.
func (c *Client) DisableTable(ctx context.Context, name string) error {
	return c.tableProc(ctx, "DisableTable", name, func(tn *pb.TableName, g, n *uint64) proto.Message {
		return &pb.DisableTableRequest{TableName: tn, NonceGroup: g, Nonce: n}
	}, &pb.DisableTableResponse{})
}

// DeleteTable deletes a disabled table and waits.
func (c *Client) DeleteTable(ctx context.Context, name string) error {
	return c.tableProc(ctx, "DeleteTable", name, func(tn *pb.TableName, g, n *uint64) proto.Message {
		return &pb.DeleteTableRequest{TableName: tn, NonceGroup: g, Nonce: n}
	}, &pb.DeleteTableResponse{})
}

// ModifyTable replaces a table's schema (td.Name names the table) and waits
// until its regions reopened with it.
func (c *Client) ModifyTable(ctx context.Context, td *TableDescriptor) error {
	schema, err := td.proto()
	if err != nil {
		return err
	}
	var resp pb.ModifyTableResponse
	req := &pb.ModifyTableRequest{TableName: schema.TableName, TableSchema: schema, NonceGroup: proto.Uint64(c.nonceGroup), Nonce: proto.Uint64(c.nonce())}
	if err := c.onMaster(ctx, "ModifyTable", req, &resp); err != nil {
		return err
	}
	return c.waitProcedure(ctx, resp.GetProcId())
}

// SplitRegion splits the region of table holding splitRow at splitRow and
// waits for the split to finish.
func (c *Client) SplitRegion(ctx context.Context, table string, splitRow []byte) error {
	var procID uint64
	err := c.retry(ctx, "SplitRegion", func(ctx context.Context) error {
		r, err := c.locate(ctx, table, splitRow)
		if err != nil {
			return err
		}
		var resp pb.SplitTableRegionResponse
		req := &pb.SplitTableRegionRequest{RegionInfo: r.info, SplitRow: splitRow, NonceGroup: proto.Uint64(c.nonceGroup), Nonce: proto.Uint64(c.nonce())}
		cn, err := c.master(ctx)
		if err == nil {
			_, err = c.rpc(ctx, cn, "SplitRegion", req, &resp)
		}
		if err != nil {
			c.regions.drop(r)
			return err
		}
		procID = resp.GetProcId()
		return nil
	})
	if err != nil {
		return err
	}
	if err := c.waitProcedure(ctx, procID); err != nil {
		return err
	}
	if ns, qual, err := canonicalTable(table); err == nil {
		c.regions.dropTable(ns + ":" + qual)
	}
	return nil
}

// waitProcedure polls the master until procedure id finishes, and returns
// its exception as ErrProcedureFailed. Id 0 means nothing to wait for.
func (c *Client) waitProcedure(ctx context.Context, id uint64) error {
	if id == 0 {
		return nil
	}
	pause := 20 * time.Millisecond
	for {
		var resp pb.GetProcedureResultResponse
		if err := c.onMaster(ctx, "getProcedureResult", &pb.GetProcedureResultRequest{ProcId: proto.Uint64(id)}, &resp); err != nil {
			return err
		}
		switch resp.GetState() {
		case pb.GetProcedureResultResponse_FINISHED:
			if ex := resp.GetException(); ex != nil {
				ge := ex.GetGenericException()
				re := newRemoteError(ge.GetClassName(), ge.GetMessage(), true)
				return fmt.Errorf("%w: procedure %d: %w", ErrProcedureFailed, id, re)
			}
			return nil
		case pb.GetProcedureResultResponse_NOT_FOUND:
			// Finished long ago and forgotten; nothing more to learn.
			return nil
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("hbase: waiting for procedure %d: %w", id, ctx.Err())
		}
		pause = min(pause*2, 500*time.Millisecond)
	}
}
