package ctl

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/internal/open"
	"github.com/simdex/simdex/internal/schematest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/schema"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
)

// TestUpgradeVerbHBase: an index of format 8 in a namespace created before
// the meta table's lock family is raised to 9 only with --writers-stopped;
// the upgrade adds the family, and the index's inserts then keep their
// locks there and still see each other.
func TestUpgradeVerbHBase(t *testing.T) {
	ctx := context.Background()
	zk := hbasetest.ZK(t)
	ns := hbasetest.Namespace("upg")
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
	// The tables of a namespace from before the lock family.
	schematest.CreateBeforeLockFamily(ctx, t, c, ns)
	where := open.Store{Kind: "hbase", HBase: hbasestore.Config{ZooKeeper: []string{zk}, Namespace: ns}}
	cfg := kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, AdoptStored: true}
	if _, err := open.Index(ctx, where, cfg); err == nil || !strings.Contains(err.Error(), "lock family") {
		t.Fatalf("a new index (format 9) in a namespace without the lock family: %v, want refused", err)
	}
	// An index of format 8, as written before the lock family (its writers
	// lock in the data family; no Locker here, so nothing is checked).
	st, _, err := where.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := kvindex.Open(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Mutate(ctx, []storage.Mutation{{Kind: storage.Put, Table: storage.TableMeta, Row: []byte("simdex"), Qualifier: []byte("format"), Value: []byte("8")}}); err != nil {
		t.Fatal(err)
	}
	_ = ix.Close()
	insert := func(id string, fp uint64) kvindex.InsertResult {
		t.Helper()
		ix, err := open.Index(ctx, where, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		r, err := ix.Insert(ctx, kvindex.Document{ID: id, Fingerprint: fingerprint.Fingerprint(fp), Time: time.Unix(1e9, 0)}, kvindex.InsertIfUnique, 3)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := insert("a", 0xF0F0); !r.Stored {
		t.Fatalf("format 8: first insert not stored: %+v", r)
	}

	flags := []string{"upgrade", "--hbase-zk", zk, "--hbase-namespace", ns}
	code, out, stderr := run(t, "", flags...)
	if code != 2 || !strings.Contains(stderr, "--writers-stopped") {
		t.Fatalf("without --writers-stopped: exit %d, out %q: %s", code, out, stderr)
	}
	if hasLockFamily(t, c, ns) {
		t.Fatal("a refused upgrade added the lock family")
	}
	if code, out, stderr = run(t, "", append(flags, "--writers-stopped")...); code != 0 || out != "index format 8 -> 9\n" {
		t.Fatalf("upgrade: exit %d, out %q: %s", code, out, stderr)
	}
	if !hasLockFamily(t, c, ns) {
		t.Fatal("the upgrade did not add the lock family")
	}
	// Near-duplicate of "a" (one bit off): found through the index rows.
	if r := insert("b", 0xF0F1); r.Stored || len(r.Duplicates) != 1 || r.Duplicates[0].ID != "a" {
		t.Fatalf("format 9: near-duplicate of a: %+v", r)
	}
	if r := insert("c", 0x0F0F_0000_0000_0000); !r.Stored {
		t.Fatalf("format 9: new document not stored: %+v", r)
	}
	if code, out, stderr = run(t, "", append(flags, "--writers-stopped")...); code != 0 || !strings.Contains(out, "nothing to do") {
		t.Fatalf("second run: exit %d, out %q: %s", code, out, stderr)
	}
}

func hasLockFamily(t *testing.T, c *hbase.Client, ns string) bool {
	t.Helper()
	td, err := c.DescribeTable(context.Background(), ns+":meta")
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(td.Families, func(f hbase.FamilyDescriptor) bool { return f.Name == schema.LockFamily })
}
