package hbase_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/simdex/simdex/hbase"
)

// Example creates a table with a Snappy-compressed family split into four
// regions, writes a row and looks up four rows in one Multi.
//
// It needs a running HBase (scripts/hbase/start.sh), so it has no Output
// comment: go test compiles it but does not run it. TestExample runs the
// same steps (demo) against the test HBase and checks what they print.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := hbase.New(hbase.Config{ZooKeeper: []string{"127.0.0.1:22181"}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := demo(ctx, c, "demo", os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// demo creates namespace ns (if missing) and its table items, writes row
// a1 and reads a1, b2, c3 and d4 in one Multi, printing the rows found.
func demo(ctx context.Context, c *hbase.Client, ns string, w io.Writer) error {
	if err := c.CreateNamespace(ctx, ns); err != nil && !errors.Is(err, hbase.ErrNamespaceExists) {
		return err
	}
	table := ns + ":items"
	err := c.CreateTable(ctx, &hbase.TableDescriptor{
		Name: table,
		Families: []hbase.FamilyDescriptor{{Name: "f", Attributes: map[string]string{
			hbase.AttrCompression: "SNAPPY", hbase.AttrBloomFilter: "ROW", hbase.AttrTTL: "2592000",
		}}},
	}, [][]byte{[]byte("4"), []byte("8"), []byte("c")})
	if err != nil && !errors.Is(err, hbase.ErrTableExists) {
		return err
	}
	err = c.Put(ctx, table, &hbase.Put{Row: []byte("a1"), Values: []hbase.Value{
		{Family: []byte("f"), Qualifier: []byte("v"), Value: []byte("hello")},
	}})
	if err != nil {
		return err
	}
	var gets []hbase.Action
	for _, row := range []string{"a1", "b2", "c3", "d4"} {
		gets = append(gets, &hbase.Get{Row: []byte(row)})
	}
	results, err := c.Multi(ctx, table, gets)
	if err != nil {
		return err
	}
	for i, r := range results {
		if r.Err != nil {
			// Per-action errors: a caller may retry the retryable ones.
			return fmt.Errorf("row %d: %w (retryable: %v)", i, r.Err, hbase.IsRetryable(r.Err))
		}
		if v, ok := r.Result.Value("f", "v"); ok {
			fmt.Fprintf(w, "%s = %s\n", r.Result.Row(), v)
		}
	}
	return nil
}
