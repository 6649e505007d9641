package hbase

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
)

// encodeZKConnectResponse is the ConnectResponse message r, as a server
// writes it.
func encodeZKConnectResponse(r zkConnectResponse) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(r.ProtocolVersion))
	b = binary.BigEndian.AppendUint32(b, uint32(r.Timeout))
	b = binary.BigEndian.AppendUint64(b, uint64(r.SessionID))
	b = appendZKBuffer(b, r.Passwd)
	if r.HasReadOnly {
		ro := byte(0)
		if r.ReadOnly {
			ro = 1
		}
		b = append(b, ro)
	}
	return b
}

// encodeZKReplyHeader is the ReplyHeader h.
func encodeZKReplyHeader(h zkReplyHeader) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(h.Xid))
	b = binary.BigEndian.AppendUint64(b, uint64(h.Zxid))
	return binary.BigEndian.AppendUint32(b, uint32(h.Err))
}

func TestZKConnectRequestLayout(t *testing.T) {
	got := encodeZKConnectRequest(30000)
	want := []byte{
		0, 0, 0, 45, // frame length
		0, 0, 0, 0, // protocolVersion
		0, 0, 0, 0, 0, 0, 0, 0, // lastZxidSeen
		0, 0, 0x75, 0x30, // timeOut 30000
		0, 0, 0, 0, 0, 0, 0, 0, // sessionId
		0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // passwd
		0, // readOnly
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("connect request\n got %x\nwant %x", got, want)
	}
	req := encodeZKRequest(7, zkOpGetData, encodeZKGetData("/hbase/master"))
	want = append([]byte{0, 0, 0, 8 + 4 + 13 + 1, 0, 0, 0, 7, 0, 0, 0, 4, 0, 0, 0, 13}, "/hbase/master\x00"...)
	if !bytes.Equal(req, want) {
		t.Fatalf("get data request\n got %x\nwant %x", req, want)
	}
	closeReq := encodeZKRequest(8, zkOpCloseSession, nil)
	if want := []byte{0, 0, 0, 8, 0, 0, 0, 8, 0xff, 0xff, 0xff, 0xf5}; !bytes.Equal(closeReq, want) {
		t.Fatalf("close request %x, want %x", closeReq, want)
	}
}

func TestZKDecodeErrors(t *testing.T) {
	stat := make([]byte, zkStatLen)
	for name, tc := range map[string]struct {
		decode func() error
	}{
		"connect response cut": {func() error { _, err := decodeZKConnectResponse(make([]byte, 15)); return err }},
		"password overruns": {func() error {
			_, err := decodeZKConnectResponse(append(make([]byte, 16), 0, 0, 0, 9, 1))
			return err
		}},
		"password length -2": {func() error {
			_, err := decodeZKConnectResponse(append(make([]byte, 16), 0xff, 0xff, 0xff, 0xfe))
			return err
		}},
		"reply cut": {func() error { _, _, err := decodeZKReply(make([]byte, 15)); return err }},
		"stat short": {func() error {
			_, err := decodeZKGetData(append(appendZKBuffer(nil, []byte("x")), stat[1:]...))
			return err
		}},
		"stat long": {func() error {
			_, err := decodeZKGetData(append(appendZKBuffer(nil, []byte("x")), append(stat, 0)...))
			return err
		}},
		"sasl trailing":  {func() error { _, err := decodeZKSASL(append(appendZKBuffer(nil, []byte("t")), 0)); return err }},
		"sasl cut":       {func() error { _, err := decodeZKSASL([]byte{0, 0}); return err }},
		"frame negative": {func() error { _, err := readZKFrame(bytes.NewReader([]byte{0x80, 0, 0, 0})); return err }},
		"frame too long": {func() error { _, err := readZKFrame(bytes.NewReader([]byte{0, 0x50, 0, 0})); return err }},
	} {
		if err := tc.decode(); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v, want ErrProtocol", name, err)
		}
	}
	if _, err := readZKFrame(bytes.NewReader([]byte{0, 0, 0, 5, 1})); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("frame cut: %v, want io.ErrUnexpectedEOF", err)
	}
	// A server before 3.4 sends no readOnly flag; the null password and an
	// empty one differ.
	r, err := decodeZKConnectResponse(append(make([]byte, 16), 0xff, 0xff, 0xff, 0xff))
	if err != nil || r.HasReadOnly || r.Passwd != nil {
		t.Errorf("old connect response: %+v %v", r, err)
	}
	r, err = decodeZKConnectResponse(append(make([]byte, 16), 0, 0, 0, 0, 1, 9, 9))
	if err != nil || !r.HasReadOnly || !r.ReadOnly || r.Passwd == nil || len(r.Passwd) != 0 {
		t.Errorf("connect response with later fields: %+v %v", r, err)
	}
}

// FuzzZKConnectResponse: whatever decodes re-encodes to a message that
// decodes to the same response, no longer than the input.
func FuzzZKConnectResponse(f *testing.F) {
	f.Add(encodeZKConnectResponse(zkConnectResponse{Timeout: 40000, SessionID: 0x1000a, Passwd: make([]byte, 16), HasReadOnly: true}))
	f.Add(encodeZKConnectResponse(zkConnectResponse{Timeout: -1}))
	f.Add(append(encodeZKConnectResponse(zkConnectResponse{Passwd: []byte{}, HasReadOnly: true, ReadOnly: true}), 7, 7))
	f.Fuzz(func(t *testing.T, msg []byte) {
		r, err := decodeZKConnectResponse(msg)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("error %v is not ErrProtocol", err)
			}
			return
		}
		enc := encodeZKConnectResponse(r)
		if len(enc) > len(msg) {
			t.Fatalf("re-encoded to %d bytes from %d", len(enc), len(msg))
		}
		r2, err := decodeZKConnectResponse(enc)
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip: %+v, then %+v %v", r, r2, err)
		}
	})
}

// FuzzZKReply: a reply message that decodes as a header with a GetData or
// sasl record re-encodes to the same bytes.
func FuzzZKReply(f *testing.F) {
	stat := bytes.Repeat([]byte{3}, zkStatLen)
	hdr := encodeZKReplyHeader(zkReplyHeader{Xid: 2, Zxid: 99, Err: 0})
	f.Add(append(append(append([]byte{}, hdr...), appendZKBuffer(nil, []byte("\xffznode"))...), stat...))
	f.Add(append(append([]byte{}, hdr...), appendZKBuffer(nil, nil)...))
	f.Add(append(append([]byte{}, hdr...), appendZKBuffer(nil, []byte{})...))
	f.Add(encodeZKReplyHeader(zkReplyHeader{Xid: 1, Err: zkErrRequireSASL}))
	f.Fuzz(func(t *testing.T, msg []byte) {
		h, rec, err := decodeZKReply(msg)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("error %v is not ErrProtocol", err)
			}
			return
		}
		if got := append(encodeZKReplyHeader(h), rec...); !bytes.Equal(got, msg) {
			t.Fatalf("header round trip: %x from %x", got, msg)
		}
		if data, err := decodeZKGetData(rec); err == nil {
			if got := append(appendZKBuffer(nil, data), rec[len(rec)-zkStatLen:]...); !bytes.Equal(got, rec) {
				t.Fatalf("get data round trip: %x from %x", got, rec)
			}
		} else if !errors.Is(err, ErrProtocol) {
			t.Fatalf("get data error %v is not ErrProtocol", err)
		}
		if tok, err := decodeZKSASL(rec); err == nil {
			if got := appendZKBuffer(nil, tok); !bytes.Equal(got, rec) {
				t.Fatalf("sasl round trip: %x from %x", got, rec)
			}
		} else if !errors.Is(err, ErrProtocol) {
			t.Fatalf("sasl error %v is not ErrProtocol", err)
		}
	})
}

// FuzzZKFrame: a frame read re-frames to the bytes it was read from.
func FuzzZKFrame(f *testing.F) {
	f.Add(zkFrame([]byte("hello")))
	f.Add(zkFrame(nil))
	f.Add([]byte{0, 0, 0, 3, 1})
	f.Fuzz(func(t *testing.T, in []byte) {
		msg, err := readZKFrame(bytes.NewReader(in))
		if err != nil {
			return
		}
		if got := zkFrame(msg); !bytes.Equal(got, in[:len(got)]) {
			t.Fatalf("re-framed %x from %x", got, in)
		}
	})
}

// TestZKLookupUnreachable: a quorum none of whose members accepts a
// connection fails with a retryable ErrConnection naming each member, at
// once rather than after a session timeout.
func TestZKLookupUnreachable(t *testing.T) {
	var quorum []string
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		quorum = append(quorum, l.Addr().String())
		l.Close() // nothing listens there now: connections are refused
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := zkLookup(ctx, quorum, "/hbase", "/master", nil, slog.New(slog.DiscardHandler))
	if !errors.Is(err, ErrConnection) || !IsRetryable(err) || errors.Is(err, ErrSecurity) {
		t.Fatalf("lookup on a dead quorum: %v, want a retryable ErrConnection", err)
	}
	for _, a := range quorum {
		if !strings.Contains(err.Error(), a) {
			t.Errorf("error %v does not name %s", err, a)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
}
