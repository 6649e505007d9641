package hbase

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// randomCells makes n cells over distinct rows with awkward bytes: zero and
// 0xFF bytes, empty qualifiers and values, values of up to 64 KiB.
func randomCells(rng *rand.Rand, n int, prefix string, ts uint64) []*Cell {
	bytesOf := func(maxLen int) []byte {
		b := make([]byte, rng.IntN(maxLen+1))
		for i := range b {
			switch rng.IntN(4) {
			case 0:
				b[i] = 0
			case 1:
				b[i] = 0xFF
			default:
				b[i] = byte(rng.Uint32())
			}
		}
		return b
	}
	var out []*Cell
	for i := range n {
		c := &Cell{
			Row:       append([]byte(fmt.Sprintf("%s%03d-", prefix, i)), bytesOf(20)...),
			Family:    []byte("f"),
			Qualifier: bytesOf(12),
			Timestamp: ts + uint64(i),
			Type:      CellPut,
			Value:     bytesOf(40),
		}
		if i%10 == 0 {
			c.Value = bytesOf(64 << 10)
		}
		out = append(out, c)
	}
	return out
}

func hexOrDash(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	return hex.EncodeToString(b)
}

// cellLine is the peer's read format: ROW FAMILY QUALIFIER TS TYPE VALUE.
func cellLine(c *Cell) string {
	return fmt.Sprintf("%s %s %s %d %s %s", hexOrDash(c.Row), hexOrDash(c.Family), hexOrDash(c.Qualifier), c.Timestamp, "Put", hexOrDash(c.Value))
}

// peerWriteInput is the Java peer's "write" input for cells: one line a
// cell, row, family, qualifier, timestamp and value.
func peerWriteInput(cells []*Cell) string {
	var lines []string
	for _, cl := range cells {
		lines = append(lines, fmt.Sprintf("%s %s %s %d %s", hexOrDash(cl.Row), hexOrDash(cl.Family), hexOrDash(cl.Qualifier), cl.Timestamp, hexOrDash(cl.Value)))
	}
	return strings.Join(lines, "\n")
}

// checkGets reads each of cells back with a Get of its row, which must
// find that one cell.
func checkGets(t *testing.T, ctx context.Context, c *Client, table string, cells []*Cell) {
	t.Helper()
	for _, w := range cells {
		r, err := c.Get(ctx, table, &Get{Row: w.Row})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Cells) != 1 || cellLine(r.Cells[0]) != cellLine(w) {
			t.Fatalf("Go read %v, Java wrote %s", r.Cells, cellLine(w))
		}
	}
}

// TestJavaPeerCrossCheck: cells written by this client are read back byte
// for byte by HBase's own Java client, and the other way round; the table
// the Go admin calls created shows every attribute through the Java Admin.
func TestJavaPeerCrossCheck(t *testing.T) {
	t.Parallel() // each on its own table; they mostly wait on HBase
	c, ctx, table := testTable(t)
	zk := hbasetest.ZK(t)
	rng := rand.New(rand.NewPCG(1, 2))
	ts := uint64(time.Now().UnixMilli()) - 60000

	// Go writes (one Multi), Java reads.
	goCells := randomCells(rng, 40, "go", ts)
	var puts []Action
	for _, cl := range goCells {
		puts = append(puts, &Put{Row: cl.Row, Values: []Value{{Family: cl.Family, Qualifier: cl.Qualifier, Value: cl.Value, Timestamp: cl.Timestamp}}})
	}
	res, err := c.Multi(ctx, table, puts)
	if err != nil {
		t.Fatal(err)
	}
	var rows, want []string
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("put %d: %v", i, r.Err)
		}
		rows = append(rows, hex.EncodeToString(goCells[i].Row))
		want = append(want, cellLine(goCells[i]))
	}
	got := strings.Split(strings.TrimSpace(hbasetest.Peer(t, strings.Join(rows, "\n"), "read", zk, table)), "\n")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Java read back %d cells, differing from the %d Go wrote:\n got[0] %.200s\nwant[0] %.200s", len(got), len(want), got[0], want[0])
	}

	// Java writes, Go reads (single Gets and a Scan).
	javaCells := randomCells(rng, 40, "java", ts)
	hbasetest.Peer(t, peerWriteInput(javaCells), "write", zk, table)
	checkGets(t, ctx, c, table, javaCells)
	sc := c.Scan(table, &Scan{StartRow: []byte("java"), StopRow: []byte("javb"), Caching: 7})
	defer sc.Close(ctx)
	n := 0
	for ; ; n++ {
		r, err := sc.Next(ctx)
		if err != nil {
			break
		}
		if !bytes.Equal(r.Row(), javaCells[n].Row) || !bytes.Equal(r.Cells[0].Value, javaCells[n].Value) {
			t.Fatalf("scan row %d differs", n)
		}
	}
	if n != len(javaCells) {
		t.Fatalf("scan returned %d rows, Java wrote %d", n, len(javaCells))
	}

	// The Java Admin sees what the Go admin asked for.
	desc := hbasetest.Peer(t, "", "describe", zk, table)
	for _, wantLine := range []string{
		"f COMPRESSION=SNAPPY DATA_BLOCK_ENCODING=FAST_DIFF BLOOMFILTER=ROW VERSIONS=3 TTL=864000 IS_MOB=false",
		"m COMPRESSION=NONE DATA_BLOCK_ENCODING=NONE BLOOMFILTER=ROW VERSIONS=1 TTL=2147483647 IS_MOB=true MOB_THRESHOLD=1024 BLOCKSIZE=4096",
		"REGIONS 4",
	} {
		if !strings.Contains(desc, wantLine) {
			t.Errorf("Java describe lacks %q:\n%s", wantLine, desc)
		}
	}
}
