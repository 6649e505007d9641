package hbase_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
)

// TestExample runs Example's steps against the test HBase (it skips
// without one, fails under CI) in a namespace of its own, twice (the
// second run finds the namespace and table), and checks that exactly the
// written row is found.
func TestExample(t *testing.T) {
	c, err := hbase.New(hbase.Config{ZooKeeper: []string{hbasetest.ZK(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var b [4]byte
	_, _ = rand.Read(b[:])
	ns := "simdex_example_" + hex.EncodeToString(b[:])
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.DisableTable(ctx, ns+":items"); err != nil {
			t.Logf("cleanup: disable: %v", err)
		}
		if err := c.DeleteTable(ctx, ns+":items"); err != nil {
			t.Logf("cleanup: delete table: %v", err)
		}
		if err := c.DeleteNamespace(ctx, ns); err != nil {
			t.Logf("cleanup: delete namespace: %v", err)
		}
	}()
	for run := range 2 {
		var out strings.Builder
		if err := demo(ctx, c, ns, &out); err != nil {
			t.Fatalf("run %d: %v", run+1, err)
		}
		if got, want := out.String(), "a1 = hello\n"; got != want {
			t.Errorf("run %d printed %q, want %q", run+1, got, want)
		}
	}
}
