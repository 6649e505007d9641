package hbase

import (
	"context"

	"github.com/simdex/simdex/hbase/internal/pb"
	"google.golang.org/protobuf/proto"
)

// MajorCompact asks the region server of every region of table to
// major-compact it: write each store's files into one, leaving out deleted
// cells, delete markers and versions beyond the family's VERSIONS. Under
// NEW_VERSION_BEHAVIOR nothing else drops them, and a read walks them all.
// The servers queue the compactions and answer at once; Compacting tells
// when they are done. On a cluster that checks permissions the request is
// accepted whoever sends it, and a compaction the sender may not run
// (ADMIN or CREATE on the table) fails in the background, seen only in the
// region server's log; Flush, which needs the same permission, is refused
// with ErrAccessDenied. A region that splits or moves meanwhile is asked
// again where its start key now is.
func (c *Client) MajorCompact(ctx context.Context, table string) error {
	return c.eachRegion(ctx, "CompactRegion", table, func(ctx context.Context, cn *conn, r *region) error {
		var resp pb.CompactRegionResponse
		_, err := c.rpc(ctx, cn, "CompactRegion", &pb.CompactRegionRequest{Region: r.spec(), Major: proto.Bool(true)}, &resp)
		return err
	})
}

// Flush writes the memstore of every region of table into a new store
// file, and returns when the files are written.
func (c *Client) Flush(ctx context.Context, table string) error {
	return c.eachRegion(ctx, "FlushRegion", table, func(ctx context.Context, cn *conn, r *region) error {
		var resp pb.FlushRegionResponse
		_, err := c.rpc(ctx, cn, "FlushRegion", &pb.FlushRegionRequest{Region: r.spec()}, &resp)
		return err
	})
}

// Compacting reports whether a region of table is compacting, minor or
// major, or has a compaction queued.
func (c *Client) Compacting(ctx context.Context, table string) (bool, error) {
	busy := false
	err := c.eachRegion(ctx, "GetRegionInfo", table, func(ctx context.Context, cn *conn, r *region) error {
		var resp pb.GetRegionInfoResponse
		if _, err := c.rpc(ctx, cn, "GetRegionInfo", &pb.GetRegionInfoRequest{Region: r.spec(), CompactionState: proto.Bool(true)}, &resp); err != nil {
			return err
		}
		busy = busy || resp.GetCompactionState() != pb.GetRegionInfoResponse_NONE
		return nil
	})
	return busy, err
}

// StoreFiles returns the number of store files of each region of table,
// in region order.
func (c *Client) StoreFiles(ctx context.Context, table string) ([]int, error) {
	var out []int
	err := c.eachRegion(ctx, "GetStoreFile", table, func(ctx context.Context, cn *conn, r *region) error {
		var resp pb.GetStoreFileResponse
		if _, err := c.rpc(ctx, cn, "GetStoreFile", &pb.GetStoreFileRequest{Region: r.spec()}, &resp); err != nil {
			return err
		}
		out = append(out, len(resp.GetStoreFile()))
		return nil
	})
	return out, err
}

// eachRegion calls fn on an AdminService connection to the server of each
// region of table in turn, from the first. A retryable failure drops the
// cached region and retries on the region that now holds the same start
// key, so after a split only its first daughter is reached.
func (c *Client) eachRegion(ctx context.Context, op, table string, fn func(ctx context.Context, cn *conn, r *region) error) error {
	if _, _, err := canonicalTable(table); err != nil {
		return err
	}
	key := []byte{}
	for n := 0; ; n++ {
		if n > 1<<20 {
			return protocolErrorf("table %s: more than 2^20 regions", table)
		}
		var end []byte
		err := c.retry(ctx, op, func(ctx context.Context) error {
			r, err := c.locate(ctx, table, key)
			if err != nil {
				return err
			}
			cn, err := c.getConn(ctx, r.addr, serviceAdmin)
			if err == nil {
				err = fn(ctx, cn, r)
			}
			if err != nil && needsRelocate(err) {
				c.regions.drop(r)
			}
			end = r.end
			return err
		})
		if err != nil {
			return err
		}
		if len(end) == 0 {
			return nil
		}
		key = end
	}
}
