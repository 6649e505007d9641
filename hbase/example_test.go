package hbase_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/simdex/simdex/hbase"
)

// A table with a Snappy-compressed family, a write, and a 4-row lookup.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := hbase.New(hbase.Config{ZooKeeper: []string{"127.0.0.1:22181"}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if err := c.CreateNamespace(ctx, "demo"); err != nil && !errors.Is(err, hbase.ErrNamespaceExists) {
		log.Fatal(err)
	}
	err = c.CreateTable(ctx, &hbase.TableDescriptor{
		Name: "demo:items",
		Families: []hbase.FamilyDescriptor{{Name: "f", Attributes: map[string]string{
			hbase.AttrCompression: "SNAPPY", hbase.AttrBloomFilter: "ROW", hbase.AttrTTL: "2592000",
		}}},
	}, [][]byte{[]byte("4"), []byte("8"), []byte("c")})
	if err != nil && !errors.Is(err, hbase.ErrTableExists) {
		log.Fatal(err)
	}
	err = c.Put(ctx, "demo:items", &hbase.Put{Row: []byte("a1"), Values: []hbase.Value{
		{Family: []byte("f"), Qualifier: []byte("v"), Value: []byte("hello")},
	}})
	if err != nil {
		log.Fatal(err)
	}
	var gets []hbase.Action
	for _, row := range []string{"a1", "b2", "c3", "d4"} {
		gets = append(gets, &hbase.Get{Row: []byte(row)})
	}
	results, err := c.Multi(ctx, "demo:items", gets)
	if err != nil {
		log.Fatal(err)
	}
	for i, r := range results {
		if r.Err != nil {
			log.Printf("row %d: %v (retryable: %v)", i, r.Err, hbase.IsRetryable(r.Err))
			continue
		}
		if v, ok := r.Result.Value("f", "v"); ok {
			fmt.Printf("%s = %s\n", r.Result.Row(), v)
		}
	}
}
