package hbase

import (
	"encoding/binary"
	"fmt"
	"io"
)

// ZooKeeper's client protocol, the part a one-shot read of a znode needs:
// the jute records of zookeeper.jute, each message framed as ClientCnxn
// frames it (all integers big-endian):
//
//	frame            int32 length, then the message
//	buffer, ustring  int32 length (-1: null), then the bytes
//	ConnectRequest   int32 protocolVersion, int64 lastZxidSeen, int32 timeOut,
//	                 int64 sessionId, buffer passwd, bool readOnly
//	ConnectResponse  int32 protocolVersion, int32 timeOut, int64 sessionId,
//	                 buffer passwd, bool readOnly (absent before 3.4)
//	request          RequestHeader{int32 xid, int32 type}, then its record
//	reply            ReplyHeader{int32 xid, int64 zxid, int32 err}, then
//	                 its record when err is 0
//	GetData (4)      GetDataRequest{ustring path, bool watch}
//	                 GetDataResponse{buffer data, Stat (68 bytes)}
//	sasl (102)       GetSASLRequest{buffer token}, SetSASLResponse{buffer token}
//	closeSession (-11) no record either way
//
// A reply with xid -1 is a watch notification, which a client that sets no
// watches does not get; it is skipped all the same.

// ZooKeeper's request types (ZooDefs.OpCode).
const (
	zkOpGetData      = 4
	zkOpSASL         = 102
	zkOpCloseSession = -11
)

// zkNotificationXid is the xid of a watch notification.
const zkNotificationXid = -1

// ZooKeeper's error codes (KeeperException.Code) the client tells apart.
const (
	zkErrNoNode         = -101
	zkErrNoAuth         = -102
	zkErrSessionExpired = -112
	zkErrAuthFailed     = -115
	// zkErrRequireSASL (SESSIONCLOSEDREQUIRESASLAUTH) answers a request
	// from a client that has not authenticated by SASL, or whose SASL
	// authentication failed, on a ZooKeeper that enforces it; the server
	// then closes the connection.
	zkErrRequireSASL = -124
)

// zkErrName names a ZooKeeper error code for messages.
func zkErrName(code int32) string {
	switch code {
	case zkErrNoNode:
		return "NONODE"
	case zkErrNoAuth:
		return "NOAUTH"
	case zkErrSessionExpired:
		return "SESSIONEXPIRED"
	case zkErrAuthFailed:
		return "AUTHFAILED"
	case zkErrRequireSASL:
		return "SESSIONCLOSEDREQUIRESASLAUTH"
	}
	return fmt.Sprintf("error %d", code)
}

// zkMaxFrame bounds a frame from ZooKeeper: its servers refuse znodes
// over jute.maxbuffer (1 MiB by default), and a longer length is garbage.
const zkMaxFrame = 4 << 20

// zkStatLen is the size of a Stat record: six int64 and five int32.
const zkStatLen = 6*8 + 5*4

// zkConnectResponse is a ConnectResponse.
type zkConnectResponse struct {
	ProtocolVersion int32
	Timeout         int32 // negotiated session timeout, ms; <= 0: no session
	SessionID       int64
	Passwd          []byte // nil when the server sent a null buffer
	ReadOnly        bool
	HasReadOnly     bool // the server sent the readOnly flag
}

// zkReplyHeader is a ReplyHeader.
type zkReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  int32
}

// appendZKBuffer appends v as a jute buffer (nil as the null buffer).
func appendZKBuffer(b, v []byte) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(b, 0xffffffff)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

// readZKBuffer reads a jute buffer from the front of b: nil for the null
// buffer, else a copy (never nil, possibly empty).
func readZKBuffer(b []byte) ([]byte, []byte, error) {
	if len(b) < 4 {
		return nil, nil, protocolErrorf("zookeeper: buffer length cut off (%d bytes)", len(b))
	}
	n := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	switch {
	case n == -1:
		return nil, b, nil
	case n < 0 || int64(n) > int64(len(b)):
		return nil, nil, protocolErrorf("zookeeper: buffer of %d bytes in %d", n, len(b))
	}
	return append([]byte{}, b[:n]...), b[n:], nil
}

// zkFrame prepends the length to msg.
func zkFrame(msg []byte) []byte {
	return append(binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(msg)), uint32(len(msg))), msg...)
}

// readZKFrame reads one frame and returns its message.
func readZKFrame(r io.Reader) ([]byte, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(l[:]))
	if n < 0 || n > zkMaxFrame {
		return nil, protocolErrorf("zookeeper: frame of %d bytes", n)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(r, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// encodeZKConnectRequest is the framed ConnectRequest of a new session
// asking for a session timeout of timeoutMs: protocol version 0, no zxid
// seen, no session id, an all-zero password as Java's client sends, not
// read-only.
func encodeZKConnectRequest(timeoutMs int32) []byte {
	b := make([]byte, 0, 48)
	b = binary.BigEndian.AppendUint32(b, 0) // protocolVersion
	b = binary.BigEndian.AppendUint64(b, 0) // lastZxidSeen
	b = binary.BigEndian.AppendUint32(b, uint32(timeoutMs))
	b = binary.BigEndian.AppendUint64(b, 0) // sessionId
	b = appendZKBuffer(b, make([]byte, 16))
	b = append(b, 0) // readOnly
	return zkFrame(b)
}

// decodeZKConnectResponse decodes a ConnectResponse message. Bytes after
// the readOnly flag are ignored, as Java's client does, for fields later
// versions may add.
func decodeZKConnectResponse(msg []byte) (zkConnectResponse, error) {
	var r zkConnectResponse
	if len(msg) < 16 {
		return r, protocolErrorf("zookeeper: connect response of %d bytes", len(msg))
	}
	r.ProtocolVersion = int32(binary.BigEndian.Uint32(msg[0:4]))
	r.Timeout = int32(binary.BigEndian.Uint32(msg[4:8]))
	r.SessionID = int64(binary.BigEndian.Uint64(msg[8:16]))
	passwd, rest, err := readZKBuffer(msg[16:])
	if err != nil {
		return zkConnectResponse{}, fmt.Errorf("connect response password: %w", err)
	}
	r.Passwd = passwd
	if len(rest) > 0 {
		r.HasReadOnly, r.ReadOnly = true, rest[0] != 0
	}
	return r, nil
}

// encodeZKRequest is the framed request xid of type op with its record.
func encodeZKRequest(xid, op int32, record []byte) []byte {
	b := make([]byte, 0, 8+len(record))
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, uint32(op))
	return zkFrame(append(b, record...))
}

// encodeZKGetData is a GetDataRequest record for path, without a watch.
func encodeZKGetData(path string) []byte {
	return append(appendZKBuffer(nil, []byte(path)), 0)
}

// decodeZKReply splits a reply message into its header and record.
func decodeZKReply(msg []byte) (zkReplyHeader, []byte, error) {
	if len(msg) < 16 {
		return zkReplyHeader{}, nil, protocolErrorf("zookeeper: reply of %d bytes", len(msg))
	}
	h := zkReplyHeader{
		Xid:  int32(binary.BigEndian.Uint32(msg[0:4])),
		Zxid: int64(binary.BigEndian.Uint64(msg[4:12])),
		Err:  int32(binary.BigEndian.Uint32(msg[12:16])),
	}
	return h, msg[16:], nil
}

// decodeZKGetData decodes a GetDataResponse record: the znode's data (the
// Stat after it is checked for length and dropped).
func decodeZKGetData(record []byte) ([]byte, error) {
	data, rest, err := readZKBuffer(record)
	if err != nil {
		return nil, fmt.Errorf("get data response: %w", err)
	}
	if len(rest) != zkStatLen {
		return nil, protocolErrorf("zookeeper: get data response's stat of %d bytes, want %d", len(rest), zkStatLen)
	}
	return data, nil
}

// decodeZKSASL decodes a SetSASLResponse record: the server's token.
func decodeZKSASL(record []byte) ([]byte, error) {
	tok, rest, err := readZKBuffer(record)
	if err != nil {
		return nil, fmt.Errorf("sasl response: %w", err)
	}
	if len(rest) != 0 {
		return nil, protocolErrorf("zookeeper: %d bytes after the sasl response's token", len(rest))
	}
	return tok, nil
}
