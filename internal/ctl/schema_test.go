package ctl

import (
	"context"
	"strings"
	"testing"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/storage"
)

// TestSchemaVerbs runs simdexctl schema create, verify, describe and drop on
// the test HBase, and checks that verify reports drift with a non-zero exit.
func TestSchemaVerbs(t *testing.T) {
	zk := hbasetest.ZK(t)
	ns := hbasetest.Namespace("ctl")
	flags := []string{"--hbase-zk", zk, "--hbase-namespace", ns, "--retention", "720h", "--index-regions", "8", "--meta-regions", "4", "--layout-b", "4", "--layout-k", "3"}
	t.Cleanup(func() { run(t, "", append([]string{"schema", "drop", "--yes"}, flags...)...) })

	if code, out, errs := run(t, "", append([]string{"schema", "drop"}, flags...)...); code != 2 || !strings.Contains(errs, "--yes") {
		t.Fatalf("drop without --yes: %d %q %q", code, out, errs)
	}
	if code, out, errs := run(t, "", append([]string{"schema", "verify"}, flags...)...); code != 1 || strings.Count(out, "table missing") != len(storage.Tables) {
		t.Fatalf("verify before create: %d\n%s%s", code, out, errs)
	}
	if code, out, errs := run(t, "", append([]string{"schema", "grant", "--user", "svc"}, flags...)...); code != 1 || !strings.Contains(errs, "does not exist") {
		t.Fatalf("grant before create: %d\n%s%s\nwant the namespace named missing", code, out, errs)
	}
	code, out, errs := run(t, "", append([]string{"schema", "create"}, flags...)...)
	if code != 0 || strings.Count(out, "created ") != len(storage.Tables) {
		t.Fatalf("create: %d\n%s%s", code, out, errs)
	}
	if code, out, errs := run(t, "", append([]string{"schema", "verify"}, flags...)...); code != 0 || !strings.Contains(out, "ok:") {
		t.Fatalf("verify after create: %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, "", append([]string{"schema", "describe"}, flags...)...)
	if code != 0 {
		t.Fatalf("describe: %d %s", code, errs)
	}
	for _, want := range []string{
		"Table " + ns + ":index is ENABLED", "COLUMN FAMILIES DESCRIPTION", "NAME => 'c'",
		"COMPRESSION => 'SNAPPY'", "DATA_BLOCK_ENCODING => 'FAST_DIFF'", "BLOOMFILTER => 'ROW'", "VERSIONS => '1'", "TTL => '2592000'", "IS_MOB => 'true'",
		"Table " + ns + ":meta is ENABLED", "NAME => 'l'", "NEW_VERSION_BEHAVIOR => 'false'",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("describe lacks %q:\n%s", want, out)
		}
	}

	// HBase's own Java Admin sees the same attributes and the pre-splits
	// (8 index regions for B=4: two per permutation table; meta in 4 on
	// its lock rows).
	javaWant := map[string][]string{
		"index": {"c COMPRESSION=NONE DATA_BLOCK_ENCODING=NONE BLOOMFILTER=ROW VERSIONS=1 TTL=2592000 IS_MOB=true MOB_THRESHOLD=102400", "REGIONS 8"},
		"meta":  {"c COMPRESSION=SNAPPY DATA_BLOCK_ENCODING=FAST_DIFF BLOOMFILTER=ROW VERSIONS=1 TTL=2147483647 IS_MOB=false", "REGIONS 4"},
	}
	for table, lines := range javaWant {
		desc := hbasetest.Peer(t, "", "describe", zk, ns+":"+table)
		for _, l := range lines {
			if !strings.Contains(desc, l) {
				t.Errorf("Java Admin describe of %s lacks %q:\n%s", table, l, desc)
			}
		}
	}

	// Drift: an admin changes the docs family's compression.
	c, err := hbase.New(hbase.Config{ZooKeeper: []string{zk}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	td, err := c.DescribeTable(ctx, ns+":docs")
	if err != nil {
		t.Fatal(err)
	}
	td.Families[0].Attributes[hbase.AttrCompression] = "NONE"
	if err := c.ModifyTable(ctx, td); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, "", append([]string{"schema", "verify"}, flags...)...)
	if code != 1 || !strings.Contains(out, "drift: "+ns+":docs: family c: COMPRESSION") {
		t.Fatalf("verify after drift: %d\n%s", code, out)
	}

	if code, out, errs := run(t, "", append([]string{"schema", "drop", "--yes"}, flags...)...); code != 0 {
		t.Fatalf("drop: %d %s %s", code, out, errs)
	}
	if code, out, _ := run(t, "", append([]string{"schema", "verify"}, flags...)...); code != 1 || strings.Count(out, "table missing") != len(storage.Tables) {
		t.Fatalf("verify after drop: %d\n%s", code, out)
	}
}

func TestSchemaPlanVerb(t *testing.T) {
	code, out, errs := run(t, "", "schema", "plan", "--fingerprints", "1000000", "--insert-rate", "10", "--retention", "720h")
	if code != 0 || !strings.Contains(out, "live fingerprints = 1000000 loaded + 10/s x 2592000 s") || !strings.Contains(out, "recommendation: layout B=") {
		t.Fatalf("plan: %d\n%s%s", code, out, errs)
	}
	if code, _, errs := run(t, "", "schema", "create", "--hbase-zk="); code != 2 || !strings.Contains(errs, "--hbase-zk") {
		t.Fatalf("create without --hbase-zk: exit %d %s, want 2", code, errs)
	}
}
