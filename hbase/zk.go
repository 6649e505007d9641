package hbase

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// ServerName identifies one HBase server process: host, RPC port and start
// code (which changes on every restart).
type ServerName struct {
	Host      string
	Port      int
	StartCode uint64
}

// Addr is host:port for dialing.
func (s ServerName) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// String is HBase's own spelling: host,port,startcode.
func (s ServerName) String() string { return fmt.Sprintf("%s,%d,%d", s.Host, s.Port, s.StartCode) }

// HBase writes its znodes as:
//
//	0xFF                       magic
//	uint32 idLen, id           big-endian; the writer's identifier
//	"PBUF"                     protobuf marker
//	protobuf message           MetaRegionServer or Master
const znodeMagic = 0xFF

// parseZnode strips the znode envelope and returns the protobuf payload.
func parseZnode(data []byte) ([]byte, error) {
	if len(data) < 5 || data[0] != znodeMagic {
		return nil, protocolErrorf("znode: missing magic byte 0xFF (%d bytes)", len(data))
	}
	idLen := uint64(binary.BigEndian.Uint32(data[1:5]))
	rest := data[5:]
	if idLen > uint64(len(rest)) {
		return nil, protocolErrorf("znode: id of %d bytes overruns %d", idLen, len(rest))
	}
	rest = rest[idLen:]
	if !bytes.HasPrefix(rest, []byte("PBUF")) {
		return nil, protocolErrorf("znode: no PBUF marker")
	}
	return rest[4:], nil
}

// parseMasterZnode decodes /hbase/master.
func parseMasterZnode(data []byte) (ServerName, error) {
	var m pb.Master
	if err := unmarshalZnode(data, &m, "master"); err != nil {
		return ServerName{}, err
	}
	return serverName(m.GetMaster())
}

// parseMetaZnode decodes /hbase/meta-region-server.
func parseMetaZnode(data []byte) (ServerName, error) {
	var m pb.MetaRegionServer
	if err := unmarshalZnode(data, &m, "meta"); err != nil {
		return ServerName{}, err
	}
	return serverName(m.GetServer())
}

// unmarshalZnode decodes the protobuf message m of a znode's data (what
// names the znode in errors).
func unmarshalZnode(data []byte, m proto.Message, what string) error {
	payload, err := parseZnode(data)
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(payload, m); err != nil {
		return protocolErrorf("%s znode: %v", what, err)
	}
	return nil
}

func serverName(s *pb.ServerName) (ServerName, error) {
	if s.GetHostName() == "" || s.GetPort() == 0 || s.GetPort() > 65535 {
		return ServerName{}, protocolErrorf("server name %q port %d invalid", s.GetHostName(), s.GetPort())
	}
	return ServerName{Host: s.GetHostName(), Port: int(s.GetPort()), StartCode: s.GetStartCode()}, nil
}

// zkLookup reads one znode, asking the quorum's members in turn until one
// answers. It opens a ZooKeeper session per lookup: they are rare (start,
// master or meta moved), and a session kept open would be one more
// goroutine, ping loop and reconnect to own for nothing. With krb the
// session authenticates by SASL GSSAPI before the read (unless
// krb.cfg.ZooKeeperPlain).
func zkLookup(ctx context.Context, quorum []string, root, node string, krb *kerberosAuth, log *slog.Logger) ([]byte, error) {
	timeout := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), 100*time.Millisecond)
	}
	// hint says, for a ZooKeeper that requires SASL, why the client did
	// not authenticate.
	hint := "(does the cluster require Kerberos? see --hbase-kerberos-principal)"
	if krb != nil && krb.cfg.ZooKeeperPlain {
		krb, hint = nil, "(the client has Kerberos but reads ZooKeeper without SASL: drop --hbase-zk-sasl=false)"
	}
	path := root + node
	var errs []error
	first := rand.IntN(len(quorum)) // spread lookups over the members
	for i := range quorum {
		addr := quorum[(first+i)%len(quorum)]
		data, err := zkGet(ctx, addr, path, krb, hint, timeout)
		if err == nil {
			return data, nil
		}
		// A refusal or an answer is the quorum's, not one member's.
		if !errors.Is(err, errZKUnreachable) || ctx.Err() != nil {
			return nil, err
		}
		log.Debug("zookeeper member unreachable", "addr", addr, "err", err)
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("%w: zookeeper %v: %w", ErrConnection, quorum, errors.Join(errs...))
}

// errZKUnreachable marks a ZooKeeper member that could not be reached or
// dropped the connection: the next member may answer.
var errZKUnreachable = errors.New("unreachable")

// zkSession is one ZooKeeper connection, used by one goroutine.
type zkSession struct {
	nc   net.Conn
	r    *bufio.Reader
	addr string
	xid  int32
}

// zkGet reads path from the ZooKeeper member at addr, authenticating with
// krb unless it is nil (hint then says why, should the member require
// it).
func zkGet(ctx context.Context, addr, path string, krb *kerberosAuth, hint string, timeout time.Duration) ([]byte, error) {
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: zookeeper %s: %w: %w", ErrConnection, addr, errZKUnreachable, err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(timeout))
	// A cancelled ctx ends a blocked read or write at once.
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	z := &zkSession{nc: nc, r: bufio.NewReader(nc), addr: addr}
	if err := z.connect(timeout); err != nil {
		return nil, z.ctxErr(ctx, err)
	}
	if krb != nil {
		if err := z.authenticate(ctx, krb); err != nil {
			return nil, z.ctxErr(ctx, err)
		}
	}
	data, err := z.getData(path, krb != nil, hint)
	if err != nil {
		return nil, z.ctxErr(ctx, err)
	}
	z.close()
	return data, nil
}

// ctxErr is err, or ctx's error when ctx ended the exchange.
func (z *zkSession) ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: zookeeper %s: %w", ErrConnection, z.addr, ctx.Err())
	}
	return err
}

// ioErr is an I/O error of the exchange with the member.
func (z *zkSession) ioErr(what string, err error) error {
	if errors.Is(err, ErrProtocol) {
		return fmt.Errorf("zookeeper %s: %s: %w", z.addr, what, err)
	}
	return fmt.Errorf("%w: zookeeper %s: %s: %w: %w", ErrConnection, z.addr, what, errZKUnreachable, err)
}

// connect opens a session.
func (z *zkSession) connect(timeout time.Duration) error {
	if _, err := z.nc.Write(encodeZKConnectRequest(int32(max(timeout, 30*time.Second) / time.Millisecond))); err != nil {
		return z.ioErr("connect", err)
	}
	msg, err := readZKFrame(z.r)
	if err != nil {
		return z.ioErr("connect", err)
	}
	resp, err := decodeZKConnectResponse(msg)
	if err != nil {
		return z.ioErr("connect", err)
	}
	if resp.Timeout <= 0 {
		return fmt.Errorf("%w: zookeeper %s: no session (timeout %d): %w", ErrConnection, z.addr, resp.Timeout, errZKUnreachable)
	}
	return nil
}

// call sends the request op with record and returns its reply's header and
// record.
func (z *zkSession) call(op int32, record []byte) (zkReplyHeader, []byte, error) {
	z.xid++
	if _, err := z.nc.Write(encodeZKRequest(z.xid, op, record)); err != nil {
		return zkReplyHeader{}, nil, z.ioErr("send", err)
	}
	for {
		msg, err := readZKFrame(z.r)
		if err != nil {
			return zkReplyHeader{}, nil, z.ioErr("read", err)
		}
		h, rec, err := decodeZKReply(msg)
		if err != nil {
			return h, nil, z.ioErr("read", err)
		}
		switch h.Xid {
		case z.xid:
			return h, rec, nil
		case zkNotificationXid:
			continue
		}
		return h, nil, z.ioErr("read", protocolErrorf("zookeeper: reply to xid %d, want %d", h.Xid, z.xid))
	}
}

// authenticate runs SASL GSSAPI as krb's principal to the member's
// principal.
func (z *zkSession) authenticate(ctx context.Context, krb *kerberosAuth) error {
	host := zkHostName(ctx, z.addr)
	spn := krb.servicePrincipal(krb.cfg.ZooKeeperPrincipal, host)
	t := &zkTokens{z: z, spn: spn, who: krb.principal()}
	// ZooKeeper never wraps its messages: it offers authentication only
	// (its SASL server takes the default quality of protection).
	pick := func(offered byte) (byte, error) {
		if offered&layerNone == 0 {
			return 0, fmt.Errorf("offers %s, and ZooKeeper's protocol has no security layer", offeredNames(offered))
		}
		return layerNone, nil
	}
	if _, _, _, err := saslGSSAPI(t, krb, krb.cfg.ZooKeeperPrincipal, host, pick); err != nil {
		return err
	}
	// The server's answer to the chosen layer completes the exchange.
	_, err := t.recv()
	return err
}

// zkTokens carries SASL tokens in ZooKeeper's sasl requests.
type zkTokens struct {
	z        *zkSession
	spn, who string // for errors
	pending  []byte // the token sent, whose reply recv reads
	replies  int
}

func (t *zkTokens) send(tok []byte) error {
	if tok == nil {
		tok = []byte{}
	}
	t.pending = tok
	return nil
}

// recv sends the pending token and reads the server's answer: ZooKeeper
// answers each token, so the exchange is one call per token.
func (t *zkTokens) recv() ([]byte, error) {
	h, rec, err := t.z.call(zkOpSASL, appendZKBuffer(nil, t.pending))
	if err != nil {
		if t.replies == 0 && errors.Is(err, io.EOF) {
			// ZooKeeper before 3.6 closes the session, saying nothing,
			// when it cannot accept the ticket; a member going down does
			// the same, so it stays a connection error, retried, that
			// names the likelier cause.
			return nil, fmt.Errorf("zookeeper %s closed the session on the Kerberos (SASL GSSAPI) authentication of %s to %s instead of answering (is %s ZooKeeper's principal?): %w",
				t.z.addr, t.who, t.spn, t.spn, err)
		}
		return nil, err
	}
	t.replies++
	if h.Err != 0 {
		return nil, fmt.Errorf("%w: zookeeper %s refused the Kerberos (SASL GSSAPI) authentication of %s to %s (%s): is %s ZooKeeper's principal (its JAAS Server section)?",
			ErrSecurity, t.z.addr, t.who, t.spn, zkErrName(h.Err), t.spn)
	}
	tok, err := decodeZKSASL(rec)
	if err != nil {
		return nil, t.z.ioErr("sasl", err)
	}
	if t.replies == 1 && len(tok) == 0 {
		// What a server without a SASL login answers (it has no
		// SASL server to evaluate the token with).
		return nil, fmt.Errorf("%w: zookeeper %s answered the Kerberos authentication with nothing: it has no SASL login (no JAAS Server section); read it without SASL (--hbase-zk-sasl=false)", ErrSecurity, t.z.addr)
	}
	return tok, nil
}

// getData reads path. authenticated says whether the session authenticated
// by SASL, and hint why not, for errors.
func (z *zkSession) getData(path string, authenticated bool, hint string) ([]byte, error) {
	h, rec, err := z.call(zkOpGetData, encodeZKGetData(path))
	if err != nil {
		return nil, err
	}
	switch h.Err {
	case 0:
		data, err := decodeZKGetData(rec)
		if err != nil {
			return nil, z.ioErr("get "+path, err)
		}
		return data, nil
	case zkErrRequireSASL:
		if !authenticated {
			return nil, fmt.Errorf("%w: zookeeper %s requires SASL (Kerberos) authentication and closed the session %s", ErrSecurity, z.addr, hint)
		}
		return nil, fmt.Errorf("%w: zookeeper %s refused %s after its SASL authentication (%s)", ErrSecurity, z.addr, path, zkErrName(h.Err))
	case zkErrNoAuth, zkErrAuthFailed:
		return nil, fmt.Errorf("%w: zookeeper %s refused reading %s (%s): its ACL does not let this client read it", ErrSecurity, z.addr, path, zkErrName(h.Err))
	case zkErrNoNode:
		return nil, fmt.Errorf("%w: zookeeper %s: no znode %s (HBase not up yet, or another zookeeper.znode.parent)", ErrConnection, z.addr, path)
	}
	return nil, fmt.Errorf("%w: zookeeper %s: get %s: %s", ErrConnection, z.addr, path, zkErrName(h.Err))
}

// close ends the session, so that the server drops it now rather than
// after its timeout; its answer is waited for briefly and not checked.
func (z *zkSession) close() {
	_ = z.nc.SetDeadline(time.Now().Add(time.Second))
	_, _, _ = z.call(zkOpCloseSession, nil)
}

// zkHostName is the host of addr as _HOST in ZooKeeper's principal: the
// host as given, or for an IP address its name by reverse lookup (as
// ZooKeeper's Java client canonicalizes it), else the address itself.
func zkHostName(ctx context.Context, addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if net.ParseIP(host) == nil {
		return host
	}
	names, err := net.DefaultResolver.LookupAddr(ctx, host)
	if err != nil || len(names) == 0 || strings.TrimSuffix(names[0], ".") == "" {
		return host
	}
	return strings.TrimSuffix(names[0], ".")
}
