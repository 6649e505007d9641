package hbasestore_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/compaction"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/hbasestore"
)

// openFreshIndex opens an index with the store's lease Locker on a fresh
// namespace (openFreshWith's), closed when the test ends; it returns the
// ZooKeeper address and the namespace too.
func openFreshIndex(t testing.TB, prefix string) (*hbasestore.Store, *kvindex.Index, string, string) {
	t.Helper()
	zk := hbasetest.ZK(t)
	var ns string
	st := openFreshWith(t, prefix, func(n string) hbasestore.Config {
		ns = n
		return hbasestore.Config{ZooKeeper: []string{zk}, Namespace: n}
	})
	ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: 1, Locker: st.Locker()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return st, ix, zk, ns
}

// TestCompactionDropsHistory: on HBase, a compaction run that folded index
// rows gets the index table major-compacted (each region down to one
// store file, the folded deltas' history gone), and every document is
// still found.
func TestCompactionDropsHistory(t *testing.T) {
	st, ix, _, ns := openFreshIndex(t, "hist")
	table := ns + ":index"
	var fps []fingerprint.Fingerprint
	for round := range 2 {
		for i := range 30 {
			fp := fingerprint.Fingerprint(uint64(round*30+i+1) * 0x9e3779b97f4a7c15)
			fps = append(fps, fp)
			if _, err := ix.Insert(bg, kvindex.Document{ID: fmt.Sprintf("d%d-%d", round, i), Fingerprint: fp, Time: t0}, kvindex.InsertAlways, 3); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Client().Flush(bg, table); err != nil {
			t.Fatalf("Flush: %v", err)
		}
	}
	files, err := st.Client().StoreFiles(bg, table)
	if err != nil || slices.Max(files) < 2 {
		t.Fatalf("store files before: %v, %v; want 2 in some region", files, err)
	}
	c, err := compaction.New(ix, compaction.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Run(bg)
	if err != nil || s.RowsRewritten == 0 || s.StoreCompaction != "requested" {
		t.Fatalf("Run: %v, %d rows rewritten, store compaction %q", err, s.RowsRewritten, s.StoreCompaction)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		busy, err := st.Client().Compacting(bg, table)
		if err != nil {
			t.Fatal(err)
		}
		files, err = st.Client().StoreFiles(bg, table)
		if err != nil {
			t.Fatal(err)
		}
		if !busy && slices.Max(files) <= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store files %v (compacting %v) 2 minutes after the run, want at most 1 per region", files, busy)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for i, fp := range fps {
		res, err := ix.Lookup(bg, fp, kvindex.LookupOptions{K: 0})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != fmt.Sprintf("d%d-%d", i/30, i%30) {
			t.Fatalf("lookup of document %d: %v %+v", i, err, res.Hits)
		}
	}
}
