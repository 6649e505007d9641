package hbase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// This file is HBase's bulk-load path on the client side: the region
// servers' PrepareBulkLoad, BulkLoadHFile and CleanupBulkLoad calls, and the
// region list a loader needs to cut its HFiles at region boundaries.
//
// How a load goes: Regions lists the table's regions; the caller writes one
// HFile per region and family (package hbase/hfile) where the region
// servers can read it (a local path for standalone HBase, the cluster's
// HDFS otherwise); PrepareBulkLoad gets a bulk token (a staging directory
// the region server creates); BulkLoadHFiles imports each region's files,
// which the region server renames into the region (copy_file=false; on a
// filesystem other than HDFS it copies them through its staging directory)
// under a new sequence id (assign_seq_num=true), so they never pass the
// memstore or the WAL; CleanupBulkLoad removes the staging directory.

// Bulk-load errors. Test with errors.Is.
var (
	// ErrBulkLoadSplit: the files of one call do not fit in one region (the
	// region split or moved since the caller planned): cut them again at
	// the boundaries Regions returns now and retry.
	ErrBulkLoadSplit = errors.New("hbase: bulk load: files do not fit the region")
	// ErrBulkLoadUnreadable: the region server could not read the files
	// (not on its filesystem: a real cluster needs the files on its HDFS).
	// HBase does not say why over the wire (it answers loaded=false, and
	// its log has the exception): the client reports this error when the
	// region refused the files without having split or moved.
	ErrBulkLoadUnreadable = errors.New("hbase: bulk load: region server cannot read the file")
)

// maxRefusals is how many times BulkLoadHFiles lets one region refuse files
// (loaded=false) without a split or move before it blames the files: with
// the client's backoff, a few seconds, what a split takes to show in
// hbase:meta.
const maxRefusals = 8

// RegionBounds is one region of a table: its key range and server.
type RegionBounds struct {
	// Start is inclusive, End exclusive; empty means the table's start or
	// end.
	Start, End []byte
	// Name is the region name (its hbase:meta row key).
	Name []byte
	// Server is host:port of the region server holding it.
	Server string
}

// Contains reports whether row falls in the region.
func (r RegionBounds) Contains(row []byte) bool {
	return bytes.Compare(row, r.Start) >= 0 && (len(r.End) == 0 || bytes.Compare(row, r.End) < 0)
}

// Regions lists every region of table in key order, read afresh from
// hbase:meta (the cache is refreshed, not trusted).
func (c *Client) Regions(ctx context.Context, table string) ([]RegionBounds, error) {
	ns, qual, err := canonicalTable(table)
	if err != nil {
		return nil, err
	}
	c.regions.dropTable(ns + ":" + qual)
	var out []RegionBounds
	key := []byte{}
	for {
		var r *region
		err := c.retry(ctx, "Regions", func(ctx context.Context) error {
			var err error
			r, err = c.locate(ctx, table, key)
			return err
		})
		if err != nil {
			return nil, err
		}
		out = append(out, RegionBounds{Start: r.start, End: r.end, Name: r.name, Server: r.addr})
		if len(r.end) == 0 {
			return out, nil
		}
		if len(out) > 1<<20 {
			return nil, protocolErrorf("table %s: more than 2^20 regions", table)
		}
		key = r.end
	}
}

// PrepareBulkLoad asks the region server of table's first region for a
// bulk token: the staging directory the server moves imported files
// through. Pass it to BulkLoadHFiles and CleanupBulkLoad.
func (c *Client) PrepareBulkLoad(ctx context.Context, table string) (string, error) {
	ns, qual, err := canonicalTable(table)
	if err != nil {
		return "", err
	}
	var token string
	err = c.onRegion(ctx, "PrepareBulkLoad", table, []byte{0}, func(ctx context.Context, cn *conn, r *region) error {
		req := &pb.PrepareBulkLoadRequest{
			TableName: &pb.TableName{Namespace: []byte(ns), Qualifier: []byte(qual)},
			Region:    r.spec(),
		}
		var resp pb.PrepareBulkLoadResponse
		if _, err := c.rpc(ctx, cn, "PrepareBulkLoad", req, &resp); err != nil {
			return err
		}
		token = resp.GetBulkToken()
		return nil
	})
	if err == nil && token == "" {
		err = protocolErrorf("PrepareBulkLoad: empty bulk token")
	}
	return token, err
}

// CleanupBulkLoad removes the staging directory of a bulk token.
func (c *Client) CleanupBulkLoad(ctx context.Context, table, token string) error {
	return c.onRegion(ctx, "CleanupBulkLoad", table, []byte{0}, func(ctx context.Context, cn *conn, r *region) error {
		var resp pb.CleanupBulkLoadResponse
		_, err := c.rpc(ctx, cn, "CleanupBulkLoad", &pb.CleanupBulkLoadRequest{BulkToken: proto.String(token), Region: r.spec()}, &resp)
		return err
	})
}

// FamilyPath is one HFile to import and the family it belongs to.
type FamilyPath struct {
	Family []byte
	// Path as the region server resolves it: an absolute local path for a
	// standalone HBase, hdfs://... (or a path on the default filesystem)
	// for a cluster.
	Path string
}

// BulkLoadHFiles imports files, whose rows all lie in [firstRow, lastRow],
// into the region of table holding them, atomically (all files or none).
// The region server moves the files into the region when they are on its
// own HDFS (on other filesystems, a local one included, it copies them: the
// caller removes its copies) and gives them a new sequence id, so cells in
// them win over older cells with the same key and timestamp.
//
// The caller must state the files' rows truthfully. It returns
// ErrBulkLoadSplit when [firstRow, lastRow] is not inside one region (also
// when the server finds so: the region split meanwhile), and
// ErrBulkLoadUnreadable when the server refused the files otherwise
// (cannot read a path). Region moves are retried like any call.
func (c *Client) BulkLoadHFiles(ctx context.Context, table string, firstRow, lastRow []byte, files []FamilyPath, token string) error {
	if len(files) == 0 || bytes.Compare(firstRow, lastRow) > 0 {
		return fmt.Errorf("%w: BulkLoadHFiles: no files or rows %q > %q", ErrInvalidArgument, firstRow, lastRow)
	}
	req := &pb.BulkLoadHFileRequest{AssignSeqNum: proto.Bool(true), CopyFile: proto.Bool(false)}
	if token != "" {
		req.BulkToken = proto.String(token)
	}
	for _, f := range files {
		req.FamilyPath = append(req.FamilyPath, &pb.BulkLoadHFileRequest_FamilyPath{Family: f.Family, Path: proto.String(f.Path)})
	}
	row := firstRow
	if len(row) == 0 {
		row = []byte{0}
	}
	refusals := 0
	err := c.onRegion(ctx, "BulkLoadHFile", table, row, func(ctx context.Context, cn *conn, r *region) error {
		if !r.contains(firstRow) || !r.contains(lastRow) {
			return fmt.Errorf("%w: rows %q..%q, region %q..%q", ErrBulkLoadSplit, firstRow, lastRow, r.start, r.end)
		}
		req.Region = r.spec()
		var resp pb.BulkLoadHFileResponse
		if _, err := c.rpc(ctx, cn, "BulkLoadHFile", req, &resp); err != nil {
			return err
		}
		if resp.GetLoaded() {
			return nil
		}
		// HBase answers loaded=false for files that do not fit the region
		// (it checks each file's first and last key), for a region that
		// is closing (a split or move under way) and for files it could
		// not open (its log says which). If hbase:meta has a new region
		// for the rows, it was a split; if the same region refuses again
		// and again, the files are the problem.
		c.regions.drop(r)
		nr, err := c.locate(ctx, table, row)
		if err != nil {
			return err
		}
		if !bytes.Equal(nr.name, r.name) || !nr.contains(lastRow) {
			return fmt.Errorf("%w: region %q refused the files and split or moved", ErrBulkLoadSplit, r.name)
		}
		if refusals++; refusals < maxRefusals {
			return &RemoteError{Class: "BulkLoadRefused", Message: fmt.Sprintf("region %q refused the files (closing for a split or move?)", r.name), Kind: KindBusy}
		}
		return fmt.Errorf("%w: region %q refused the files %d times and did not split or move (the region server's log says why; on a Kerberos cluster the caller's user must be allowed to read and write them)", ErrBulkLoadUnreadable, r.name, refusals)
	})
	if re, ok := asRemote(err); ok && unreadable(re) {
		return fmt.Errorf("%w: %w", ErrBulkLoadUnreadable, err)
	}
	return err
}

// unreadable reports the exceptions of a region server that cannot reach
// a file's path.
func unreadable(re *RemoteError) bool {
	switch shortClass(re.Class) {
	case "FileNotFoundException", "UnsupportedFileSystemException":
		return true
	}
	for _, s := range []string{"Wrong FS", "No FileSystem for scheme", "does not exist", "File not found"} {
		if strings.Contains(re.Message, s) {
			return true
		}
	}
	return false
}
