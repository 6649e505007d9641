package hbase

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// region is one region of a table as hbase:meta describes it.
type region struct {
	table  string // canonical "namespace:qualifier"
	name   []byte // full region name (its hbase:meta row key)
	start  []byte // inclusive; empty = table start
	end    []byte // exclusive; empty = table end
	server ServerName
	addr   string // server.Addr(), computed once: it is on every call's path
	info   *pb.RegionInfo
	// specBytes is the encoded RegionSpecifier naming the region, built
	// once: every Multi to the region sends it.
	specBytes []byte
}

func (r *region) contains(key []byte) bool {
	return bytes.Compare(key, r.start) >= 0 && (len(r.end) == 0 || bytes.Compare(key, r.end) < 0)
}

// specEnc is the encoded RegionSpecifier naming r (for hand-encoded
// requests).
func (r *region) specEnc() []byte {
	if r.specBytes != nil {
		return r.specBytes
	}
	return regionSpecBytes(r.name)
}

// spec is the RegionSpecifier naming r (for generated requests).
func (r *region) spec() *pb.RegionSpecifier {
	return &pb.RegionSpecifier{Type: pb.RegionSpecifier_REGION_NAME.Enum(), Value: r.name}
}

// metaRegionName is the name of the (single, replica 0) hbase:meta region.
var metaRegionName = []byte("hbase:meta,,1")

// canonicalTable returns "namespace:qualifier" ("default:" added when the
// namespace is left out), or an error for an empty part.
func canonicalTable(table string) (ns, qual string, err error) {
	ns, qual, ok := strings.Cut(table, ":")
	if !ok {
		ns, qual = "default", table
	}
	if ns == "" || qual == "" || strings.ContainsAny(table, ", ") {
		return "", "", fmt.Errorf("%w: table name %q", ErrInvalidArgument, table)
	}
	return ns, qual, nil
}

// metaTableName is how hbase:meta rows spell a table: no "default:".
func metaTableName(ns, qual string) string {
	if ns == "default" {
		return qual
	}
	return ns + ":" + qual
}

// regionCache holds the known regions of each table, sorted by start key.
// Readers take no lock: they load an immutable snapshot of the whole cache,
// which writers (rare: a miss, a move, a split) replace copy-on-write.
type regionCache struct {
	mu   sync.Mutex // serializes writers (put, drop, dropTable)
	snap atomic.Pointer[map[string][]*region]
	// canon maps the table names callers pass to their canonical form
	// ("namespace:qualifier"), so a hit needs no string building.
	canon sync.Map // string -> string
}

func newRegionCache() *regionCache {
	rc := &regionCache{}
	m := map[string][]*region{}
	rc.snap.Store(&m)
	return rc
}

// tables is the current snapshot; callers must not modify it.
func (rc *regionCache) tables() map[string][]*region { return *rc.snap.Load() }

// update replaces table's regions with fn(old) in a new snapshot; the
// caller holds rc.mu. nil removes the table.
func (rc *regionCache) update(table string, rs []*region) {
	old := rc.tables()
	next := make(map[string][]*region, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	if rs == nil {
		delete(next, table)
	} else {
		next[table] = rs
	}
	rc.snap.Store(&next)
}

// get returns the cached region of table holding key, or nil.
func (rc *regionCache) get(table string, key []byte) *region {
	rs := rc.tables()[table]
	// The last region whose start <= key.
	i := sort.Search(len(rs), func(i int) bool { return bytes.Compare(rs[i].start, key) > 0 }) - 1
	if i >= 0 && rs[i].contains(key) {
		return rs[i]
	}
	return nil
}

// put adds r, dropping cached regions it overlaps (they are stale: split,
// merged or moved).
func (rc *regionCache) put(r *region) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	old := rc.tables()[r.table]
	keep := make([]*region, 0, len(old)+1)
	for _, o := range old {
		overlap := (len(o.end) == 0 || bytes.Compare(r.start, o.end) < 0) &&
			(len(r.end) == 0 || bytes.Compare(o.start, r.end) < 0)
		if !overlap {
			keep = append(keep, o)
		}
	}
	keep = append(keep, r)
	sort.Slice(keep, func(i, j int) bool { return bytes.Compare(keep[i].start, keep[j].start) < 0 })
	rc.update(r.table, keep)
}

// drop forgets r if it is still cached.
func (rc *regionCache) drop(r *region) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rs := rc.tables()[r.table]
	for i, o := range rs {
		if o == r {
			rc.update(r.table, append(rs[:i:i], rs[i+1:]...))
			return
		}
	}
}

// dropTable forgets every region of table (after delete or modify).
func (rc *regionCache) dropTable(table string) {
	rc.mu.Lock()
	if _, ok := rc.tables()[table]; ok {
		rc.update(table, nil)
	}
	rc.mu.Unlock()
}

// locate returns the region of table holding key: from the cache, else by a
// reversed scan of hbase:meta starting at "table,key,99999999999999" (the
// meta comparator orders rows by table, then start key, then region id, so
// the first row at or before that is the region holding key).
func (c *Client) locate(ctx context.Context, table string, key []byte) (*region, error) {
	if canon, ok := c.regions.canon.Load(table); ok {
		if r := c.regions.get(canon.(string), key); r != nil {
			return r, nil
		}
	}
	ns, qual, err := canonicalTable(table)
	if err != nil {
		return nil, err
	}
	canon := ns + ":" + qual
	c.regions.canon.Store(table, canon)
	if r := c.regions.get(canon, key); r != nil {
		return r, nil
	}
	c.m.cacheMisses.Inc()
	metaName := metaTableName(ns, qual)
	return c.lookupMeta(ctx, canon, metaName, append([]byte(metaName+","), append(key, ",99999999999999"...)...), key, false)
}

// locateBefore returns the region of table just before the one starting at
// start (for reversed scans), looked up in hbase:meta without the cache.
func (c *Client) locateBefore(ctx context.Context, table string, start []byte) (*region, error) {
	ns, qual, err := canonicalTable(table)
	if err != nil {
		return nil, err
	}
	c.m.cacheMisses.Inc()
	metaName := metaTableName(ns, qual)
	// "table,start,00000000000000" sorts before every region id of the
	// region at start, so the reversed scan finds the one before it.
	return c.lookupMeta(ctx, ns+":"+qual, metaName, append([]byte(metaName+","), append(start, ",00000000000000"...)...), nil, true)
}

func (c *Client) lookupMeta(ctx context.Context, canon, metaName string, metaKey, key []byte, before bool) (*region, error) {
	addr, err := c.metaServer(ctx)
	if err != nil {
		return nil, err
	}
	cn, err := c.getConn(ctx, addr, serviceClient)
	if err != nil {
		c.forgetMeta()
		return nil, err
	}
	req := &pb.ScanRequest{
		Region: &pb.RegionSpecifier{Type: pb.RegionSpecifier_REGION_NAME.Enum(), Value: metaRegionName},
		Scan: &pb.Scan{
			StartRow: metaKey,
			// "table,," is the first possible row of the table: never
			// leave the table's rows.
			StopRow:        []byte(metaName + ",,"),
			IncludeStopRow: proto.Bool(true),
			Reversed:       proto.Bool(true),
			Column:         []*pb.Column{{Family: []byte("info")}},
			Caching:        proto.Uint32(1),
		},
		NumberOfRows: proto.Uint32(1),
		CloseScanner: proto.Bool(true),
	}
	var resp pb.ScanResponse
	cb, err := c.rpc(ctx, cn, "Scan", req, &resp)
	if err != nil {
		if IsRetryable(err) {
			c.forgetMeta() // hbase:meta may have moved
		}
		return nil, fmt.Errorf("hbase: locate in hbase:meta: %w", err)
	}
	results, err := scanResults(&resp, cb)
	if err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("%w: %s (no region in hbase:meta)", ErrTableNotFound, canon)
	}
	r, err := parseMetaRow(results[0])
	if err != nil {
		return nil, err
	}
	if r.table != canon {
		return nil, fmt.Errorf("%w: %s (hbase:meta has %s)", ErrTableNotFound, canon, r.table)
	}
	if r.info.GetOffline() || r.server.Host == "" {
		// A split parent or a region being assigned: try again shortly.
		return nil, &RemoteError{Class: "RegionOfflineException", Message: fmt.Sprintf("region %q not assigned yet", r.name), Kind: KindRegion}
	}
	if !before && !r.contains(key) {
		return nil, &RemoteError{Class: "RegionOfflineException", Message: fmt.Sprintf("hbase:meta has a hole before %q", key), Kind: KindRegion}
	}
	c.regions.put(r)
	return r, nil
}

// parseMetaRow reads info:regioninfo ("PBUF" + RegionInfo), info:server
// ("host:port") and info:serverstartcode (int64) of an hbase:meta row.
func parseMetaRow(res *Result) (*region, error) {
	var infoBytes, server, startCode []byte
	for _, cell := range res.Cells {
		if string(cell.Family) != "info" {
			continue
		}
		switch string(cell.Qualifier) {
		case "regioninfo":
			infoBytes = cell.Value
		case "server":
			server = cell.Value
		case "serverstartcode":
			startCode = cell.Value
		}
	}
	if !bytes.HasPrefix(infoBytes, []byte("PBUF")) {
		return nil, protocolErrorf("hbase:meta row %q: no PBUF regioninfo", res.Row())
	}
	info := &pb.RegionInfo{}
	if err := proto.Unmarshal(infoBytes[4:], info); err != nil {
		return nil, protocolErrorf("hbase:meta row %q: regioninfo: %v", res.Row(), err)
	}
	tn := info.GetTableName()
	r := &region{
		table: string(tn.GetNamespace()) + ":" + string(tn.GetQualifier()),
		name:  res.Row(),
		start: info.GetStartKey(),
		end:   info.GetEndKey(),
		info:  info,
	}
	if len(server) > 0 {
		host, port, ok := strings.Cut(string(server), ":")
		p, err := strconv.Atoi(port)
		if !ok || err != nil || p <= 0 || p > 65535 {
			return nil, protocolErrorf("hbase:meta row %q: server %q", res.Row(), server)
		}
		r.server = ServerName{Host: host, Port: p}
		if len(startCode) == 8 {
			r.server.StartCode = binary.BigEndian.Uint64(startCode)
		}
		r.addr = r.server.Addr()
	}
	r.specBytes = regionSpecBytes(r.name)
	return r, nil
}

// scanResults decodes the rows of a ScanResponse: from the cell block
// (cells_per_result says how many cells each row has) or from protobuf.
func scanResults(resp *pb.ScanResponse, cb *cellBlock) ([]*Result, error) {
	var out []*Result
	for _, r := range resp.GetResults() {
		res, err := toResult(r, cb)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	if counts := resp.GetCellsPerResult(); len(counts) > 0 && len(resp.GetResults()) == 0 {
		if cb == nil {
			return nil, protocolErrorf("scan: %d rows announced in a cell block, none sent", len(counts))
		}
		partial := resp.GetPartialFlagPerResult()
		for i, n := range counts {
			cells, err := cb.take(int(n))
			if err != nil {
				return nil, err
			}
			res := &Result{Cells: cells}
			if i < len(partial) {
				res.Partial = partial[i]
			}
			out = append(out, res)
		}
	}
	return out, nil
}
