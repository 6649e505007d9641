package hbase

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

func TestCellBlockRoundTrip(t *testing.T) {
	cells := []*Cell{
		{Row: []byte("r1"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 1700000000000, Type: CellPut, Value: []byte("v")},
		{Row: []byte{0, 0xFF}, Family: []byte("fam"), Qualifier: nil, Timestamp: 1<<63 - 1, Type: CellDeleteFamily, Value: nil},
		{Row: bytes.Repeat([]byte("r"), 300), Family: []byte("m"), Qualifier: []byte("long-qualifier"), Timestamp: 0, Type: CellPut, Value: bytes.Repeat([]byte{7}, 5000)},
	}
	var buf []byte
	for _, c := range cells {
		buf = appendCellKV(buf, c)
	}
	cb := &cellBlock{buf: buf}
	got, err := cb.take(len(cells))
	if err != nil {
		t.Fatal(err)
	}
	for i := range cells {
		w, g := cells[i], got[i]
		if !bytes.Equal(w.Row, g.Row) || !bytes.Equal(w.Family, g.Family) || !bytes.Equal(w.Qualifier, g.Qualifier) ||
			w.Timestamp != g.Timestamp || w.Type != g.Type || !bytes.Equal(w.Value, g.Value) {
			t.Errorf("cell %d = %+v, want %+v", i, g, w)
		}
	}
	if len(cb.buf) != 0 {
		t.Errorf("%d bytes left over", len(cb.buf))
	}
}

// TestCellBlockGolden pins the byte layout against a cell written by hand
// from HBase's KeyValue format (testdata/keyvalue-cell.hex), both ways.
func TestCellBlockGolden(t *testing.T) {
	golden := readHexGolden(t, "testdata/keyvalue-cell.hex")
	want := &Cell{Row: []byte("r1"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 1000, Type: CellPut, Value: []byte("v")}
	if got := appendCellKV(nil, want); !bytes.Equal(got, golden) {
		t.Fatalf("encoded % x\nwant    % x", got, golden)
	}
	cells, err := (&cellBlock{buf: golden}).take(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := cells[0]; string(got.Row) != "r1" || string(got.Family) != "f" || string(got.Qualifier) != "q" || got.Timestamp != 1000 || got.Type != CellPut || string(got.Value) != "v" {
		t.Fatalf("decoded %+v", got)
	}
}

// readHexGolden reads a hex file, dropping whitespace and # comments.
func readHexGolden(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var digits strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		line, _, _ = strings.Cut(line, "#")
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

func TestCellBlockBad(t *testing.T) {
	good := appendCellKV(nil, &Cell{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Type: CellPut, Value: []byte("v")})
	tests := []struct {
		name string
		buf  []byte
		n    int
	}{
		{"empty", nil, 1},
		{"short length", good[:3], 1},
		{"truncated cell", good[:len(good)-1], 1},
		{"count beyond data", good, 2},
		{"negative count", good, -1},
		{"key+value mismatch", func() []byte { b := bytes.Clone(good); b[7]++; return b }(), 1},
		{"row overruns key", func() []byte { b := bytes.Clone(good); b[12] = 0xFF; return b }(), 1},
		{"family overruns key", func() []byte { b := bytes.Clone(good); b[15] = 0xFF; return b }(), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&cellBlock{buf: tc.buf}).take(tc.n)
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("take = %v, want ErrProtocol", err)
			}
		})
	}
}

func FuzzCellBlock(f *testing.F) {
	f.Add(appendCellKV(nil, &Cell{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Type: CellPut, Value: []byte("v")}), 1)
	f.Add([]byte{0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0}, 1)
	f.Add([]byte{}, 3)
	f.Fuzz(func(t *testing.T, buf []byte, n int) {
		cells, err := (&cellBlock{buf: buf}).take(n % 1000)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to the same bytes.
		var re []byte
		for _, c := range cells {
			re = appendCellKV(re, c)
		}
		if !bytes.Equal(re, buf[:len(re)]) {
			t.Fatalf("re-encoded cells differ")
		}
	})
}

// frame builds a reply frame body (without the 4-byte length).
func frame(hdr *pb.ResponseHeader, msg proto.Message, cb []byte) []byte {
	h, _ := proto.Marshal(hdr)
	out := protowire.AppendBytes(nil, h)
	if msg != nil {
		m, _ := proto.Marshal(msg)
		out = protowire.AppendBytes(out, m)
	}
	return append(out, cb...)
}

func TestDecodeResponse(t *testing.T) {
	cb := appendCellKV(nil, &Cell{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Type: CellPut, Value: []byte("v")})
	ok := frame(&pb.ResponseHeader{CallId: proto.Uint32(7), CellBlockMeta: &pb.CellBlockMeta{Length: proto.Uint32(uint32(len(cb)))}},
		&pb.GetResponse{Result: &pb.Result{AssociatedCellCount: proto.Int32(1)}}, cb)
	r, err := decodeResponse(ok)
	if err != nil {
		t.Fatal(err)
	}
	if r.header.callID != 7 || !bytes.Equal(r.cellBlock, cb) {
		t.Fatalf("decoded %+v", r)
	}
	var gr pb.GetResponse
	if err := proto.Unmarshal(r.body, &gr); err != nil || gr.GetResult().GetAssociatedCellCount() != 1 {
		t.Fatalf("body: %v %v", &gr, err)
	}
	exc := frame(&pb.ResponseHeader{CallId: proto.Uint32(8), Exception: &pb.ExceptionResponse{ExceptionClassName: proto.String("org.apache.hadoop.hbase.NotServingRegionException")}}, nil, nil)
	if r, err := decodeResponse(exc); err != nil || r.header.exception == nil {
		t.Fatalf("exception frame: %v, %v", r, err)
	}
	bad := []struct {
		name  string
		frame []byte
	}{
		{"empty", nil},
		{"header length beyond frame", []byte{0x7f, 1, 2}},
		{"header not protobuf", protowire.AppendBytes(nil, []byte{0xff, 0xff, 0xff})},
		{"cell block longer than frame", frame(&pb.ResponseHeader{CallId: proto.Uint32(1), CellBlockMeta: &pb.CellBlockMeta{Length: proto.Uint32(1000)}}, &pb.GetResponse{}, nil)},
		{"stray bytes", append(frame(&pb.ResponseHeader{CallId: proto.Uint32(1)}, &pb.GetResponse{}, nil), 1, 2, 3)},
		{"truncated body", ok[:len(ok)-len(cb)-1]},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeResponse(tc.frame); !errors.Is(err, ErrProtocol) {
				t.Fatalf("decodeResponse = %v, want ErrProtocol", err)
			}
		})
	}
}

func FuzzDecodeResponse(f *testing.F) {
	cb := appendCellKV(nil, &Cell{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Type: CellPut, Value: []byte("v")})
	f.Add(frame(&pb.ResponseHeader{CallId: proto.Uint32(7), CellBlockMeta: &pb.CellBlockMeta{Length: proto.Uint32(uint32(len(cb)))}},
		&pb.GetResponse{Result: &pb.Result{AssociatedCellCount: proto.Int32(1)}}, cb))
	f.Add(frame(&pb.ResponseHeader{CallId: proto.Uint32(1), Exception: &pb.ExceptionResponse{ExceptionClassName: proto.String("x")}}, nil, nil))
	f.Add(frame(&pb.ResponseHeader{CallId: proto.Uint32(2)}, &pb.ScanResponse{CellsPerResult: []uint32{1}, MoreResults: proto.Bool(true)}, nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeResponse(b)
		if err != nil {
			return
		}
		// Decoding the message and its cells must not panic either.
		var cbk *cellBlock
		if r.cellBlock != nil {
			cbk = &cellBlock{buf: r.cellBlock}
		}
		var gr pb.GetResponse
		if proto.Unmarshal(r.body, &gr) == nil {
			_, _ = toResult(gr.GetResult(), cbk)
		}
		var sr pb.ScanResponse
		if proto.Unmarshal(r.body, &sr) == nil {
			_, _ = scanResults(&sr, &cellBlock{buf: r.cellBlock})
		}
	})
}

func znode(id string, msg proto.Message) []byte {
	b := []byte{znodeMagic}
	b = binary.BigEndian.AppendUint32(b, uint32(len(id)))
	b = append(b, id...)
	b = append(b, "PBUF"...)
	m, _ := proto.Marshal(msg)
	return append(b, m...)
}

func TestZnode(t *testing.T) {
	data := znode("master:26000", &pb.Master{Master: &pb.ServerName{HostName: proto.String("localhost"), Port: proto.Uint32(26000), StartCode: proto.Uint64(42)}})
	sn, err := parseMasterZnode(data)
	if err != nil || sn.Addr() != "localhost:26000" || sn.StartCode != 42 {
		t.Fatalf("parseMasterZnode = %v, %v", sn, err)
	}
	meta := znode("", &pb.MetaRegionServer{Server: &pb.ServerName{HostName: proto.String("rs1"), Port: proto.Uint32(16020)}})
	if sn, err := parseMetaZnode(meta); err != nil || sn.Addr() != "rs1:16020" {
		t.Fatalf("parseMetaZnode = %v, %v", sn, err)
	}
	for name, bad := range map[string][]byte{
		"empty":      nil,
		"no magic":   data[1:],
		"id overrun": {0xFF, 0, 0, 1, 0},
		"no PBUF":    {0xFF, 0, 0, 0, 0, 'X', 'B', 'U', 'F'},
		"no port":    znode("", &pb.Master{Master: &pb.ServerName{HostName: proto.String("h")}}),
		"bad proto":  append([]byte{0xFF, 0, 0, 0, 0, 'P', 'B', 'U', 'F'}, 0xFF),
	} {
		if _, err := parseMasterZnode(bad); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v, want ErrProtocol", name, err)
		}
	}
}

func FuzzZnode(f *testing.F) {
	f.Add(znode("id", &pb.Master{Master: &pb.ServerName{HostName: proto.String("h"), Port: proto.Uint32(1)}}))
	f.Add([]byte{0xFF, 0, 0, 0, 0, 'P', 'B', 'U', 'F'})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseMasterZnode(b)
		_, _ = parseMetaZnode(b)
	})
}

func TestRemoteErrorKinds(t *testing.T) {
	tests := []struct {
		class      string
		doNotRetry bool
		retryable  bool
		sentinel   error
	}{
		{"org.apache.hadoop.hbase.NotServingRegionException", false, true, nil},
		{"org.apache.hadoop.hbase.exceptions.RegionMovedException", false, true, nil},
		{"org.apache.hadoop.hbase.exceptions.RegionOpeningException", false, true, nil},
		{"org.apache.hadoop.hbase.RegionTooBusyException", false, true, nil},
		{"org.apache.hadoop.hbase.ipc.ServerNotRunningYetException", false, true, nil},
		{"org.apache.hadoop.hbase.PleaseHoldException", false, true, nil},
		{"org.apache.hadoop.hbase.NotServingRegionException", true, false, nil},
		{"org.apache.hadoop.hbase.TableNotFoundException", true, false, ErrTableNotFound},
		{"org.apache.hadoop.hbase.TableExistsException", true, false, ErrTableExists},
		{"org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException", true, false, ErrNoSuchFamily},
		{"org.apache.hadoop.hbase.security.AccessDeniedException", false, false, ErrAccessDenied},
		{"java.io.IOException", false, false, nil},
	}
	for _, tc := range tests {
		err := error(newRemoteError(tc.class, tc.class+": boom\n\tat x.y(z.java:1)", tc.doNotRetry))
		if IsRetryable(err) != tc.retryable {
			t.Errorf("%s (doNotRetry %v): retryable %v, want %v", tc.class, tc.doNotRetry, !tc.retryable, tc.retryable)
		}
		if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
			t.Errorf("%s: errors.Is(%v) false", tc.class, tc.sentinel)
		}
		if re, _ := asRemote(err); re.Message != "boom" {
			t.Errorf("%s: message %q, want first line without class", tc.class, re.Message)
		}
	}
	if !IsRetryable(errors.Join(ErrConnection)) {
		t.Error("ErrConnection not retryable")
	}
}

func TestRegionCache(t *testing.T) {
	rc := newRegionCache()
	mk := func(start, end string) *region {
		return &region{table: "ns:t", start: []byte(start), end: []byte(end), name: []byte(start)}
	}
	a, b, c := mk("", "g"), mk("g", "n"), mk("n", "")
	for _, r := range []*region{c, a, b} {
		rc.put(r)
	}
	for key, want := range map[string]*region{"": a, "a": a, "f\xff": a, "g": b, "m": b, "n": c, "zzz": c} {
		if got := rc.get("ns:t", []byte(key)); got != want {
			t.Errorf("get(%q) = %q, want %q", key, got.start, want.start)
		}
	}
	if rc.get("ns:other", []byte("a")) != nil {
		t.Error("other table found")
	}
	// A split of b replaces it.
	b1, b2 := mk("g", "j"), mk("j", "n")
	rc.put(b1)
	if rc.get("ns:t", []byte("k")) != nil {
		t.Error("stale region b still serves k after b1 replaced it")
	}
	rc.put(b2)
	if rc.get("ns:t", []byte("k")) != b2 || rc.get("ns:t", []byte("h")) != b1 {
		t.Error("split halves not found")
	}
	rc.drop(b1)
	if rc.get("ns:t", []byte("h")) != nil {
		t.Error("dropped region still found")
	}
	rc.dropTable("ns:t")
	if rc.get("ns:t", []byte("z")) != nil {
		t.Error("dropped table still cached")
	}
}

func TestConfigValidate(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no zk":         {},
		"no port":       {ZooKeeper: []string{"localhost"}},
		"bad parent":    {ZooKeeper: []string{"h:1"}, ZNodeParent: "hbase"},
		"tiny frame":    {ZooKeeper: []string{"h:1"}, MaxFrameSize: 10},
		"backoff order": {ZooKeeper: []string{"h:1"}, RetryBackoff: 2e9, MaxBackoff: 1e9},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: New = %v, want ErrInvalidArgument", name, err)
		}
	}
	c, err := New(Config{ZooKeeper: []string{"127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func metaRow(info *pb.RegionInfo, server string) *Result {
	b, _ := proto.Marshal(info)
	return &Result{Cells: []*Cell{
		{Row: []byte("t,,1.abc."), Family: []byte("info"), Qualifier: []byte("regioninfo"), Value: append([]byte("PBUF"), b...)},
		{Row: []byte("t,,1.abc."), Family: []byte("info"), Qualifier: []byte("server"), Value: []byte(server)},
		{Row: []byte("t,,1.abc."), Family: []byte("info"), Qualifier: []byte("serverstartcode"), Value: []byte{0, 0, 0, 0, 0, 0, 0, 9}},
	}}
}

func TestParseMetaRow(t *testing.T) {
	info := &pb.RegionInfo{RegionId: proto.Uint64(1), TableName: &pb.TableName{Namespace: []byte("ns"), Qualifier: []byte("t")}, StartKey: []byte("a"), EndKey: []byte("m")}
	r, err := parseMetaRow(metaRow(info, "rs1:16020"))
	if err != nil {
		t.Fatal(err)
	}
	if r.table != "ns:t" || string(r.start) != "a" || string(r.end) != "m" || r.addr != "rs1:16020" || r.server.StartCode != 9 {
		t.Fatalf("parseMetaRow = %+v", r)
	}
	for name, res := range map[string]*Result{
		"no regioninfo": {Cells: []*Cell{{Family: []byte("info"), Qualifier: []byte("server"), Value: []byte("h:1")}}},
		"bad server":    metaRow(info, "h:notaport"),
		"bad port":      metaRow(info, "h:70000"),
		"bad proto":     {Cells: []*Cell{{Family: []byte("info"), Qualifier: []byte("regioninfo"), Value: []byte("PBUF\xff")}}},
	} {
		if _, err := parseMetaRow(res); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v, want ErrProtocol", name, err)
		}
	}
}

func FuzzMetaRow(f *testing.F) {
	info, _ := proto.Marshal(&pb.RegionInfo{RegionId: proto.Uint64(1), TableName: &pb.TableName{Namespace: []byte("ns"), Qualifier: []byte("t")}})
	f.Add(append([]byte("PBUF"), info...), []byte("h:1"), []byte{0, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte("PBUF"), []byte(":"), []byte{})
	f.Fuzz(func(t *testing.T, regionInfo, server, startCode []byte) {
		_, _ = parseMetaRow(&Result{Cells: []*Cell{
			{Family: []byte("info"), Qualifier: []byte("regioninfo"), Value: regionInfo},
			{Family: []byte("info"), Qualifier: []byte("server"), Value: server},
			{Family: []byte("info"), Qualifier: []byte("serverstartcode"), Value: startCode},
		}})
	})
}

// TestRequestCellBlock: a request's cell block follows its message and is
// announced in the header, the way the server reads Put cells.
func TestRequestCellBlock(t *testing.T) {
	p := &Put{Row: []byte("r"), Timestamp: 5, Values: []Value{{Family: []byte("f"), Qualifier: []byte("a"), Value: []byte("1")}, {Family: []byte("f"), Qualifier: []byte("b"), Value: []byte("2"), Timestamp: 7}}}
	mp, err := putNoData(p)
	if err != nil {
		t.Fatal(err)
	}
	cells := appendPutCells(nil, p)
	mb, err := proto.Marshal(&pb.MutateRequest{Region: &pb.RegionSpecifier{Type: pb.RegionSpecifier_REGION_NAME.Enum(), Value: []byte("t,,1")}, Mutation: mp})
	if err != nil {
		t.Fatal(err)
	}
	fr := appendRequest(nil, 1, "Mutate", 0, mb, cells)
	if int(binary.BigEndian.Uint32(fr)) != len(fr)-4 {
		t.Fatalf("frame length %d, frame has %d", binary.BigEndian.Uint32(fr), len(fr)-4)
	}
	h, n := protowire.ConsumeBytes(fr[4:])
	var hdr pb.RequestHeader
	if err := proto.Unmarshal(h, &hdr); err != nil || int(hdr.GetCellBlockMeta().GetLength()) != len(cells) {
		t.Fatalf("header %v, %v", &hdr, err)
	}
	body, m := protowire.ConsumeBytes(fr[4+n:])
	var req pb.MutateRequest
	if err := proto.Unmarshal(body, &req); err != nil || req.GetMutation().GetAssociatedCellCount() != 2 || len(req.GetMutation().GetColumnValue()) != 0 {
		t.Fatalf("mutation %v, %v", &req, err)
	}
	got, err := (&cellBlock{buf: fr[4+n+m:]}).take(2)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Timestamp != 5 || got[1].Timestamp != 7 || string(got[1].Qualifier) != "b" || string(got[0].Row) != "r" {
		t.Fatalf("cells %+v %+v", got[0], got[1])
	}
	if _, err := putNoData(&Put{Row: []byte("r")}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("empty put: %v", err)
	}
	if _, err := putNoData(&Put{Row: make([]byte, 40000), Values: []Value{{Family: []byte("f")}}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("oversized row: %v", err)
	}
}
