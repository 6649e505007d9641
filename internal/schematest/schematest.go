// Package schematest sets up HBase namespaces as older versions of simdex
// left them, for tests of what reads and upgrades them.
package schematest

import (
	"context"
	"testing"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/schema"
)

// CreateBeforeLockFamily creates namespace ns with the tables of the
// default schema as they were before the meta table's lock family: every
// table with its data family only.
func CreateBeforeLockFamily(ctx context.Context, t testing.TB, c *hbase.Client, ns string) {
	t.Helper()
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for _, tb := range (schema.Schema{Namespace: ns, Compression: "NONE"}).WithDefaults().Tables() {
		td := tb.Descriptor
		td.Families = td.Families[:1]
		if err := c.CreateTable(ctx, &td, tb.SplitKeys); err != nil {
			t.Fatal(err)
		}
	}
}
