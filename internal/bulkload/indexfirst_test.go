package bulkload

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// noIngestIndex hides the embedded store's sorted-cell ingest, so that the
// loader writes as it does into HBase (batched puts, index rows first).
type noIngestIndex struct{ *kvindex.Index }

func (n noIngestIndex) Store() storage.Store { return struct{ storage.Store }{n.Index.Store()} }

// TestIndexFirstSameContent: writing the fp and docs cells after the index
// (IndexFirst on the embedded store, and a store without ingest: batched
// puts, several batches in flight, small batches) gives exactly the cells
// of the default write path, and the same summary; the tables are
// committed in the index's write order: every index table, then fp, then
// docs.
func TestIndexFirstSameContent(t *testing.T) {
	dir := t.TempDir()
	docs := genFPs(11, 3000)
	docs = append(docs, genDoc{id: docs[5].id, fp: docs[7].fp, at: docs[9].at}) // a repeated id: the last wins
	glob, _ := inputs(t, dir, docs)
	ref := openIndex(t, filepath.Join(dir, "ref"))
	want, err := Run(bg, ref, withCP(baseConfig(dir, glob), filepath.Join(dir, "cp-ref")))
	if err != nil {
		t.Fatal(err)
	}
	for _, ingest := range []bool{true, false} {
		name := map[bool]string{true: "ingest", false: "puts"}[ingest]
		t.Run(name, func(t *testing.T) {
			ix := openIndex(t, filepath.Join(dir, "ix-"+name))
			cfg := withCP(baseConfig(dir, glob), filepath.Join(dir, "cp-"+name))
			cfg.IndexFirst, cfg.InFlight, cfg.ApplyBytes = ingest, 4, 8<<10
			var mu sync.Mutex
			var order []string
			cfg.beforeCommit = func(kind string) {
				mu.Lock()
				order = append(order, kind)
				mu.Unlock()
			}
			var lix Index = ix
			if !ingest {
				lix = noIngestIndex{ix}
			}
			got, err := Run(bg, lix, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if d := diff(dump(t, ref), dump(t, ix)); d != "" {
				t.Errorf("index-first load differs:\n%s", d)
			}
			got.Duration, want.Duration = 0, 0
			if got != want {
				t.Errorf("summary %+v, want %+v", got, want)
			}
			if got.Runs < 3 {
				t.Errorf("%d runs: the test wants several cell runs", got.Runs)
			}
			n := len(order)
			if n < 3 || !slices.Equal(order[n-2:], []string{"fpcells", "doccells"}) {
				t.Fatalf("commit order %v: want the index tables, then fpcells, then doccells", order)
			}
			for _, k := range order[:n-2] {
				if !strings.HasPrefix(k, "t") {
					t.Errorf("commit order %v: %q before the fp and docs cells", order, k)
				}
			}
		})
	}
}
