package hbase

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// The hand-written codecs of wire.go are checked against the generated
// protobuf code (package pb) as the oracle: what they encode must decode
// to the message the generated code would have sent, and what they decode
// must agree with what the generated code decodes.

func TestRequestHeaderMatchesGenerated(t *testing.T) {
	for _, tc := range []struct {
		name           string
		id             uint32
		method         string
		timeout, cells int
	}{
		{"plain", 1, "Multi", 0, 0},
		{"timeout", 300, "Get", 2500, 0},
		{"cells", 1 << 31, "Mutate", 0, 70000},
		{"all", 4_000_000_000, "Multi", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := &pb.RequestHeader{CallId: proto.Uint32(tc.id), MethodName: proto.String(tc.method), RequestParam: proto.Bool(true)}
			if tc.cells > 0 {
				want.CellBlockMeta = &pb.CellBlockMeta{Length: proto.Uint32(uint32(tc.cells))}
			}
			if tc.timeout > 0 {
				want.Timeout = proto.Uint32(uint32(tc.timeout))
			}
			var got pb.RequestHeader
			if err := proto.Unmarshal(appendRequestHeader(nil, tc.id, tc.method, uint32(tc.timeout), tc.cells), &got); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(&got, want) {
				t.Fatalf("got %v, want %v", &got, want)
			}
		})
	}
}

func TestMultiRequestMatchesGenerated(t *testing.T) {
	gets := []*Get{
		{Row: []byte("r1")},
		{Row: []byte("r2"), Columns: []Column{{Family: []byte("c")}}},
		{Row: bytes.Repeat([]byte{0xff}, 300), Columns: []Column{{Family: []byte("c"), Qualifiers: [][]byte{[]byte("a"), {}}}, {Family: []byte("d")}},
			MaxVersions: 3, TimeRange: &TimeRange{From: 5, To: 1 << 40}, ExistenceOnly: true},
	}
	put := &Put{Row: []byte("p"), Values: []Value{{Family: []byte("c"), Qualifier: []byte("q"), Value: []byte("v")}}}
	mp, err := putNoData(put)
	if err != nil {
		t.Fatal(err)
	}
	cond := &pb.Condition{Row: []byte("p"), Family: []byte("c"), Qualifier: []byte("q"), CompareType: pb.CompareType_EQUAL.Enum(),
		Comparator: &pb.Comparator{Name: proto.String("x")}}
	condBytes, err := proto.Marshal(cond)
	if err != nil {
		t.Fatal(err)
	}
	want := &pb.MultiRequest{NonceGroup: proto.Uint64(99)}
	var ras []regionActionEnc
	for k, name := range []string{"t,,1", "t,m,2"} {
		ra := regionActionEnc{region: regionSpecBytes([]byte(name))}
		pra := &pb.RegionAction{Region: &pb.RegionSpecifier{Type: pb.RegionSpecifier_REGION_NAME.Enum(), Value: []byte(name)}}
		for i, g := range gets {
			idx := uint32(10*k + i)
			ra.actions = append(ra.actions, appendGetAction(nil, idx, g))
			pra.Action = append(pra.Action, &pb.Action{Index: proto.Uint32(idx), Get: g.proto()})
		}
		a, err := appendMutationAction(nil, 7, mp)
		if err != nil {
			t.Fatal(err)
		}
		ra.actions = append(ra.actions, a)
		pra.Action = append(pra.Action, &pb.Action{Index: proto.Uint32(7), Mutation: mp})
		if k == 1 {
			ra.condition = condBytes
			pra.Condition = cond
		}
		ras = append(ras, ra)
		want.RegionAction = append(want.RegionAction, pra)
	}
	var got pb.MultiRequest
	if err := proto.Unmarshal(appendMultiRequest(nil, ras, 99, true), &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, want) {
		t.Fatalf("got %v\nwant %v", &got, want)
	}
	got.Reset()
	if err := proto.Unmarshal(appendMultiRequest(nil, ras[:1], 99, false), &got); err != nil || got.NonceGroup != nil || len(got.RegionAction) != 1 {
		t.Fatalf("without nonce: %v, %v", &got, err)
	}
}

// multiResponseSeeds are replies of the shapes HBase sends.
func multiResponseSeeds() []*pb.MultiResponse {
	nb := func(n, v string) *pb.NameBytesPair { return &pb.NameBytesPair{Name: proto.String(n), Value: []byte(v)} }
	return []*pb.MultiResponse{
		{},
		{RegionActionResult: []*pb.RegionActionResult{{ResultOrException: []*pb.ResultOrException{
			{Index: proto.Uint32(0), Result: &pb.Result{AssociatedCellCount: proto.Int32(2)}},
			{Index: proto.Uint32(1), Result: &pb.Result{}},
			{Index: proto.Uint32(2), Exception: nb("org.apache.hadoop.hbase.NotServingRegionException", "moved")},
		}}}},
		{RegionActionResult: []*pb.RegionActionResult{
			{Exception: nb("org.apache.hadoop.hbase.RegionTooBusyException", "busy")},
			{Processed: proto.Bool(true), ResultOrException: []*pb.ResultOrException{{Index: proto.Uint32(0), Result: &pb.Result{Exists: proto.Bool(false), Partial: proto.Bool(true), Stale: proto.Bool(true)}}}},
		}, Processed: proto.Bool(true)},
		{RegionActionResult: []*pb.RegionActionResult{{ResultOrException: []*pb.ResultOrException{
			{Index: proto.Uint32(5), Result: &pb.Result{Cell: []*pb.Cell{{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: proto.Uint64(9), CellType: pb.CellType_PUT.Enum(), Value: []byte("v")}}}},
		}}}},
	}
}

// sameMultiResponse reports how got (hand-decoded) differs from want (the
// generated decoder's), or "".
func sameMultiResponse(got []regionActionResult, want *pb.MultiResponse) string {
	rars := want.GetRegionActionResult()
	if len(got) != len(rars) {
		return "region result count"
	}
	sameNB := func(a *nameBytes, b *pb.NameBytesPair) bool {
		if (a == nil) != (b == nil) {
			return false
		}
		return a == nil || a.name == b.GetName() && bytes.Equal(a.value, b.GetValue())
	}
	for k, rar := range rars {
		g := got[k]
		if g.processed != rar.GetProcessed() || !sameNB(g.exception, rar.GetException()) || len(g.roes) != len(rar.GetResultOrException()) {
			return "region result fields"
		}
		for j, roe := range rar.GetResultOrException() {
			gr := g.roes[j]
			if gr.index != roe.GetIndex() || gr.hasResult != (roe.Result != nil) || !sameNB(gr.exception, roe.GetException()) {
				return "result-or-exception fields"
			}
			r := roe.GetResult()
			if gr.result.assoc != r.GetAssociatedCellCount() || gr.result.hasExists != (r != nil && r.Exists != nil) || gr.result.exists != r.GetExists() ||
				gr.result.partial != r.GetPartial() || len(gr.result.protoCells) != len(r.GetCell()) {
				return "result fields"
			}
			for i, c := range r.GetCell() {
				var pc pb.Cell
				if proto.Unmarshal(gr.result.protoCells[i], &pc) != nil || !proto.Equal(&pc, c) {
					return "cell"
				}
			}
		}
	}
	return ""
}

func TestDecodeMultiResponseMatchesGenerated(t *testing.T) {
	for i, m := range multiResponseSeeds() {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeMultiResponse(b, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		if d := sameMultiResponse(got, m); d != "" {
			t.Fatalf("seed %d: %s differs: %+v vs %v", i, d, got, m)
		}
	}
	// A singular message field sent twice (protobuf would merge) is refused.
	dup := &pb.ResultOrException{Index: proto.Uint32(1), Result: &pb.Result{}}
	b, _ := proto.Marshal(dup)
	b = append(b, b...)
	rar := appendBytesField(nil, 1, b)
	if _, err := decodeMultiResponse(appendBytesField(nil, 1, rar), nil); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate result: %v", err)
	}
}

func FuzzDecodeMultiResponse(f *testing.F) {
	for _, m := range multiResponseSeeds() {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeMultiResponse(b, nil)
		var want pb.MultiResponse
		if agreeWithProtobuf(t, b, &want, err) {
			if d := sameMultiResponse(got, &want); d != "" {
				t.Fatalf("%s differs from protobuf's decoding", d)
			}
		}
		// Converting the results must not panic on any input.
		for k := range got {
			for j := range got[k].roes {
				_, _ = toResultMsg(&got[k].roes[j].result, &cellBlock{buf: b})
			}
		}
	})
}

func FuzzDecodeResponseHeader(f *testing.F) {
	for _, h := range []*pb.ResponseHeader{
		{CallId: proto.Uint32(7), CellBlockMeta: &pb.CellBlockMeta{Length: proto.Uint32(123)}},
		{CallId: proto.Uint32(1), Exception: &pb.ExceptionResponse{ExceptionClassName: proto.String("x"), StackTrace: proto.String("s"), DoNotRetry: proto.Bool(true)}},
		{},
	} {
		b, _ := proto.Marshal(h)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeResponseHeader(b)
		var want pb.ResponseHeader
		if agreeWithProtobuf(t, b, &want, err) {
			if got.callID != want.GetCallId() || got.cellsLen != uint64(want.GetCellBlockMeta().GetLength()) ||
				(got.exception == nil) != (want.Exception == nil) || got.exception != nil && !proto.Equal(got.exception, want.Exception) {
				t.Fatalf("got %+v, protobuf %v", got, &want)
			}
		}
	})
}

// agreeWithProtobuf decodes b into want with protobuf and fails the test
// when the hand decoder, which returned err, accepted what protobuf
// refuses or refused what it accepts (a field repeated, which protobuf
// merges, aside); it reports whether both accepted b, so that the caller
// compares their decodings.
func agreeWithProtobuf(t *testing.T, b []byte, want proto.Message, err error) bool {
	t.Helper()
	perr := proto.UnmarshalOptions{AllowPartial: true}.Unmarshal(b, want)
	switch {
	case err == nil && perr != nil:
		t.Fatalf("hand decoder accepted what protobuf refuses (%v)", perr)
	case err == nil:
		return true
	case perr == nil && !strings.Contains(err.Error(), "twice"):
		t.Fatalf("hand decoder refused what protobuf accepts: %v", err)
	}
	return false
}
