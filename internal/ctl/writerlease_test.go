package ctl

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/internal/open"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/hbasestore"
)

// TestWriterLeaseVerbHBase: writer-lease on switches an index of format 9
// to 10 only with --writers-stopped; the servers that open it then take
// turns: the first writes, a second one's insert is refused as not the
// writer (its checks answer), and once the first closes the second writes
// and still sees the first one's documents; off switches it back.
func TestWriterLeaseVerbHBase(t *testing.T) {
	ctx := context.Background()
	zk := hbasetest.ZK(t)
	ns := hbasetest.Namespace("wlv")
	c, err := hbase.New(hbase.Config{ZooKeeper: []string{zk}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := hbasestore.Drop(ctx, c, ns); err != nil {
			t.Log(err)
		}
		c.Close()
	})
	where := open.Store{Kind: "hbase", HBase: hbasestore.Config{ZooKeeper: []string{zk}, Namespace: ns, CreateTables: true, Compression: "NONE"}}
	cfg := kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, AdoptStored: true}
	ix, err := open.Index(ctx, where, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ix.WriterLease() {
		t.Fatal("a new index takes turns without being asked to")
	}
	ix.Close()

	flags := []string{"writer-lease", "on", "--hbase-zk", zk, "--hbase-namespace", ns}
	if code, out, stderr := run(t, "", flags...); code != 2 || !strings.Contains(stderr, "--writers-stopped") {
		t.Fatalf("without --writers-stopped: exit %d, out %q: %s", code, out, stderr)
	}
	if code, out, stderr := run(t, "", "writer-lease", "maybe", "--hbase-zk", zk, "--hbase-namespace", ns, "--writers-stopped"); code != 2 || !strings.Contains(stderr, "on or off") {
		t.Fatalf("writer-lease maybe: exit %d, out %q: %s", code, out, stderr)
	}
	if code, out, stderr := run(t, "", append(flags, "--writers-stopped")...); code != 0 || out != "index format 9 -> 10\n" {
		t.Fatalf("writer-lease on: exit %d, out %q: %s", code, out, stderr)
	}
	if code, out, stderr := run(t, "", append(flags, "--writers-stopped")...); code != 0 || out != "index format 10: nothing to do\n" {
		t.Fatalf("writer-lease on again: exit %d, out %q: %s", code, out, stderr)
	}

	doc := func(id string, fp uint64) kvindex.Document {
		return kvindex.Document{ID: id, Fingerprint: fingerprint.Fingerprint(fp), Time: time.Unix(1e9, 0)}
	}
	first, err := open.Index(ctx, where, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := open.Index(ctx, where, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if !first.WriterLease() || !second.WriterLease() {
		t.Fatal("the switched index does not take turns")
	}
	if r, err := first.Insert(ctx, doc("a", 0xF0F0), kvindex.InsertIfUnique, 3); err != nil || !r.Stored {
		t.Fatalf("the holder's insert: %+v, %v", r, err)
	}
	if _, err := second.Insert(ctx, doc("b", 0xF0F1), kvindex.InsertIfUnique, 3); !errors.Is(err, kvindex.ErrNotWriter) || !errors.Is(err, kvindex.ErrStore) {
		t.Fatalf("the other process's insert: %v, want ErrNotWriter and ErrStore", err)
	}
	if res, err := second.Lookup(ctx, 0xF0F1, kvindex.LookupOptions{K: 3}); err != nil || len(res.Hits) != 1 || res.Hits[0].ID != "a" {
		t.Fatalf("the other process's check: %+v, %v", res, err)
	}
	first.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := second.Insert(ctx, doc("b", 0xF0F1), kvindex.InsertIfUnique, 3)
		if err == nil {
			if r.Stored || r.Original == nil || r.Original.ID != "a" {
				t.Fatalf("after the takeover, the near-duplicate: %+v", r)
			}
			break
		}
		if !errors.Is(err, kvindex.ErrNotWriter) || time.Now().After(deadline) {
			t.Fatalf("the lease was not taken over after its holder closed: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	second.Close()

	off := []string{"writer-lease", "off", "--hbase-zk", zk, "--hbase-namespace", ns, "--writers-stopped"}
	if code, out, stderr := run(t, "", off...); code != 0 || out != "index format 10 -> 9\n" {
		t.Fatalf("writer-lease off: exit %d, out %q: %s", code, out, stderr)
	}
}
