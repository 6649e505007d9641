package hbase

import (
	"errors"
	"slices"
	"testing"

	"github.com/simdex/simdex/internal/hbasetest"
)

// TestSecureAdminCalls: Flush, MajorCompact and the region reads of their
// progress work over Kerberos and TLS for the table's owner. Where the
// cluster checks permissions, a principal granted nothing is refused a
// Flush and a write at once with ErrAccessDenied (not retried), and its
// refused write leaves nothing behind. HBase accepts its CompactRegion
// and refuses the compaction itself in the background (the AccessController
// checks when the compaction runs, as the requesting user): the call
// succeeds and the store files stay as they were. That is why a store's
// DropHistory flushes first: the flush needs the same permission and
// says so.
func TestSecureAdminCalls(t *testing.T) {
	s := hbasetest.Secure(t)
	tc := s.TLSConfig(t, false)
	owner := secureClient(t, s.ZK, keytabAuth(s, "simdex", "simdex.keytab"), tc)
	table := majorCompactCheck(t, owner)
	if !s.Authorization {
		t.Skip("the secured HBase does not check permissions (SIMDEX_HBASE_AUTHORIZATION=0)")
	}
	ctx := testCtx(t)
	reader := secureClient(t, s.ZK, keytabAuth(s, "simdex-reader", "reader.keytab"), tc)
	row := []byte("written-by-reader")
	for _, call := range []struct {
		name string
		do   func() error
	}{
		{"Flush", func() error { return reader.Flush(ctx, table) }},
		{"Put", func() error {
			return reader.Put(ctx, table, &Put{Row: row, Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: []byte("x")}}})
		}},
	} {
		err := call.do()
		switch {
		case err == nil:
			t.Errorf("%s by a principal granted nothing: no error", call.name)
		case !errors.Is(err, ErrAccessDenied):
			t.Errorf("%s by a principal granted nothing: %v, want ErrAccessDenied", call.name, err)
		case errors.Is(err, ErrRetriesExhausted):
			t.Errorf("%s by a principal granted nothing was retried: %v", call.name, err)
		}
	}
	res, err := owner.Get(ctx, table, &Get{Row: row})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 0 {
		t.Errorf("the refused Put left %d cells", len(res.Cells))
	}

	// One more file in the last region (two: a third would start a minor
	// compaction), then the reader's compaction.
	if err := owner.Put(ctx, table, &Put{Row: []byte("z"), Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: []byte("3")}}}); err != nil {
		t.Fatal(err)
	}
	if err := owner.Flush(ctx, table); err != nil {
		t.Fatalf("Flush by the owner: %v", err)
	}
	anything := func([]int) bool { return true }
	before := waitStoreFiles(t, owner, table, "", anything)
	if slices.Max(before) < 2 {
		t.Fatalf("store files %v after a flush onto a compacted region, want 2 in a region", before)
	}
	if err := reader.MajorCompact(ctx, table); err != nil {
		t.Fatalf("MajorCompact by a principal granted nothing: %v (HBase accepts the request and refuses the compaction when it runs)", err)
	}
	if got := waitStoreFiles(t, owner, table, "", anything); !slices.Equal(got, before) {
		t.Errorf("store files %v after the refused compaction, want %v as before", got, before)
	}
	if err := owner.MajorCompact(ctx, table); err != nil {
		t.Fatalf("MajorCompact by the owner: %v", err)
	}
	waitStoreFiles(t, owner, table, "at most 1 per region after the owner's compaction", func(n []int) bool { return slices.Max(n) <= 1 })
}
