package hbase

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// testNamespace holds every table the tests create.
const testNamespace = "simdex_test"

// newTestClient returns a Client on the test HBase (see hbasetest.ZK).
func newTestClient(t testing.TB) *Client {
	t.Helper()
	return newTestClientWith(t, Config{})
}

// newTestClientWith returns a Client with cfg on the test HBase (its
// ZooKeeper set here), closed when the test ends.
func newTestClientWith(t testing.TB, cfg Config) *Client {
	t.Helper()
	cfg.ZooKeeper = []string{hbasetest.ZK(t)}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// mustMulti sends actions in one Multi and fails the test on its error or
// any action's.
func mustMulti(t testing.TB, ctx context.Context, c *Client, table string, actions []Action) []ActionResult {
	t.Helper()
	res, err := c.Multi(ctx, table, actions)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("action %d: %v", i, r.Err)
		}
	}
	return res
}

func uniqueName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

// testTable returns a client, a context and a table of the test's own
// (createTestTable's), all ending with the test.
func testTable(t testing.TB) (*Client, context.Context, string) {
	t.Helper()
	c := newTestClient(t)
	return c, testCtx(t), createTestTable(t, c)
}

// createTestTable creates namespace:table with families "f" (plain) and
// "m" (MOB), split at g, n, t, and deletes it when the test ends.
func createTestTable(t testing.TB, c *Client) string {
	t.Helper()
	return createTable(t, c, "t", []FamilyDescriptor{
		{Name: "f", Attributes: map[string]string{AttrCompression: "SNAPPY", AttrDataBlockEncoding: "FAST_DIFF", AttrBloomFilter: "ROW", AttrVersions: "3", AttrTTL: "864000"}},
		{Name: "m", Attributes: map[string]string{AttrIsMOB: "true", AttrMOBThreshold: "1024", AttrBlockSize: "4096"}},
	}, "g", "n", "t")
}

// createTable creates testNamespace:prefix_<random> with families, split
// at splits, and deletes it when the test ends.
func createTable(t testing.TB, c *Client, prefix string, families []FamilyDescriptor, splits ...string) string {
	t.Helper()
	ctx := testCtx(t)
	if err := c.CreateNamespace(ctx, testNamespace); err != nil && !errors.Is(err, ErrNamespaceExists) {
		t.Fatalf("CreateNamespace: %v", err)
	}
	name := testNamespace + ":" + uniqueName(prefix)
	var keys [][]byte
	for _, s := range splits {
		keys = append(keys, []byte(s))
	}
	if err := c.CreateTable(ctx, &TableDescriptor{Name: name, Families: families}, keys); err != nil {
		t.Fatalf("CreateTable %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.DisableTable(ctx, name); errors.Is(err, ErrClosed) {
			return // the test closed the client and dropped the table itself
		} else if err != nil {
			t.Logf("cleanup: disable %s: %v", name, err)
			return
		}
		if err := c.DeleteTable(ctx, name); err != nil {
			t.Logf("cleanup: delete %s: %v", name, err)
		}
	})
	return name
}

func TestAdminTableLifecycle(t *testing.T) {
	t.Parallel() // each on its own table; they mostly wait on HBase
	c, ctx, name := testTable(t)

	nss, err := c.Namespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"default", "hbase", testNamespace} {
		if !slices.Contains(nss, want) {
			t.Errorf("Namespaces() = %v, missing %q", nss, want)
		}
	}
	td, err := c.DescribeTable(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if td.Name != name || len(td.Families) != 2 {
		t.Fatalf("DescribeTable = %+v", td)
	}
	want := map[string]map[string]string{
		"f": {AttrCompression: "SNAPPY", AttrDataBlockEncoding: "FAST_DIFF", AttrBloomFilter: "ROW", AttrVersions: "3", AttrTTL: "864000 SECONDS (10 DAYS)"},
		"m": {AttrIsMOB: "true", AttrMOBThreshold: "1024"},
	}
	for _, f := range td.Families {
		for k, v := range want[f.Name] {
			got := f.Attributes[k]
			if got != v && !(k == AttrTTL && got == "864000") {
				t.Errorf("family %s attribute %s = %q, want %q", f.Name, k, got, v)
			}
		}
	}
	tables, err := c.ListTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tables, name) {
		t.Errorf("ListTables() = %v, missing %s", tables, name)
	}
	if err := c.CreateTable(ctx, &TableDescriptor{Name: name, Families: []FamilyDescriptor{{Name: "f"}}}, nil); !errors.Is(err, ErrTableExists) {
		t.Errorf("CreateTable of an existing table: %v, want ErrTableExists", err)
	}
	if _, err := c.DescribeTable(ctx, testNamespace+":no_such_table"); !errors.Is(err, ErrTableNotFound) {
		t.Errorf("DescribeTable(missing): %v, want ErrTableNotFound", err)
	}
	// Modify: add a family, check it is there, then disable and re-enable.
	td.Families = append(td.Families, FamilyDescriptor{Name: "x", Attributes: map[string]string{AttrVersions: "5"}})
	if err := c.ModifyTable(ctx, td); err != nil {
		t.Fatalf("ModifyTable: %v", err)
	}
	td2, err := c.DescribeTable(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(td2.Families) != 3 || td2.Families[2].Attributes[AttrVersions] != "5" {
		t.Fatalf("after ModifyTable: %+v", td2.Families)
	}
	if err := c.DisableTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	if on, err := c.TableEnabled(ctx, name); err != nil || on {
		t.Fatalf("TableEnabled after disable = %v, %v", on, err)
	}
	if err := c.EnableTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, name, &Put{Row: []byte("k"), Values: []Value{{Family: []byte("x"), Qualifier: []byte("q"), Value: []byte("v")}}}); err != nil {
		t.Fatalf("Put into the added family: %v", err)
	}
}

func TestPutGetDelete(t *testing.T) {
	t.Parallel() // each on its own table; they mostly wait on HBase
	c, ctx, table := testTable(t)
	row := []byte("hello")
	f, q := []byte("f"), []byte("q")
	// Versions at base+1000..base+4000 ms (recent: the family's TTL is 10 days).
	base := uint64(time.Now().UnixMilli()) - 10000
	for ts := uint64(1000); ts <= 4000; ts += 1000 {
		if err := c.Put(ctx, table, &Put{Row: row, Timestamp: base + ts, Values: []Value{{Family: f, Qualifier: q, Value: fmt.Appendf(nil, "v%d", ts)}}}); err != nil {
			t.Fatal(err)
		}
	}
	// A binary value and a big MOB value in the other family.
	bin := []byte{0, 1, 2, 0xFF, 0xFE, 0}
	mob := bytes.Repeat([]byte("mob!"), 1000)
	if err := c.Put(ctx, table, &Put{Row: row, Values: []Value{{Family: f, Qualifier: []byte("bin"), Value: bin}, {Family: []byte("m"), Qualifier: q, Value: mob}}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Get(ctx, table, &Get{Row: row, MaxVersions: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cell := range res.Cells {
		if string(cell.Qualifier) == "q" && string(cell.Family) == "f" {
			got = append(got, fmt.Sprintf("%d=%s", cell.Timestamp-base, cell.Value))
		}
		if !bytes.Equal(cell.Row, row) || cell.Type != CellPut {
			t.Errorf("cell %+v: wrong row or type", cell)
		}
	}
	// VERSIONS is 3: the oldest of four versions is gone.
	if want := []string{"4000=v4000", "3000=v3000", "2000=v2000"}; !slices.Equal(got, want) {
		t.Errorf("versions = %v, want %v", got, want)
	}
	if v, ok := res.Value("f", "bin"); !ok || !bytes.Equal(v, bin) {
		t.Errorf("f:bin = %x, %v", v, ok)
	}
	if v, ok := res.Value("m", "q"); !ok || !bytes.Equal(v, mob) {
		t.Errorf("m:q = %d bytes, %v; want the %d-byte MOB value", len(v), ok, len(mob))
	}
	// Delete one version, then the column, then the family.
	if err := c.Delete(ctx, table, &Delete{Row: row, Targets: []DeleteTarget{{Family: f, Qualifier: q, Kind: DeleteColumnVersion, Timestamp: base + 4000}}}); err != nil {
		t.Fatal(err)
	}
	res, err = c.Get(ctx, table, &Get{Row: row, Columns: []Column{{Family: f, Qualifiers: [][]byte{q}}}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Value("f", "q"); string(v) != "v3000" {
		t.Errorf("after deleting version 4000: f:q = %q, want v3000", v)
	}
	if err := c.Delete(ctx, table, &Delete{Row: row, Targets: []DeleteTarget{{Family: f, Qualifier: q, Kind: DeleteColumnVersions}}}); err != nil {
		t.Fatal(err)
	}
	res, err = c.Get(ctx, table, &Get{Row: row})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Value("f", "q"); ok {
		t.Error("f:q still there after deleting the column")
	}
	if _, ok := res.Value("f", "bin"); !ok {
		t.Error("f:bin gone after deleting only f:q")
	}
	if err := c.Delete(ctx, table, &Delete{Row: row, Targets: []DeleteTarget{{Family: f, Kind: DeleteFamily}}}); err != nil {
		t.Fatal(err)
	}
	res, err = c.Get(ctx, table, &Get{Row: row})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 1 || string(res.Cells[0].Family) != "m" {
		t.Errorf("after deleting family f: %d cells, want only m:q", len(res.Cells))
	}
	if err := c.Delete(ctx, table, &Delete{Row: row}); err != nil {
		t.Fatal(err)
	}
	res, err = c.Get(ctx, table, &Get{Row: row})
	if err != nil || len(res.Cells) != 0 {
		t.Errorf("after deleting the row: %d cells, %v", len(res.Cells), err)
	}
	// Errors a user relies on.
	if _, err := c.Get(ctx, testNamespace+":no_such_table", &Get{Row: row}); !errors.Is(err, ErrTableNotFound) {
		t.Errorf("Get on a missing table: %v, want ErrTableNotFound", err)
	}
	err = c.Put(ctx, table, &Put{Row: row, Values: []Value{{Family: []byte("nope"), Qualifier: q, Value: q}}})
	if !errors.Is(err, ErrNoSuchFamily) || IsRetryable(err) {
		t.Errorf("Put into a missing family: %v, want non-retryable ErrNoSuchFamily", err)
	}
}

func TestMultiScanAcrossRegions(t *testing.T) {
	t.Parallel() // each on its own table; they mostly wait on HBase
	c, ctx, table := testTable(t)
	f, q := []byte("f"), []byte("q")
	// 26 rows a..z spread over the four regions (split at g, n, t).
	var puts []Action
	var rows []string
	for ch := 'a'; ch <= 'z'; ch++ {
		row := string(ch) + "-row"
		rows = append(rows, row)
		puts = append(puts, &Put{Row: []byte(row), Values: []Value{{Family: f, Qualifier: q, Value: []byte("v" + row)}}})
	}
	mustMulti(t, ctx, c, table, puts)
	// A multi-get of 4 rows in different regions, one missing, and a bad
	// action (unknown family) whose error must not fail the others.
	gets := []Action{
		&Get{Row: []byte("z-row")}, &Get{Row: []byte("a-row")}, &Get{Row: []byte("absent")}, &Get{Row: []byte("m-row")},
		&Put{Row: []byte("b-row"), Values: []Value{{Family: []byte("nope"), Qualifier: q, Value: q}}},
	}
	res, err := c.Multi(ctx, table, gets)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"vz-row", "va-row", "", "vm-row"} {
		if res[i].Err != nil {
			t.Fatalf("get %d: %v", i, res[i].Err)
		}
		v, _ := res[i].Result.Value("f", "q")
		if string(v) != want {
			t.Errorf("get %d = %q, want %q", i, v, want)
		}
	}
	if !errors.Is(res[4].Err, ErrNoSuchFamily) {
		t.Errorf("bad put in Multi: %v, want ErrNoSuchFamily", res[4].Err)
	}

	scanRows := func(s *Scan) []string {
		t.Helper()
		sc := c.Scan(table, s)
		defer sc.Close(ctx)
		var got []string
		for {
			r, err := sc.Next(ctx)
			if err == io.EOF {
				return got
			}
			if err != nil {
				t.Fatalf("scan %+v: %v", s, err)
			}
			got = append(got, string(r.Row()))
		}
	}
	reversed := slices.Clone(rows)
	slices.Reverse(reversed)
	tests := []struct {
		name string
		scan Scan
		want []string
	}{
		{"all", Scan{Caching: 3}, rows},
		{"range", Scan{StartRow: []byte("c"), StopRow: []byte("p")}, rows[2:15]},
		{"limit", Scan{StartRow: []byte("f"), Limit: 5, Caching: 2}, rows[5:10]},
		{"reversed all", Scan{Reversed: true, Caching: 4}, reversed},
		{"reversed range", Scan{Reversed: true, StartRow: []byte("u-row"), StopRow: []byte("e")}, reversed[5:22]},
		{"small result size", Scan{MaxResultSize: 1}, rows},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := scanRows(&tc.scan); !slices.Equal(got, tc.want) {
				t.Errorf("rows = %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestCheckAndMutateAndIncrement(t *testing.T) {
	t.Parallel() // each on its own table; they mostly wait on HBase
	c, ctx, table := testTable(t)
	f, q := []byte("f"), []byte("owner")
	row := []byte("k-claim")
	claim := func(who string) bool {
		ok, err := c.CheckAndMutate(ctx, table, Check{Row: row, Family: f, Qualifier: q, Op: Equal},
			&Put{Row: row, Values: []Value{{Family: f, Qualifier: q, Value: []byte(who)}}})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	// Many concurrent claimers, exactly one wins.
	const n = 8
	wins := make(chan string, n)
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			if who := fmt.Sprintf("w%d", i); claim(who) {
				wins <- who
			}
		}()
	}
	for range n {
		<-done
	}
	close(wins)
	var winners []string
	for w := range wins {
		winners = append(winners, w)
	}
	if len(winners) != 1 {
		t.Fatalf("winners = %v, want exactly one", winners)
	}
	res, err := c.Get(ctx, table, &Get{Row: row})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := res.Value("f", "owner"); string(v) != winners[0] {
		t.Errorf("stored owner %q, winner %q", v, winners[0])
	}
	// Compare-and-set on the value.
	ok, err := c.CheckAndMutate(ctx, table, Check{Row: row, Family: f, Qualifier: q, Op: Equal, Value: []byte("someone-else")},
		&Delete{Row: row})
	if err != nil || ok {
		t.Errorf("CheckAndMutate with a wrong value = %v, %v; want false", ok, err)
	}
	ok, err = c.CheckAndMutate(ctx, table, Check{Row: row, Family: f, Qualifier: q, Op: Equal, Value: []byte(winners[0])},
		&Delete{Row: row})
	if err != nil || !ok {
		t.Errorf("CheckAndMutate with the right value = %v, %v; want true", ok, err)
	}
	// Increments from several goroutines add up.
	ctr := []byte("c-counter")
	errs := make(chan error, 10)
	for range 10 {
		go func() {
			_, err := c.Increment(ctx, table, &Increment{Row: ctr, Columns: []IncrementColumn{{Family: f, Qualifier: []byte("n"), Amount: 3}}})
			errs <- err
		}()
	}
	for range 10 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	r, err := c.Increment(ctx, table, &Increment{Row: ctr, Columns: []IncrementColumn{{Family: f, Qualifier: []byte("n"), Amount: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := r.Value("f", "n")
	if len(v) != 8 || int64(binary.BigEndian.Uint64(v)) != 29 {
		t.Errorf("counter = %x, want 29", v)
	}
	if _, err := c.CheckAndMutate(ctx, table, Check{Row: []byte("a")}, &Put{Row: []byte("b"), Values: []Value{{Family: f, Qualifier: q}}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("CheckAndMutate across rows: %v", err)
	}
}
