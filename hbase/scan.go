package hbase

import (
	"bytes"
	"context"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// Scan reads a range of rows, region by region.
type Scan struct {
	// StartRow is inclusive; StopRow exclusive; empty means unbounded. For a
	// Reversed scan StartRow is the high end (inclusive) and StopRow the
	// low end (exclusive).
	StartRow, StopRow []byte
	Columns           []Column
	Reversed          bool
	// Caching is the rows fetched per round trip (default 100).
	Caching uint32
	// MaxResultSize bounds the bytes per round trip (0: the server's
	// default, 2 MB).
	MaxResultSize uint64
	MaxVersions   uint32
	TimeRange     *TimeRange
	// Limit stops after this many rows (0: no limit).
	Limit int
}

// Scanner iterates a Scan. It is not safe for concurrent use. Close it to
// release the server-side scanner if Next did not return io.EOF.
type Scanner struct {
	c     *Client
	table string
	s     Scan

	next    []byte // where the next region's scan starts
	exclude bool   // next is the last row returned: skip it on reopen
	before  bool   // reversed: next region is the one before next
	region  *region
	cn      *conn
	id      uint64 // server scanner id; 0 = none open
	buf     []*Result
	rows    int
	done    bool
	err     error
}

// Scan returns a Scanner over s; it contacts the servers on the first Next.
func (c *Client) Scan(table string, s *Scan) *Scanner {
	sc := &Scanner{c: c, table: table, s: *s, next: s.StartRow}
	if sc.s.Caching == 0 {
		sc.s.Caching = 100
	}
	return sc
}

// Next returns the next row, or io.EOF after the last one.
func (sc *Scanner) Next(ctx context.Context) (*Result, error) {
	for len(sc.buf) == 0 {
		if sc.err != nil {
			return nil, sc.err
		}
		if sc.done {
			return nil, io.EOF
		}
		if err := sc.fetch(ctx); err != nil {
			sc.err = err
			sc.closeServer(ctx)
			return nil, err
		}
	}
	r := sc.buf[0]
	sc.buf = sc.buf[1:]
	sc.rows++
	if sc.s.Limit > 0 && sc.rows >= sc.s.Limit {
		sc.buf = nil
		sc.done = true
		sc.closeServer(ctx)
	}
	return r, nil
}

// Close releases the server-side scanner.
func (sc *Scanner) Close(ctx context.Context) error {
	sc.done = true
	sc.buf = nil
	sc.closeServer(ctx)
	return nil
}

func (sc *Scanner) closeServer(ctx context.Context) {
	if sc.id == 0 || sc.cn == nil {
		return
	}
	var resp pb.ScanResponse
	// Best effort: an unclosed scanner expires on the server by its lease.
	_, _ = sc.cn.call(ctx, "Scan", &pb.ScanRequest{ScannerId: proto.Uint64(sc.id), CloseScanner: proto.Bool(true)}, &resp)
	sc.id = 0
}

func (sc *Scanner) proto() *pb.Scan {
	s := &pb.Scan{StartRow: sc.next, StopRow: sc.s.StopRow, Caching: proto.Uint32(sc.s.Caching)}
	if sc.exclude {
		s.IncludeStartRow = proto.Bool(false)
	}
	if sc.s.Reversed {
		s.Reversed = proto.Bool(true)
	}
	for _, col := range sc.s.Columns {
		s.Column = append(s.Column, &pb.Column{Family: col.Family, Qualifier: col.Qualifiers})
	}
	if sc.s.MaxResultSize > 0 {
		s.MaxResultSize = proto.Uint64(sc.s.MaxResultSize)
	}
	if sc.s.MaxVersions > 1 {
		s.MaxVersions = proto.Uint32(sc.s.MaxVersions)
	}
	if tr := sc.s.TimeRange; tr != nil {
		s.TimeRange = &pb.TimeRange{From: proto.Uint64(tr.From), To: proto.Uint64(tr.To)}
	}
	return s
}

// fetch gets the next batch: opens a scanner on the next region or continues
// the open one. A retryable failure reopens the scan after the last row
// returned, so no row is returned twice or skipped.
func (sc *Scanner) fetch(ctx context.Context) error {
	return sc.c.retry(ctx, "Scan", func(ctx context.Context) error {
		var resp pb.ScanResponse
		var cb *cellBlock
		var err error
		rows := sc.s.Caching
		if sc.s.Limit > 0 {
			rows = min(rows, uint32(sc.s.Limit-sc.rows))
		}
		if sc.id == 0 {
			if err := sc.locate(ctx); err != nil {
				return err
			}
			cb, err = sc.c.rpc(ctx, sc.cn, "Scan", &pb.ScanRequest{Region: sc.region.spec(), Scan: sc.proto(), NumberOfRows: proto.Uint32(rows)}, &resp)
		} else {
			cb, err = sc.c.rpc(ctx, sc.cn, "Scan", &pb.ScanRequest{ScannerId: proto.Uint64(sc.id), NumberOfRows: proto.Uint32(rows)}, &resp)
		}
		if err != nil {
			sc.id = 0
			if needsRelocate(err) && sc.region != nil {
				sc.c.regions.drop(sc.region)
			}
			if re, ok := asRemote(err); ok && (re.Class == "org.apache.hadoop.hbase.UnknownScannerException" || shortClass(re.Class) == "ScannerResetException") {
				return &RemoteError{Class: re.Class, Message: re.Message, Kind: KindBusy} // reopen
			}
			return err
		}
		results, err := scanResults(&resp, cb)
		if err != nil {
			return err
		}
		if resp.ScannerId != nil {
			sc.id = resp.GetScannerId()
		}
		sc.buf = append(sc.buf, results...)
		if n := len(results); n > 0 {
			sc.next = results[n-1].Row()
			sc.exclude = true
		}
		switch {
		case resp.MoreResults != nil && !resp.GetMoreResults():
			// The whole scan is done (stop row or limit reached); the
			// server has closed the scanner.
			sc.id = 0
			sc.done = true
		case resp.MoreResultsInRegion != nil && !resp.GetMoreResultsInRegion():
			// This region is done; the server has closed the scanner.
			sc.id = 0
			sc.nextRegion()
		}
		return nil
	})
}

// locate finds the region for the scan position and its connection.
func (sc *Scanner) locate(ctx context.Context) error {
	var r *region
	var err error
	switch {
	case sc.s.Reversed && len(sc.next) == 0:
		// Reversed from the end of the table: the last region.
		r, err = sc.c.locateLast(ctx, sc.table)
	case sc.before:
		r, err = sc.c.locateBefore(ctx, sc.table, sc.next)
	default:
		r, err = sc.c.locate(ctx, sc.table, sc.next)
	}
	if err != nil {
		return err
	}
	sc.before = false
	cn, err := sc.c.getConn(ctx, r.addr, serviceClient)
	if err != nil {
		sc.c.regions.drop(r)
		return err
	}
	sc.region, sc.cn = r, cn
	return nil
}

// nextRegion moves the position to the region after (or, reversed, before)
// the current one, or ends the scan at the table's or the StopRow's end.
func (sc *Scanner) nextRegion() {
	r := sc.region
	if sc.s.Reversed {
		if len(r.start) == 0 || (len(sc.s.StopRow) > 0 && bytes.Compare(sc.s.StopRow, r.start) >= 0) {
			sc.done = true
			return
		}
		// The highest possible key below r.start, reached by scanning
		// backwards from r.start excluded.
		sc.next = r.start
		sc.exclude = true
		sc.before = true
		return
	}
	if len(r.end) == 0 || (len(sc.s.StopRow) > 0 && bytes.Compare(sc.s.StopRow, r.end) <= 0) {
		sc.done = true
		return
	}
	sc.next = r.end
	sc.exclude = false
}

// locateLast returns the last region of table: a reversed hbase:meta scan
// from the table name plus a zero byte, which the meta comparator sorts
// after every row of the table (the key HBase's own client uses).
func (c *Client) locateLast(ctx context.Context, table string) (*region, error) {
	ns, qual, err := canonicalTable(table)
	if err != nil {
		return nil, err
	}
	c.m.cacheMisses.Inc()
	metaName := metaTableName(ns, qual)
	return c.lookupMeta(ctx, ns+":"+qual, metaName, append([]byte(metaName), 0), nil, true)
}
