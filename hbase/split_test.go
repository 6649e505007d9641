package hbase

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

func TestSplitBatches(t *testing.T) {
	items := func(n int) []located {
		out := make([]located, n)
		for i := range out {
			out[i].i = i
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		sizes []int // items per server
		max   int
		want  []int // items per request, servers in order
	}{
		{"small", []int{3, 5}, 10, []int{3, 5}},
		{"exactly max", []int{10}, 10, []int{10}},
		{"one over", []int{11}, 10, []int{10, 1}},
		{"several servers", []int{25, 4, 20}, 10, []int{10, 10, 5, 4, 10, 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in []serverBatch
			for s, n := range tc.sizes {
				in = append(in, serverBatch{addr: fmt.Sprint("s", s), items: items(n)})
			}
			out := splitBatches(in, tc.max)
			var got []int
			perServer := map[string][]int{}
			for _, b := range out {
				got = append(got, len(b.items))
				for _, it := range b.items {
					perServer[b.addr] = append(perServer[b.addr], it.i)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("request sizes %v, want %v", got, tc.want)
			}
			for s, n := range tc.sizes {
				if ids := perServer[fmt.Sprint("s", s)]; len(ids) != n || !slices.IsSorted(ids) || n > 0 && ids[n-1] != n-1 {
					t.Fatalf("server s%d: items %v, want 0..%d once each", s, ids, n-1)
				}
			}
		})
	}
}

// A Multi of more than maxRequestActions gets to one region server goes
// as several MultiRequests of at most maxRequestActions each (none queued
// to share a request), every action exactly once; when one of those
// requests fails, exactly its actions get the error and the others their
// results.
func TestMultiSplitsLargeRequests(t *testing.T) {
	var mu sync.Mutex // guards sizes and seen
	var sizes []int
	seen := map[string]int{}
	failed := map[string]bool{} // rows of the request answered with an exception
	srv := newFakeServer(t, func(id uint32, body []byte, w io.Writer) {
		var req pb.MultiRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Errorf("request: %v", err)
			return
		}
		mu.Lock()
		resp := &pb.MultiResponse{}
		n := 0
		fail := len(sizes) == 1 // the second request to arrive fails as a whole region action
		for _, ra := range req.GetRegionAction() {
			rar := &pb.RegionActionResult{}
			for _, a := range ra.GetAction() {
				row := string(a.GetGet().GetRow())
				seen[row]++
				n++
				if fail {
					failed[row] = true
					continue
				}
				rar.ResultOrException = append(rar.ResultOrException, &pb.ResultOrException{Index: proto.Uint32(a.GetIndex()),
					Result: &pb.Result{Cell: []*pb.Cell{{Row: []byte(row), Family: []byte("f"), Qualifier: []byte("q"), Value: []byte(row)}}}})
			}
			if fail {
				rar.Exception = &pb.NameBytesPair{Name: proto.String("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"), Value: []byte("no family")}
			}
			resp.RegionActionResult = append(resp.RegionActionResult, rar)
		}
		sizes = append(sizes, n)
		mu.Unlock()
		writeFrame(w, frame(&pb.ResponseHeader{CallId: proto.Uint32(id)}, resp, nil))
	})
	c, err := New(Config{ZooKeeper: []string{"127.0.0.1:1"}, MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.regions.put(&region{table: "default:t", name: []byte("t,,1"), addr: srv.ln.Addr().String()})
	const n = 2*maxRequestActions + 500
	acts := make([]Action, n)
	for i := range acts {
		acts[i] = &Get{Row: fmt.Appendf(nil, "r%05d", i)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.Multi(ctx, "t", acts)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(sizes)
	if !slices.Equal(sizes, []int{500, maxRequestActions, maxRequestActions}) {
		t.Fatalf("request sizes %v, want two of %d and one of 500", sizes, maxRequestActions)
	}
	if len(seen) != n {
		t.Fatalf("%d distinct rows sent, want %d", len(seen), n)
	}
	nFailed := 0
	for i, r := range res {
		row := fmt.Sprintf("r%05d", i)
		if seen[row] != 1 {
			t.Fatalf("row %s sent %d times", row, seen[row])
		}
		if failed[row] {
			nFailed++
			if !errors.Is(r.Err, ErrNoSuchFamily) || r.Result != nil {
				t.Fatalf("row %s of the failed request: %+v, want its error and no result", row, r)
			}
			continue
		}
		if r.Err != nil || string(r.Result.Row()) != row {
			t.Fatalf("row %s: %+v, want its own result", row, r)
		}
	}
	if nFailed == 0 || nFailed == n {
		t.Fatalf("%d of %d actions failed, want exactly those of one request", nFailed, n)
	}
}
