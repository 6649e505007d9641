package compaction_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/compaction"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/indextest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// TestStoreHistory: a run that rewrote index rows asks a store that keeps
// history to drop the index table's; a run that rewrote nothing does not
// ask, nor does one with KeepStoreHistory; a failed request leaves the
// run's own outcome alone.
func TestStoreHistory(t *testing.T) {
	for _, tc := range indextest.HistoryCases(storage.TableIndex) {
		t.Run(tc.Name, func(t *testing.T) {
			ps, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			st := &indextest.HistoryStore{Store: ps, Err: tc.Err}
			ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: 1, BucketWidth: 24 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			for i := range 20 {
				if _, err := ix.Insert(bg, kvindex.Document{ID: fmt.Sprint(i), Fingerprint: fingerprint.Fingerprint(uint64(i) * 0x9e3779b97f4a7c15), Time: now}, kvindex.InsertAlways, 3); err != nil {
					t.Fatal(err)
				}
			}
			c := newCompactor(t, ix, compaction.Config{KeepStoreHistory: tc.Keep})
			s, err := c.Run(bg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if s.RowsRewritten == 0 {
				t.Fatal("first run rewrote no row")
			}
			if !slices.Equal(st.Asked, tc.WantAsked) || s.StoreCompaction != tc.WantState {
				t.Fatalf("asked %v, StoreCompaction %q; want %v, %q", st.Asked, s.StoreCompaction, tc.WantAsked, tc.WantState)
			}
			// Nothing left to fold: nothing rewritten, nothing asked.
			st.Asked = nil
			if s, err = c.Run(bg); err != nil || s.RowsRewritten != 0 || len(st.Asked) != 0 || s.StoreCompaction != "" {
				t.Fatalf("second run: %v, %d rows rewritten, asked %v, %q; want nothing", err, s.RowsRewritten, st.Asked, s.StoreCompaction)
			}
		})
	}
}
