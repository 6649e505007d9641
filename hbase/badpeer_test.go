package hbase

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// fakeServer accepts connections on loopback, checks the preamble and
// connection header, reads one call, and answers with reply(callID).
type fakeServer struct {
	ln    net.Listener
	wg    sync.WaitGroup
	reply func(callID uint32, body []byte, w io.Writer)
	// hdr is the last connection header received.
	mu  sync.Mutex // guards hdr
	hdr *pb.ConnectionHeader
}

func newFakeServer(t *testing.T, reply func(callID uint32, body []byte, w io.Writer)) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, reply: reply}
	s.wg.Add(1)
	go s.serve(t)
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *fakeServer) serve(t *testing.T) {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer nc.Close()
			s.handle(t, nc)
		}()
	}
}

func (s *fakeServer) handle(t *testing.T, nc net.Conn) {
	pre := make([]byte, 10)
	if _, err := io.ReadFull(nc, pre); err != nil {
		return
	}
	if !bytes.Equal(pre[:6], []byte("HBas\x00\x50")) {
		t.Errorf("preamble % x", pre[:6])
		return
	}
	hb := make([]byte, binary.BigEndian.Uint32(pre[6:]))
	if _, err := io.ReadFull(nc, hb); err != nil {
		return
	}
	hdr := &pb.ConnectionHeader{}
	if err := proto.Unmarshal(hb, hdr); err != nil {
		t.Errorf("connection header: %v", err)
		return
	}
	s.mu.Lock()
	s.hdr = hdr
	s.mu.Unlock()
	for {
		var lb [4]byte
		if _, err := io.ReadFull(nc, lb[:]); err != nil {
			return
		}
		fr := make([]byte, binary.BigEndian.Uint32(lb[:]))
		if _, err := io.ReadFull(nc, fr); err != nil {
			return
		}
		h, n := protowire.ConsumeBytes(fr)
		rh := &pb.RequestHeader{}
		if n < 0 || proto.Unmarshal(h, rh) != nil {
			t.Errorf("bad request frame")
			return
		}
		body, _ := protowire.ConsumeBytes(fr[n:])
		s.reply(rh.GetCallId(), body, nc)
	}
}

func writeFrame(w io.Writer, body []byte) {
	_, _ = w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(body))))
	_, _ = w.Write(body)
}

func TestBadPeers(t *testing.T) {
	tests := []struct {
		name  string
		reply func(id uint32, body []byte, w io.Writer)
		want  error // errors.Is target
	}{
		{"truncated frame", func(id uint32, body []byte, w io.Writer) {
			_, _ = w.Write([]byte{0, 0, 0, 100, 1, 2, 3})
			w.(net.Conn).Close()
		}, ErrConnection},
		{"oversized frame", func(id uint32, body []byte, w io.Writer) {
			_, _ = w.Write([]byte{0x7f, 0xff, 0xff, 0xff})
		}, ErrProtocol},
		{"malformed header", func(id uint32, body []byte, w io.Writer) {
			writeFrame(w, []byte{0x03, 0xff, 0xff, 0xff})
		}, ErrProtocol},
		{"malformed body", func(id uint32, body []byte, w io.Writer) {
			writeFrame(w, frame(&pb.ResponseHeader{CallId: proto.Uint32(id)}, nil, []byte{0x05, 0x0a, 0xff, 0xff, 0xff, 0xff}))
		}, ErrProtocol},
		{"cell block overruns", func(id uint32, body []byte, w io.Writer) {
			writeFrame(w, frame(&pb.ResponseHeader{CallId: proto.Uint32(id), CellBlockMeta: &pb.CellBlockMeta{Length: proto.Uint32(1 << 20)}}, &pb.GetResponse{}, nil))
		}, ErrProtocol},
		{"cells announced but absent", func(id uint32, body []byte, w io.Writer) {
			writeFrame(w, frame(&pb.ResponseHeader{CallId: proto.Uint32(id)}, &pb.GetResponse{Result: &pb.Result{AssociatedCellCount: proto.Int32(3)}}, nil))
		}, ErrProtocol},
		{"bad cell in block", func(id uint32, body []byte, w io.Writer) {
			cb := []byte{0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0}
			writeFrame(w, frame(&pb.ResponseHeader{CallId: proto.Uint32(id), CellBlockMeta: &pb.CellBlockMeta{Length: proto.Uint32(uint32(len(cb)))}},
				&pb.GetResponse{Result: &pb.Result{AssociatedCellCount: proto.Int32(1)}}, cb))
		}, ErrProtocol},
		{"closes at once", func(id uint32, body []byte, w io.Writer) { w.(net.Conn).Close() }, ErrConnection},
		{"never answers", func(id uint32, body []byte, w io.Writer) {}, context.DeadlineExceeded},
		{"remote exception", func(id uint32, body []byte, w io.Writer) {
			writeFrame(w, frame(&pb.ResponseHeader{CallId: proto.Uint32(id), Exception: &pb.ExceptionResponse{
				ExceptionClassName: proto.String("org.apache.hadoop.hbase.RegionTooBusyException"), StackTrace: proto.String("busy")}}, nil, nil))
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			s := newFakeServer(t, tc.reply)
			cn, err := dialConn(context.Background(), s.ln.Addr().String(), serviceClient, "tester", 1<<20, dialSecurity{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			var resp pb.GetResponse
			cb, err := cn.call(ctx, "Get", &pb.GetRequest{Region: &pb.RegionSpecifier{Type: pb.RegionSpecifier_REGION_NAME.Enum(), Value: []byte("r")}, Get: &pb.Get{Row: []byte("k")}}, &resp)
			if err == nil {
				_, err = toResult(resp.GetResult(), cb)
			}
			switch {
			case tc.want == nil:
				var re *RemoteError
				if !errors.As(err, &re) || !re.Retryable() || re.Message != "busy" {
					t.Fatalf("call = %v, want a retryable RemoteError", err)
				}
			case !errors.Is(err, tc.want):
				t.Fatalf("call = %v, want %v", err, tc.want)
			}
			cn.close()
			// The reader goroutine is gone after close.
			deadline := time.Now().Add(2 * time.Second)
			for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) { // +2: the fake server's own
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before+2 {
				t.Errorf("%d goroutines after close, %d before", n, before)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.hdr.GetServiceName() != serviceClient || s.hdr.GetUserInfo().GetEffectiveUser() != "tester" || s.hdr.GetCellBlockCodecClass() != kvCodecClass {
				t.Errorf("connection header = %v", s.hdr)
			}
		})
	}
}

// TestConcurrentCallsOutOfOrder checks multiplexing: replies in reverse
// order of the calls each reach their own caller.
func TestConcurrentCallsOutOfOrder(t *testing.T) {
	const n = 16
	var mu sync.Mutex // guards ids
	var ids []uint32
	var rows [][]byte
	release := make(chan struct{})
	var wmu sync.Mutex // serializes writes of the reply goroutine
	s := newFakeServer(t, func(id uint32, body []byte, w io.Writer) {
		mu.Lock()
		ids = append(ids, id)
		var req pb.GetRequest
		_ = proto.Unmarshal(body, &req)
		rows = append(rows, req.GetGet().GetRow())
		full := len(ids) == n
		mu.Unlock()
		if !full {
			return
		}
		close(release)
		mu.Lock()
		defer mu.Unlock()
		for i := len(ids) - 1; i >= 0; i-- {
			wmu.Lock()
			writeFrame(w, frame(&pb.ResponseHeader{CallId: proto.Uint32(ids[i])},
				&pb.GetResponse{Result: &pb.Result{Cell: []*pb.Cell{{Row: rows[i]}}}}, nil))
			wmu.Unlock()
		}
	})
	cn, err := dialConn(context.Background(), s.ln.Addr().String(), serviceClient, "u", 1<<20, dialSecurity{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.close()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			row := binary.BigEndian.AppendUint32(nil, uint32(i))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var resp pb.GetResponse
			if _, err := cn.call(ctx, "Get", &pb.GetRequest{Region: &pb.RegionSpecifier{Type: pb.RegionSpecifier_REGION_NAME.Enum(), Value: []byte("r")}, Get: &pb.Get{Row: row}}, &resp); err != nil {
				t.Error(err)
				return
			}
			if c := resp.GetResult().GetCell(); len(c) != 1 || !bytes.Equal(c[0].GetRow(), row) {
				t.Errorf("reply %v", &resp)
			}
		})
	}
	wg.Wait()
	<-release
}

// TestOverdueCoalescedCall: a coalesced call (one with onDone) whose reply
// never comes fails its connection overdueGrace after its timeout, so its
// in-flight slot is freed and its callers retry elsewhere; one answered in
// time leaves the connection alone.
func TestOverdueCoalescedCall(t *testing.T) {
	defer func(g time.Duration) { overdueGrace = g }(overdueGrace)
	overdueGrace = 100 * time.Millisecond
	for _, answer := range []bool{false, true} {
		s := newFakeServer(t, func(id uint32, body []byte, w io.Writer) {
			if answer {
				writeFrame(w, frame(&pb.ResponseHeader{CallId: proto.Uint32(id)}, &pb.MultiResponse{}, nil))
			}
		})
		cn, err := dialConn(context.Background(), s.ln.Addr().String(), serviceClient, "u", 1<<20, dialSecurity{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cn.close) // before the server's cleanup: its handler reads until the client hangs up
		freed := make(chan struct{})
		cl, err := cn.start("Multi", 50, []byte{}, nil, func() { close(freed) })
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-freed:
		case <-time.After(5 * time.Second):
			t.Fatalf("answer %v: the call's slot was not freed", answer)
		}
		if answer {
			time.Sleep(300 * time.Millisecond) // past the timeout and the grace
			if cl.err != nil || cl.resp == nil {
				t.Errorf("answered call: err %v", cl.err)
			}
			cn.mu.Lock()
			dead := cn.err
			cn.mu.Unlock()
			if dead != nil {
				t.Errorf("a call answered in time failed the connection: %v", dead)
			}
		} else if !errors.Is(cl.err, ErrConnection) {
			t.Errorf("unanswered call: err %v, want ErrConnection", cl.err)
		}
	}
}
