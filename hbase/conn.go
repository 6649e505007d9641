package hbase

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// Wire format of one connection (HBase 2.x, SIMPLE auth, no encryption;
// secure.go and sasl.go for TLS and Kerberos):
//
//	client -> server, once:  "HBas" 0x00 (version) 0x50 (auth SIMPLE)
//	                         uint32 len, ConnectionHeader (protobuf)
//	client -> server, call:  uint32 len, varint len, RequestHeader,
//	                         varint len, request message,
//	                         [cell block of CellBlockMeta.length bytes]
//	server -> client, reply: uint32 len, varint len, ResponseHeader,
//	                         [varint len, response message]  (absent on exception)
//	                         [cell block of CellBlockMeta.length bytes]
//
// Lengths are big-endian. Replies come back in any order, matched by call id.

// Service names of the RPC services the client talks to (Admin: a region
// server's compactions).
const (
	serviceClient = "ClientService"
	serviceMaster = "MasterService"
	serviceAdmin  = "AdminService"
)

// response is a decoded reply frame.
type response struct {
	header    responseHeader
	body      []byte // the response message, still encoded
	cellBlock []byte
}

// decodeResponse splits a reply frame (without its 4-byte length) into
// header, message and cell block. It never panics on any input.
func decodeResponse(frame []byte) (*response, error) {
	hdrBytes, n := protowire.ConsumeBytes(frame)
	if n < 0 {
		return nil, protocolErrorf("response header: %v", protowire.ParseError(n))
	}
	rest := frame[n:]
	hdr, err := decodeResponseHeader(hdrBytes)
	if err != nil {
		return nil, protocolErrorf("response header: %v", err)
	}
	r := &response{header: hdr}
	if hdr.exception != nil {
		return r, nil
	}
	cbLen := hdr.cellsLen
	if cbLen > uint64(len(rest)) {
		return nil, protocolErrorf("cell block of %d bytes, frame has %d left", cbLen, len(rest))
	}
	msgPart := rest[:uint64(len(rest))-cbLen]
	if len(msgPart) > 0 {
		body, m := protowire.ConsumeBytes(msgPart)
		if m < 0 {
			return nil, protocolErrorf("response message: %v", protowire.ParseError(m))
		}
		if m != len(msgPart) {
			return nil, protocolErrorf("%d stray bytes after response message", len(msgPart)-m)
		}
		r.body = body
	}
	if cbLen > 0 {
		r.cellBlock = rest[uint64(len(rest))-cbLen:]
	}
	return r, nil
}

// appendRequest appends one call frame (with its 4-byte length) to dst:
// the encoded header and message, and cells (KeyValueCodec format, may be
// empty) as its cell block.
func appendRequest(dst []byte, callID uint32, method string, timeoutMs uint32, body, cells []byte) []byte {
	var hb [96]byte
	h := appendRequestHeader(hb[:0], callID, method, timeoutMs, len(cells))
	total := protowire.SizeBytes(len(h)) + protowire.SizeBytes(len(body)) + len(cells)
	dst = binary.BigEndian.AppendUint32(dst, uint32(total))
	dst = protowire.AppendBytes(dst, h)
	dst = protowire.AppendBytes(dst, body)
	return append(dst, cells...)
}

// call is one request waiting for its reply.
type call struct {
	done chan struct{} // closed when resp or err is set
	resp *response
	err  error
	id   uint32
	// onDone, if set, runs once after done is closed (by the reader or
	// by fail): a coalesced Multi frees its in-flight slot there even
	// when all its callers have given up.
	onDone func()
	// overdue, for a call with onDone and a timeout, fails the connection
	// if no reply has come overdueGrace after the timeout (nil: none).
	overdue *time.Timer
}

// finish ends the call with its reply or error: its overdue timer is
// stopped, done closed and onDone run.
func (cl *call) finish(resp *response, err error) {
	if cl.overdue != nil {
		cl.overdue.Stop()
	}
	cl.resp, cl.err = resp, err
	close(cl.done)
	if cl.onDone != nil {
		cl.onDone()
	}
}

// overdueGrace is how long past its timeout a coalesced call's reply may
// be late before its connection is declared broken. Such a call is never
// given up by its callers (its reply frees the in-flight slot that every
// later lookup on the connection queues behind), so a reply that never
// comes (a region server frozen, or one that lost the call) would stop
// all lookups on that connection until it closed. That is the likeliest
// cause, not a proven one, of a server answering 503 for over a minute
// after a frozen HBase resumed (TestHBaseFaults, twice in ~10 CI runs).
// Failing the connection fails its calls, which their callers retry on
// a new one.
var overdueGrace = 5 * time.Second

// conn is one TCP connection to one server and service, shared by all
// callers: calls are multiplexed by call id and a single reader goroutine
// hands each reply to its caller.
type conn struct {
	addr     string
	service  string
	nc       net.Conn
	maxFrame int
	onClose  func(*conn) // called once when the connection dies
	// simple is true when the connection did not authenticate (no
	// Kerberos): a read that ends before the first reply then names the
	// likeliest cause (readLoop).
	simple bool

	// writeMu guards wbuf, spare and flushing. Callers append their frame
	// to wbuf; the first one finding no flush under way becomes the
	// flusher and writes wbuf (and whatever others append meanwhile) to nc
	// until it is empty, so concurrent calls share write syscalls.
	writeMu  sync.Mutex
	wbuf     []byte // frames not yet handed to nc
	spare    []byte // the buffer last written, reused as the next wbuf
	flushing bool   // a caller is writing to nc; only it touches nc

	// mu guards nextID, pending and err.
	mu      sync.Mutex
	nextID  uint32
	pending map[uint32]*call
	err     error // set once the connection is dead; fails new calls

	readerDone chan struct{}

	// co coalesces concurrent Multi calls of gets (coalesce.go).
	co multiCoalescer
}

// dialConn connects to addr, secures the connection as sec says (TLS,
// Kerberos), sends the preamble and connection header and starts the
// reader goroutine. The connection lives until close or a read or write
// error, not until ctx ends.
func dialConn(ctx context.Context, addr, service, user string, maxFrame int, sec dialSecurity, onClose func(*conn)) (*conn, error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: dial %s: %w", ErrConnection, addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(dl)
	}
	nc, pre, user, err := sec.handshake(ctx, raw, addr, user)
	if err != nil {
		raw.Close()
		return nil, err
	}
	hdr, err := proto.Marshal(&pb.ConnectionHeader{
		UserInfo:            &pb.UserInformation{EffectiveUser: proto.String(user)},
		ServiceName:         proto.String(service),
		CellBlockCodecClass: proto.String(kvCodecClass),
	})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("hbase: encode connection header: %w", err)
	}
	pre = binary.BigEndian.AppendUint32(pre, uint32(len(hdr)))
	pre = append(pre, hdr...)
	if _, err := nc.Write(pre); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: %s: send connection header: %w", ErrConnection, addr, err)
	}
	_ = raw.SetDeadline(time.Time{})
	c := &conn{
		addr: addr, service: service, nc: nc, maxFrame: maxFrame, onClose: onClose, simple: sec.krb == nil,
		pending:    make(map[uint32]*call),
		readerDone: make(chan struct{}),
	}
	go c.readLoop()
	return c, nil
}

// readLoop owns reading nc. It ends when nc fails or is closed, and then
// fails every pending call.
func (c *conn) readLoop() {
	defer close(c.readerDone)
	r := bufio.NewReaderSize(c.nc, 64<<10)
	var lenBuf [4]byte
	for replied := false; ; replied = true {
		if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
			if !replied && c.simple && errors.Is(err, io.EOF) {
				// HBase 3.0 closes a connection that did not authenticate
				// where the cluster requires Kerberos, saying nothing
				// (2.x answers with an exception: connRefusal). A server
				// going down closes it the same way, so it stays a
				// connection error, retried; the message names both.
				c.fail(fmt.Errorf("%w: %s closed the connection before answering (a server going down does that, and so does HBase 3 to a client without Kerberos: does the cluster require Kerberos? see --hbase-kerberos-principal): %w", ErrConnection, c.addr, err))
				return
			}
			c.fail(fmt.Errorf("%w: %s: read: %w", ErrConnection, c.addr, err))
			return
		}
		n := binary.BigEndian.Uint32(lenBuf[:])
		if uint64(n) > uint64(c.maxFrame) {
			if looksLikeTLS(lenBuf[:]) {
				c.fail(fmt.Errorf("%w: %s answered with TLS: the cluster requires TLS, which the client was not configured for", ErrSecurity, c.addr))
				return
			}
			c.fail(protocolErrorf("%s: frame of %d bytes exceeds the limit of %d", c.addr, n, c.maxFrame))
			return
		}
		frame := make([]byte, n)
		if _, err := io.ReadFull(r, frame); err != nil {
			c.fail(fmt.Errorf("%w: %s: read frame of %d bytes: %w", ErrConnection, c.addr, n, err))
			return
		}
		resp, err := decodeResponse(frame)
		if err != nil {
			c.fail(fmt.Errorf("%s: %w", c.addr, err))
			return
		}
		id := resp.header.callID
		c.mu.Lock()
		cl := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if cl == nil {
			if ex := resp.header.exception; ex != nil && id == connCallID {
				c.fail(connRefusal(c.addr, newRemoteError(ex.GetExceptionClassName(), ex.GetStackTrace(), true)))
				return
			}
			// The caller gave up (ctx ended) before the reply came.
			continue
		}
		cl.finish(resp, nil)
	}
}

// fail marks the connection dead with err, closes the socket and fails all
// pending calls. Only the first error counts.
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	c.nc.Close()
	for _, cl := range pending {
		cl.finish(nil, err)
	}
	if c.onClose != nil {
		c.onClose(c)
	}
}

// close shuts the connection and waits for its reader to end.
func (c *conn) close() {
	c.fail(fmt.Errorf("%w: %s: connection closed by client", ErrConnection, c.addr))
	<-c.readerDone
}

// dead reports whether the connection has failed.
func (c *conn) dead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil
}

// call sends method(req) and decodes the reply into resp. It returns the
// cell block (if any) for the caller to decode. Exceptions come back as
// *RemoteError.
func (c *conn) call(ctx context.Context, method string, req, resp proto.Message) (*cellBlock, error) {
	return c.callCells(ctx, method, req, nil, resp)
}

// callCells is call with a request cell block (the cells of the Puts in
// req, which carry associated_cell_count instead of column values).
func (c *conn) callCells(ctx context.Context, method string, req proto.Message, cells []byte, resp proto.Message) (*cellBlock, error) {
	body, err := proto.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("hbase: encode %s: %w", method, err)
	}
	r, err := c.callRaw(ctx, method, body, cells)
	if err != nil {
		return nil, err
	}
	if err := proto.Unmarshal(r.body, resp); err != nil {
		return nil, fmt.Errorf("%s: %s reply: %w", c.addr, method, protocolErrorf("%v", err))
	}
	if r.cellBlock != nil {
		return &cellBlock{buf: r.cellBlock}, nil
	}
	return nil, nil
}

// callRaw sends method with an encoded request message (body) and cell
// block, and returns the reply, whose message is still encoded. Exceptions
// come back as *RemoteError.
func (c *conn) callRaw(ctx context.Context, method string, body, cells []byte) (*response, error) {
	var timeoutMs uint32
	if dl, ok := ctx.Deadline(); ok {
		timeoutMs = deadlineMs(dl)
	}
	cl, err := c.startCall(ctx, method, timeoutMs, body, cells, nil)
	if err != nil {
		return nil, err
	}
	select {
	case <-cl.done:
	case <-ctx.Done():
		c.forgetCall(cl)
		return nil, fmt.Errorf("hbase: %s %s: %w", c.addr, method, ctx.Err())
	}
	if cl.err != nil {
		return nil, cl.err
	}
	if ex := cl.resp.header.exception; ex != nil {
		return nil, newRemoteError(ex.GetExceptionClassName(), ex.GetStackTrace(), ex.GetDoNotRetry())
	}
	return cl.resp, nil
}

// deadlineMs is the RPC timeout HBase gets for a call due at dl: at least
// 1 ms, 0 (none) beyond int32 milliseconds.
func deadlineMs(dl time.Time) uint32 {
	ms := time.Until(dl).Milliseconds()
	if ms < 1 {
		ms = 1
	}
	if ms < int64(^uint32(0)>>1) {
		return uint32(ms)
	}
	return 0
}

// start registers a call and queues its frame without waiting for the
// reply or for any caller's ctx (the write has its own bound): the reply
// comes on the returned call's done, and onDone (if not nil) runs once
// after that.
func (c *conn) start(method string, timeoutMs uint32, body, cells []byte, onDone func()) (*call, error) {
	return c.startCall(context.Background(), method, timeoutMs, body, cells, onDone)
}

// startCall registers a call and writes its frame; ctx bounds the write.
func (c *conn) startCall(ctx context.Context, method string, timeoutMs uint32, body, cells []byte, onDone func()) (*call, error) {
	cl := &call{done: make(chan struct{}), onDone: onDone}
	if onDone != nil && timeoutMs > 0 {
		// Armed before the call is registered, so the reader never sees
		// the field change; it fires long after registration.
		wait := time.Duration(timeoutMs)*time.Millisecond + overdueGrace
		cl.overdue = time.AfterFunc(wait, func() {
			c.mu.Lock()
			late := c.pending != nil && c.pending[cl.id] == cl
			c.mu.Unlock()
			if late {
				c.fail(fmt.Errorf("%w: %s: no reply to %s call %d %v after its %d ms timeout", ErrConnection, c.addr, method, cl.id, overdueGrace, timeoutMs))
			}
		})
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		if cl.overdue != nil {
			cl.overdue.Stop()
		}
		return nil, err
	}
	c.nextID++
	id := c.nextID
	cl.id = id
	c.pending[id] = cl
	c.mu.Unlock()
	if err := c.write(ctx, id, method, timeoutMs, body, cells); err != nil {
		c.forgetCall(cl)
		return nil, err
	}
	return cl, nil
}

// forgetCall drops cl from the pending calls (its caller gave up). Its
// reply, if it still comes, is discarded.
func (c *conn) forgetCall(cl *call) {
	c.mu.Lock()
	if c.pending != nil && c.pending[cl.id] == cl {
		delete(c.pending, cl.id)
	}
	c.mu.Unlock()
}

// maxWriteWait bounds one write to the socket when the flushing caller's
// ctx has no deadline (a server that stops reading must not hang callers).
const maxWriteWait = time.Minute

// write queues one call frame and, unless another caller is already
// writing, writes the queue to the socket. A failed write kills the
// connection (the stream is out of step), which fails every pending call,
// also those whose frames another caller was writing.
func (c *conn) write(ctx context.Context, id uint32, method string, timeoutMs uint32, body, cells []byte) error {
	c.writeMu.Lock()
	c.wbuf = appendRequest(c.wbuf, id, method, timeoutMs, body, cells)
	if c.flushing {
		c.writeMu.Unlock()
		return nil
	}
	c.flushing = true
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) < time.Second {
		// Others' frames may be in this write: do not let a caller with
		// a nearly spent deadline cut the connection under them.
		dl = time.Now().Add(maxWriteWait)
	}
	_ = c.nc.SetWriteDeadline(dl)
	for len(c.wbuf) > 0 {
		buf := c.wbuf
		c.wbuf = c.spare[:0]
		c.spare = nil
		c.writeMu.Unlock()
		_, err := c.nc.Write(buf)
		c.writeMu.Lock()
		if cap(buf) <= 1<<20 {
			c.spare = buf // do not pin a huge buffer after one big Multi
		}
		if err != nil {
			// Still flushing: nobody else writes to the broken stream
			// while fail marks the connection dead and fails the calls.
			c.writeMu.Unlock()
			werr := fmt.Errorf("%w: %s: write: %w", ErrConnection, c.addr, err)
			c.fail(werr)
			c.writeMu.Lock()
			c.flushing = false
			c.wbuf = c.wbuf[:0]
			c.writeMu.Unlock()
			return werr
		}
	}
	c.flushing = false
	c.writeMu.Unlock()
	return nil
}
