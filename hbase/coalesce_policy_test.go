package hbase

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// heldMulti is one MultiRequest a fake region server has received and not
// yet answered.
type heldMulti struct {
	id      uint32
	actions []int // actions per RegionAction, in order
}

// TestMultiCoalesceCountsCallers checks the coalescer's limit counts
// callers in flight, not RPCs: with a limit of 3, three concurrent calls
// each leave at once in their own MultiRequest; two more wait (nothing is
// sent for them while three are unanswered); once one reply comes, the two
// leave together as one MultiRequest. With those two in one RPC and two
// single ones in flight (4 calls, 3 RPCs), a sixth call waits until an
// answer leaves fewer than 3 calls in flight, not 3 RPCs. Every caller
// gets its own results.
func TestMultiCoalesceCountsCallers(t *testing.T) {
	got := make(chan heldMulti, 16)
	var wmu sync.Mutex // guards w: replies are written from the test goroutine
	var w io.Writer
	s := newFakeServer(t, func(id uint32, body []byte, wr io.Writer) {
		var req pb.MultiRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Errorf("MultiRequest: %v", err)
			return
		}
		h := heldMulti{id: id}
		for _, ra := range req.GetRegionAction() {
			h.actions = append(h.actions, len(ra.GetAction()))
		}
		wmu.Lock()
		w = wr
		wmu.Unlock()
		got <- h
	})
	answer := func(h heldMulti) {
		resp := &pb.MultiResponse{}
		for _, n := range h.actions {
			rar := &pb.RegionActionResult{}
			for i := range n {
				rar.ResultOrException = append(rar.ResultOrException, &pb.ResultOrException{Index: proto.Uint32(uint32(i)), Result: &pb.Result{}})
			}
			resp.RegionActionResult = append(resp.RegionActionResult, rar)
		}
		wmu.Lock()
		writeFrame(w, frame(&pb.ResponseHeader{CallId: proto.Uint32(h.id)}, resp, nil))
		wmu.Unlock()
	}
	recv := func(what string) heldMulti {
		t.Helper()
		select {
		case h := <-got:
			return h
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no MultiRequest reached the server", what)
			return heldMulti{}
		}
	}

	c, err := New(Config{ZooKeeper: []string{"127.0.0.1:1"}}) // never dialled: the test hands multiGets its connection
	if err != nil {
		t.Fatal(err)
	}
	cn, err := dialConn(context.Background(), s.ln.Addr().String(), serviceClient, "u", 1<<20, dialSecurity{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cn.close) // before the server's cleanup: its handler reads until the client hangs up
	cn.co.limit = 3

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	call := func(i int) {
		wg.Go(func() {
			ra := regionActionEnc{region: regionSpecBytes([]byte("r")), actions: [][]byte{appendGetAction(nil, 0, &Get{Row: fmt.Appendf(nil, "row%d", i)})}}
			rars, _, err := c.multiGets(ctx, cn, []regionActionEnc{ra})
			switch {
			case err != nil:
				errs <- fmt.Errorf("call %d: %w", i, err)
			case len(rars) != 1 || len(rars[0].roes) != 1:
				errs <- fmt.Errorf("call %d: %d region results, want its own one", i, len(rars))
			}
		})
	}

	// waitQueued waits until n callers are queued and calls are in flight.
	waitQueued := func(n, calls int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; {
			cn.co.mu.Lock()
			queued, inFlight := 0, cn.co.calls
			if f := cn.co.queue; f != nil && !f.promoted {
				queued = len(f.members)
			}
			cn.co.mu.Unlock()
			if queued == n && inFlight == calls {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("limit 3: %d queued, %d calls in flight; want %d queued, %d in flight", queued, inFlight, n, calls)
			}
			time.Sleep(time.Millisecond)
		}
	}

	var first []heldMulti
	for i := range 3 {
		call(i)
		h := recv(fmt.Sprintf("call %d of 3 under the limit", i))
		if len(h.actions) != 1 {
			t.Fatalf("call %d under the limit: a MultiRequest of %d RegionActions, want 1 (it must leave alone, at once)", i, len(h.actions))
		}
		first = append(first, h)
	}
	call(3)
	call(4)
	// Both must queue.
	waitQueued(2, 3)
	select {
	case h := <-got:
		t.Fatalf("a MultiRequest of %v left while 3 calls were in flight", h.actions)
	default:
	}

	answer(first[0])
	h := recv("the queued two, after a reply")
	if len(h.actions) != 2 {
		t.Fatalf("the queued calls left in a MultiRequest of %d RegionActions, want 2 (together)", len(h.actions))
	}
	// In flight now: first[1], first[2] and the pair: 4 calls in 3 RPCs.
	// A sixth call queues, and an answer that leaves 3 calls in flight
	// (fewer RPCs than the limit, but not fewer calls) does not let it go.
	call(5)
	waitQueued(1, 4)
	answer(first[1])
	waitQueued(1, 3)
	select {
	case h := <-got:
		t.Fatalf("a MultiRequest of %v left while 3 calls were in flight in 2 RPCs", h.actions)
	case <-time.After(50 * time.Millisecond):
	}
	answer(first[2])
	last := recv("the sixth call, with 2 calls in flight")
	if len(last.actions) != 1 {
		t.Fatalf("the sixth call left in a MultiRequest of %d RegionActions, want 1", len(last.actions))
	}
	answer(h)
	answer(last)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The reader frees a flight's calls just after waking its callers.
	waitQueued(0, 0)
}
