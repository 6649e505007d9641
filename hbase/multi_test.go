package hbase

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// TestMultiGroupsByRegionAndServer runs a Multi over three regions on two
// fake region servers: each server gets one MultiRequest with one
// RegionAction per region of its own, results come back in the caller's
// order, and a per-action exception fails only its action.
func TestMultiGroupsByRegionAndServer(t *testing.T) {
	type seen struct {
		requests int
		regions  []string
		rows     []string
	}
	var mu sync.Mutex // guards got
	got := map[string]*seen{}
	serve := func(name string) func(uint32, []byte, io.Writer) {
		return func(id uint32, body []byte, w io.Writer) {
			var req pb.MultiRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			mu.Lock()
			s := got[name]
			if s == nil {
				s = &seen{}
				got[name] = s
			}
			s.requests++
			resp := &pb.MultiResponse{}
			for _, ra := range req.GetRegionAction() {
				s.regions = append(s.regions, string(ra.GetRegion().GetValue()))
				rar := &pb.RegionActionResult{}
				for _, a := range ra.GetAction() {
					row := a.GetGet().GetRow()
					s.rows = append(s.rows, string(row))
					roe := &pb.ResultOrException{Index: proto.Uint32(a.GetIndex())}
					if string(row) == "bad" {
						roe.Exception = &pb.NameBytesPair{Name: proto.String("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"), Value: []byte("no family")}
					} else {
						roe.Result = &pb.Result{Cell: []*pb.Cell{{Row: row, Family: []byte("f"), Qualifier: []byte("q"), Value: []byte(name)}}}
					}
					rar.ResultOrException = append(rar.ResultOrException, roe)
				}
				resp.RegionActionResult = append(resp.RegionActionResult, rar)
			}
			mu.Unlock()
			writeFrame(w, frame(&pb.ResponseHeader{CallId: proto.Uint32(id)}, resp, nil))
		}
	}
	a := newFakeServer(t, serve("A"))
	b := newFakeServer(t, serve("B"))
	c, err := New(Config{ZooKeeper: []string{"127.0.0.1:1"}, MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, r := range []struct{ start, end, addr string }{
		{"", "g", a.ln.Addr().String()}, {"g", "n", b.ln.Addr().String()}, {"n", "", a.ln.Addr().String()},
	} {
		c.regions.put(&region{table: "default:t", name: []byte("t," + r.start + ",1"), start: []byte(r.start), end: []byte(r.end), addr: r.addr})
	}
	rows := []string{"x", "a", "h", "bad", "z", "i", "b"}
	var acts []Action
	for _, r := range rows {
		acts = append(acts, &Get{Row: []byte(r)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := c.Multi(ctx, "t", acts)
	if err != nil {
		t.Fatal(err)
	}
	wantServer := map[string]string{"x": "A", "a": "A", "h": "B", "z": "A", "i": "B", "b": "A"}
	for i, r := range rows {
		if r == "bad" {
			if !errors.Is(res[i].Err, ErrNoSuchFamily) {
				t.Errorf("bad action: %v, want ErrNoSuchFamily", res[i].Err)
			}
			continue
		}
		if res[i].Err != nil {
			t.Fatalf("row %s: %v", r, res[i].Err)
		}
		if string(res[i].Result.Row()) != r {
			t.Errorf("result %d is row %q, want %q", i, res[i].Result.Row(), r)
		}
		if v, _ := res[i].Result.Value("f", "q"); string(v) != wantServer[r] {
			t.Errorf("row %s served by %s, want %s", r, v, wantServer[r])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got["A"].requests != 1 || got["B"].requests != 1 || len(got["A"].regions) != 2 || len(got["B"].regions) != 1 {
		t.Errorf("region actions: A %v, B %v; want 2 on A (one request), 1 on B", got["A"].regions, got["B"].regions)
	}
	if len(got["A"].rows)+len(got["B"].rows) != len(rows) {
		t.Errorf("servers saw %v and %v: some action sent twice or not at all", got["A"].rows, got["B"].rows)
	}
}
