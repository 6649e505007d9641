package hbase

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// SASL GSSAPI in HBase's connection preamble (HBaseSaslRpcClient,
// NettyHBaseSaslRpcClientHandler and SaslChallengeDecoder on the Java side):
//
//	client: "HBas" 0x00 0x51 (auth KERBEROS)
//	client: uint32 len, token          (initial GSS token: AP-REQ)
//	server: uint32 status              (0 success, else an error follows)
//	        success: uint32 len, token (AP-REP), or len -88: use SIMPLE
//	        error:   uint32 len, exception class, uint32 len, message
//	client: uint32 0                   (GSS context established, empty token)
//	server: status, len, token         (wrapped: offered layers, max buffer)
//	client: uint32 len, token          (wrapped: chosen layer, max buffer)
//
// Then the connection header and calls follow, raw when the chosen layer is
// authentication only, else each write as uint32 len, wrap token, and
// each reply the same way.

// authKerberos is the preamble's auth byte for SASL GSSAPI.
const authKerberos = 0x51

// switchToSimple is the length a server not using Kerberos answers with.
const switchToSimple = -88

// maxSASLToken bounds a handshake token or wrapped message from the server
// (HBase's own client allows 1 MiB for challenges).
const maxSASLToken = 1 << 20

// SASL GSSAPI security layers (RFC 4752 3.3).
const (
	layerNone      = 1
	layerIntegrity = 2
	layerPrivacy   = 4
)

// saslTokens carries the tokens of one SASL exchange: HBase's preamble
// framing (hbaseTokens) or ZooKeeper's sasl requests (zkTokens).
type saslTokens interface {
	// send sends the client's next token (nil: an empty one).
	send(tok []byte) error
	// recv reads the server's next token.
	recv() ([]byte, error)
}

// saslGSSAPI runs the initiator's side of SASL GSSAPI (RFC 4752) over t,
// authenticating a's principal to the server on host whose principal is
// spnTemplate (_HOST standing for host): the initial token and the
// acceptor's AP-REP, an empty token, the wrapped security layer offer, and
// the wrapped choice that pick makes from the offered layers (an error
// refuses the offer). It returns the context, the layer chosen and the
// server's largest wrapped message.
func saslGSSAPI(t saslTokens, a *kerberosAuth, spnTemplate, host string, pick func(offered byte) (byte, error)) (*gssContext, byte, int, error) {
	spn, tkt, key, err := a.serviceTicket(spnTemplate, host)
	if err != nil {
		return nil, 0, 0, err
	}
	tok, g, err := initialToken(tkt, key, a.cl.Credentials.Domain(), a.cl.Credentials.CName())
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%w: %w", ErrSecurity, err)
	}
	if err := t.send(tok); err != nil {
		return nil, 0, 0, err
	}
	rep, err := t.recv()
	if err != nil {
		return nil, 0, 0, err
	}
	if err := g.acceptReply(rep); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: %s: %w", ErrSecurity, spn, err)
	}
	if err := t.send(nil); err != nil {
		return nil, 0, 0, err
	}
	offerTok, err := t.recv()
	if err != nil {
		return nil, 0, 0, err
	}
	offer, err := g.unwrap(offerTok)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%w: %s: security layer offer: %w", ErrSecurity, spn, err)
	}
	if len(offer) != 4 {
		return nil, 0, 0, fmt.Errorf("%w: %s: security layer offer of %d bytes", ErrSecurity, spn, len(offer))
	}
	layer, err := pick(offer[0])
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%w: %s %w", ErrSecurity, spn, err)
	}
	serverMax := int(offer[1])<<16 | int(offer[2])<<8 | int(offer[3])
	// Our own receive limit is maxSASLToken; no authorization id (the
	// effective user is the principal itself).
	reply, err := g.wrap([]byte{layer, byte(maxSASLToken >> 16 & 0xff), byte(maxSASLToken >> 8 & 0xff), byte(maxSASLToken & 0xff)}, false)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%w: %w", ErrSecurity, err)
	}
	if err := t.send(reply); err != nil {
		return nil, 0, 0, err
	}
	return g, layer, serverMax, nil
}

// hbaseTokens is the SASL framing of HBase's connection preamble.
type hbaseTokens struct {
	rw  *bufio.ReadWriter
	spn string // for errors
}

func (h hbaseTokens) send(tok []byte) error { return writeToken(h.rw, tok) }
func (h hbaseTokens) recv() ([]byte, error) { return readChallenge(h.rw, h.spn) }

// saslHandshake authenticates nc (the preamble already sent) to the server
// on host and returns the connection to use from then on (nc itself or one
// that wraps every message) and the protection chosen.
func saslHandshake(rw *bufio.ReadWriter, nc net.Conn, host string, a *kerberosAuth) (net.Conn, Protection, error) {
	var prot Protection
	pick := func(offered byte) (byte, error) {
		var layer byte
		layer, prot = chooseLayer(offered, a.cfg.MinProtection, a.cfg.MaxProtection)
		if layer == 0 {
			return 0, fmt.Errorf("offers %s (hbase.rpc.protection of the cluster), the client takes %s to %s",
				offeredNames(offered), a.cfg.MinProtection, a.cfg.MaxProtection)
		}
		return layer, nil
	}
	spn := a.servicePrincipal(a.cfg.ServicePrincipal, host)
	g, layer, serverMax, err := saslGSSAPI(hbaseTokens{rw: rw, spn: spn}, a, a.cfg.ServicePrincipal, host, pick)
	if err != nil {
		return nil, 0, err
	}
	if layer == layerNone {
		return &bufConn{Conn: nc, r: rw.Reader}, prot, nil
	}
	return newSASLConn(nc, rw.Reader, g, layer == layerPrivacy, serverMax), prot, nil
}

// chooseLayer picks the strongest layer in offered between min and max, or
// 0.
func chooseLayer(offered byte, min, max Protection) (byte, Protection) {
	for _, c := range []struct {
		layer byte
		prot  Protection
	}{{layerPrivacy, ProtectPrivacy}, {layerIntegrity, ProtectIntegrity}, {layerNone, ProtectAuthentication}} {
		if offered&c.layer != 0 && c.prot >= min && c.prot <= max {
			return c.layer, c.prot
		}
	}
	return 0, 0
}

// offeredNames names the layers in offered, for errors.
func offeredNames(offered byte) string {
	var s string
	for _, c := range []struct {
		layer byte
		name  string
	}{{layerNone, "authentication"}, {layerIntegrity, "integrity"}, {layerPrivacy, "privacy"}} {
		if offered&c.layer != 0 {
			if s != "" {
				s += ","
			}
			s += c.name
		}
	}
	if s == "" {
		return "no security layer"
	}
	return s
}

// writeToken sends one handshake token (uint32 length, bytes) and flushes.
func writeToken(rw *bufio.ReadWriter, tok []byte) error {
	var l [4]byte
	binary.BigEndian.PutUint32(l[:], uint32(len(tok)))
	_, _ = rw.Write(l[:])
	_, _ = rw.Write(tok)
	if err := rw.Flush(); err != nil {
		return fmt.Errorf("%w: SASL write: %w", ErrConnection, err)
	}
	return nil
}

// readChallenge reads one server handshake message: a token, or the
// server's exception (as ErrSecurity), or its request to fall back to
// SIMPLE (ErrSecurity: the client was configured for Kerberos).
func readChallenge(r *bufio.ReadWriter, spn string) ([]byte, error) {
	status, err := readInt32(r)
	if err != nil {
		return nil, err
	}
	if status != 0 {
		class, err1 := readSASLString(r)
		msg, err2 := readSASLString(r)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s refused the Kerberos authentication: %w", ErrSecurity, spn, newRemoteError(class, msg, true))
	}
	n, err := readInt32(r)
	if err != nil {
		return nil, err
	}
	if n == switchToSimple {
		return nil, fmt.Errorf("%w: the server does not use Kerberos (it asked for SIMPLE authentication) but the client was configured for it; drop the Kerberos settings for this cluster", ErrSecurity)
	}
	if n < 0 || n > maxSASLToken {
		return nil, protocolErrorf("SASL token of %d bytes", n)
	}
	tok := make([]byte, n)
	if _, err := io.ReadFull(r, tok); err != nil {
		return nil, fmt.Errorf("%w: SASL read: %w", ErrConnection, err)
	}
	return tok, nil
}

// readInt32 reads a big-endian int32. A connection closed here, during the
// handshake, is reported with what usually causes it.
func readInt32(r io.Reader) (int32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, fmt.Errorf("%w: the server closed the connection during the Kerberos handshake (does the cluster use TLS? see --hbase-tls): %w", ErrSecurity, err)
		}
		return 0, fmt.Errorf("%w: SASL read: %w", ErrConnection, err)
	}
	return int32(binary.BigEndian.Uint32(b[:])), nil
}

// readSASLString reads Hadoop's WritableUtils string as HBase's SASL error
// carries it: uint32 length, UTF-8 bytes.
func readSASLString(r io.Reader) (string, error) {
	n, err := readInt32(r)
	if err != nil {
		return "", err
	}
	if n < 0 || n > maxSASLToken {
		return "", protocolErrorf("SASL error string of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("%w: SASL read: %w", ErrConnection, err)
	}
	return string(b), nil
}

// bufConn reads nc through the reader that read its handshake, so that
// nothing read ahead is lost.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// saslConn wraps every write as one or more GSSAPI wrap tokens and unwraps
// what it reads. Reads come from one goroutine (the conn's reader) and
// writes from one at a time (its flusher), each with its own state.
type saslConn struct {
	net.Conn
	r       *bufio.Reader // nc's, holding what the handshake read ahead
	g       *gssContext
	seal    bool
	maxSend int // plaintext bytes per token

	rbuf []byte // unwrapped bytes not yet read

	wmu  sync.Mutex // guards wbuf
	wbuf []byte
}

// newSASLConn wraps nc. serverMax is the server's receive limit for a
// wrapped message (0: none stated).
func newSASLConn(nc net.Conn, r *bufio.Reader, g *gssContext, seal bool, serverMax int) *saslConn {
	// A token adds a 16-byte header, a 16-byte header copy, a confounder
	// and a checksum to its plaintext: 128 bytes covers every etype.
	maxSend := 64 << 10
	if serverMax > 256 && serverMax-128 < maxSend {
		maxSend = serverMax - 128
	}
	return &saslConn{Conn: nc, r: r, g: g, seal: seal, maxSend: maxSend}
}

// Read returns unwrapped bytes, reading the next token when none are left.
func (s *saslConn) Read(p []byte) (int, error) {
	for len(s.rbuf) == 0 {
		var l [4]byte
		if _, err := io.ReadFull(s.r, l[:]); err != nil {
			return 0, err
		}
		n := binary.BigEndian.Uint32(l[:])
		if n > maxSASLToken*256 {
			return 0, protocolErrorf("wrapped message of %d bytes", n)
		}
		tok := make([]byte, n)
		if _, err := io.ReadFull(s.r, tok); err != nil {
			return 0, err
		}
		msg, err := s.g.unwrap(tok)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrSecurity, err)
		}
		s.rbuf = msg
	}
	n := copy(p, s.rbuf)
	s.rbuf = s.rbuf[n:]
	return n, nil
}

// Write wraps p in tokens of at most maxSend bytes of plaintext and writes
// them in one write to the socket.
func (s *saslConn) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.wbuf = s.wbuf[:0]
	for off := 0; off < len(p); {
		end := min(off+s.maxSend, len(p))
		tok, err := s.g.wrap(p[off:end], s.seal)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrSecurity, err)
		}
		s.wbuf = binary.BigEndian.AppendUint32(s.wbuf, uint32(len(tok)))
		s.wbuf = append(s.wbuf, tok...)
		off = end
	}
	if _, err := s.Conn.Write(s.wbuf); err != nil {
		return 0, err
	}
	if cap(s.wbuf) > 4<<20 {
		s.wbuf = nil // do not pin the buffer of one huge write
	}
	return len(p), nil
}
