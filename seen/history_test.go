package seen

import (
	"slices"
	"testing"

	"github.com/simdex/simdex/internal/indextest"
	"github.com/simdex/simdex/storage"
)

// TestFoldStoreHistory: a FoldAll that folded rows asks a store that keeps
// history to drop the seen table's; one that folded nothing does not ask,
// nor does one with KeepStoreHistory; a failed request leaves the fold's
// own outcome, and the marks, alone.
func TestFoldStoreHistory(t *testing.T) {
	for _, tc := range indextest.HistoryCases(storage.TableSeen) {
		t.Run(tc.Name, func(t *testing.T) {
			st := &indextest.HistoryStore{Store: openPebble(t), Err: tc.Err}
			s := openService(t, st, Config{KeepStoreHistory: tc.Keep})
			if _, err := s.Mark(bg, "u1", []Mark{{ID: "a"}, {ID: "b"}}); err != nil {
				t.Fatal(err)
			}
			sum, err := s.FoldAll(bg)
			if err != nil || sum.RowsFolded != 1 {
				t.Fatalf("FoldAll: %v, %d rows folded; want 1", err, sum.RowsFolded)
			}
			if !slices.Equal(st.Asked, tc.WantAsked) || sum.StoreCompaction != tc.WantState {
				t.Fatalf("asked %v, StoreCompaction %q; want %v, %q", st.Asked, sum.StoreCompaction, tc.WantAsked, tc.WantState)
			}
			seenFlags, err := s.Check(bg, "u1", []string{"a", "b", "c"})
			if err != nil || !slices.Equal(seenFlags, []bool{true, true, false}) {
				t.Fatalf("Check after the fold: %v %v, want [true true false]", seenFlags, err)
			}
			st.Asked = nil
			if sum, err = s.FoldAll(bg); err != nil || sum.RowsFolded != 0 || len(st.Asked) != 0 || sum.StoreCompaction != "" {
				t.Fatalf("second FoldAll: %v, %d rows folded, asked %v, %q; want nothing", err, sum.RowsFolded, st.Asked, sum.StoreCompaction)
			}
		})
	}
}
