package hbase

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Coalescing of concurrent read-only Multi calls (group commit for gets).
//
// The region server spends a fixed cost on every RPC (Netty read, call
// queue, handler wake-up, request decode, response encode and write) on top
// of the per-Get work; at 16 concurrent lookups of 4 gets each, that fixed
// cost is a large share of its CPU. So while MultiInFlight Multi calls of
// gets (callers, not RPCs: a shared RPC counts once per caller in it) are
// in flight on one connection, further ones queue up and leave together,
// as ONE MultiRequest holding every queued call's RegionActions, as soon as
// the calls in flight drop below the limit again. Below the limit a call
// leaves at once (no timer, no added wait).
//
// Why callers and not RPCs: waiting is never faster for the caller that
// waits (it pays the rest of an RPC in flight, then its own), so a limit
// should only bind when the region server is busy enough for the saved
// RPCs to matter. Counted in RPCs, a limit of 1 made a lookup that came
// while another one was in flight wait for it: at 2,000 lookups/s from
// independent clients that is most of them, and it doubled the p99 of the
// store call (benchmarks/2026-11-26-hbase-lookups.md). Counted in callers, a few
// concurrent lookups each go at once, while at 16 busy clients nearly
// every call is beyond the limit and they share RPCs as before.
//
// Each queued call keeps its own RegionActions (the action indexes it chose
// stay valid: HBase answers per RegionAction, in request order), so the
// reply splits back by position: the region results in order, and the
// cells of the shared cell block, which follow the results in the same
// order. A caller whose ctx ends gets ctx's error at once: before its
// batch leaves it is taken out of it; after, its share of the reply is
// dropped. The others are unaffected: the RPC carries the latest deadline
// of its callers and does not depend on any caller's ctx. An exception on
// one RegionAction or action reaches only the caller it belongs to; an
// error of the RPC as a whole (connection lost, server busy) reaches every
// caller in it, and each retries on its own as before.

// maxFlightCalls caps the calls in one MultiRequest: the region server
// answers a MultiRequest in one handler, one action after another, so an
// unbounded batch would make every caller in it wait for all the others.
// Beyond it, a call is sent on its own (the batch is full, not the
// connection).
const maxFlightCalls = 64

// multiCoalescer queues Multi calls of gets on one connection.
type multiCoalescer struct {
	limit int // MultiInFlight; read-only

	// mu guards calls, queue and the members, claimed and promoted
	// fields of the queued flight.
	mu    sync.Mutex
	calls int          // callers in flights sent and not yet answered (or failed)
	queue *multiFlight // the flight collecting callers, or nil
}

// multiFlight is one MultiRequest in the making, or sent: the calls
// (members) that share it.
type multiFlight struct {
	co *multiCoalescer

	// Guarded by co.mu until claimed; read-only afterwards.
	members  []*multiMember
	promoted bool // ready was closed: a slot is free, a member will send
	claimed  bool // a member took it to send; members is final

	ready chan struct{} // closed when the flight may leave (queued flights)
	sent  chan struct{} // closed once cl or sendErr is set
	cl    *call         // the RPC, once sent
	// sendErr is the error of sending (connection dead, write failed);
	// set before sent is closed.
	sendErr error
	start   time.Time // when the RPC left, for the latency metric

	release sync.Once // takes the flight's callers off co.calls exactly once

	split    sync.Once // the first member back decodes and splits the reply
	splitErr error     // an error of the whole RPC, for every member
}

// multiMember is one caller's share of a flight.
type multiMember struct {
	ras      []regionActionEnc
	deadline time.Time // zero: none
	// Set by the split:
	rars []regionActionResult
	cb   *cellBlock
}

// multiGets sends ras (RegionActions of Get actions only, no cell block)
// on cn, coalesced with concurrent calls, and returns the region results of
// ras, in order, and the part of the reply's cell block that belongs to
// them.
func (c *Client) multiGets(ctx context.Context, cn *conn, ras []regionActionEnc) ([]regionActionResult, *cellBlock, error) {
	co := &cn.co
	m := &multiMember{ras: ras}
	if dl, ok := ctx.Deadline(); ok {
		m.deadline = dl
	}
	co.mu.Lock()
	if co.queue == nil && co.calls < co.limit || co.queue != nil && len(co.queue.members) >= maxFlightCalls {
		// Idle enough (or the queued batch is full): leave now, alone.
		co.calls++
		co.mu.Unlock()
		f := &multiFlight{co: co, members: []*multiMember{m}, claimed: true, sent: make(chan struct{})}
		c.sendFlight(cn, f)
		return c.awaitFlight(ctx, cn, f, m)
	}
	f := co.queue
	if f == nil {
		f = &multiFlight{co: co, ready: make(chan struct{}), sent: make(chan struct{})}
		co.queue = f
	}
	f.members = append(f.members, m)
	co.mu.Unlock()

	select {
	case <-f.ready:
	case <-ctx.Done():
		if co.leave(f, m) {
			return nil, nil, fmt.Errorf("hbase: %s Multi: %w", cn.addr, ctx.Err())
		}
		// Already claimed: the flight leaves with this caller's share;
		// awaitFlight returns ctx's error.
	}
	co.mu.Lock()
	if !f.claimed {
		f.claimed = true
		if co.queue == f {
			co.queue = nil
		}
		co.calls += len(f.members)
		co.mu.Unlock()
		if len(f.members) > 1 {
			c.m.coalesced.Add(float64(len(f.members)))
		}
		c.sendFlight(cn, f)
	} else {
		co.mu.Unlock()
	}
	return c.awaitFlight(ctx, cn, f, m)
}

// leave takes m out of f if f has not been claimed yet, and reports
// whether it did. A flight left empty stops collecting.
func (co *multiCoalescer) leave(f *multiFlight, m *multiMember) bool {
	co.mu.Lock()
	defer co.mu.Unlock()
	if f.claimed {
		return false
	}
	if i := slices.Index(f.members, m); i >= 0 {
		f.members = slices.Delete(f.members, i, i+1)
	}
	if len(f.members) == 0 && co.queue == f {
		co.queue = nil
	}
	return true
}

// done takes a flight's n callers off the calls in flight: the queued
// flight, if any, may leave once they are below the limit.
func (co *multiCoalescer) done(n int) {
	co.mu.Lock()
	co.calls -= n
	if f := co.queue; f != nil && !f.promoted && co.calls < co.limit {
		if len(f.members) == 0 {
			co.queue = nil
		} else {
			f.promoted = true
			close(f.ready)
		}
	}
	co.mu.Unlock()
}

// sendFlight encodes the claimed flight f as one MultiRequest and writes it
// to cn. It never waits for the reply.
func (c *Client) sendFlight(cn *conn, f *multiFlight) {
	defer close(f.sent)
	var (
		all      []regionActionEnc
		deadline time.Time
		noLimit  bool
	)
	if len(f.members) == 1 {
		all = f.members[0].ras
	}
	for _, m := range f.members {
		if len(f.members) > 1 {
			all = append(all, m.ras...)
		}
		if m.deadline.IsZero() {
			noLimit = true
		} else if m.deadline.After(deadline) {
			deadline = m.deadline
		}
	}
	var timeoutMs uint32
	if !noLimit {
		timeoutMs = deadlineMs(deadline)
	}
	bp := multiBufs.Get().(*[]byte)
	body := appendMultiRequest((*bp)[:0], all, c.nonceGroup, false)
	f.start = time.Now()
	release := func() { f.release.Do(func() { f.co.done(len(f.members)) }) }
	f.cl, f.sendErr = cn.start("Multi", timeoutMs, body, nil, release)
	if cap(body) <= 64<<10 {
		*bp = body[:0]
		multiBufs.Put(bp)
	}
	if f.sendErr != nil {
		release()
	}
}

// awaitFlight waits for f's reply (or ctx) and returns m's share of it.
func (c *Client) awaitFlight(ctx context.Context, cn *conn, f *multiFlight, m *multiMember) ([]regionActionResult, *cellBlock, error) {
	ctxErr := func() error { return fmt.Errorf("hbase: %s Multi: %w", cn.addr, ctx.Err()) }
	select {
	case <-f.sent:
	case <-ctx.Done():
		return nil, nil, ctxErr()
	}
	if f.sendErr != nil {
		return nil, nil, f.sendErr
	}
	select {
	case <-f.cl.done:
	case <-ctx.Done():
		return nil, nil, ctxErr()
	}
	f.split.Do(func() {
		c.observe("Multi", f.start)
		f.splitErr = splitFlight(f)
	})
	if f.splitErr != nil {
		return nil, nil, f.splitErr
	}
	return m.rars, m.cb, nil
}

// splitFlight decodes f's reply and hands every member its region results
// and cells.
func splitFlight(f *multiFlight) error {
	cl := f.cl
	if cl.err != nil {
		return cl.err
	}
	if ex := cl.resp.header.exception; ex != nil {
		return newRemoteError(ex.GetExceptionClassName(), ex.GetStackTrace(), ex.GetDoNotRetry())
	}
	n := 0
	for _, m := range f.members {
		n += len(m.ras)
	}
	rars, err := decodeMultiResponse(cl.resp.body, make([]regionActionResult, 0, n))
	if err != nil {
		return fmt.Errorf("Multi reply: %w", err)
	}
	if len(rars) != n {
		return protocolErrorf("Multi: %d region results for %d region actions", len(rars), n)
	}
	if len(f.members) == 1 {
		m := f.members[0]
		m.rars = rars
		if cl.resp.cellBlock != nil {
			m.cb = &cellBlock{buf: cl.resp.cellBlock}
		}
		return nil
	}
	rest := cl.resp.cellBlock
	for _, m := range f.members {
		m.rars = rars[:len(m.ras):len(m.ras)]
		rars = rars[len(m.ras):]
		cells := 0
		for k := range m.rars {
			for _, roe := range m.rars[k].roes {
				if roe.exception == nil && roe.hasResult {
					cells += int(roe.result.assoc)
				}
			}
		}
		if cells == 0 {
			continue
		}
		mine, after, err := skipCells(rest, cells)
		if err != nil {
			return err
		}
		m.cb = &cellBlock{buf: mine}
		rest = after
	}
	return nil
}

// skipCells splits buf after its first n cells (each a 4-byte length and
// that many bytes); the cells themselves are checked when decoded.
func skipCells(buf []byte, n int) (cells, rest []byte, err error) {
	off := 0
	for i := range n {
		if len(buf)-off < 4 {
			return nil, nil, protocolErrorf("cell block: %d cells announced, %d found", n, i)
		}
		l := int(uint32(buf[off])<<24 | uint32(buf[off+1])<<16 | uint32(buf[off+2])<<8 | uint32(buf[off+3]))
		if l < 0 || l > len(buf)-off-4 {
			return nil, nil, protocolErrorf("cell block: cell of %d bytes, only %d left", l, len(buf)-off-4)
		}
		off += 4 + l
	}
	return buf[:off:off], buf[off:], nil
}
