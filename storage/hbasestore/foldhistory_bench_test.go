package hbasestore_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/compaction"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/seen"
)

var foldCycles = flag.Int("hbstore.foldcycles", 200, "insert-fold-delete-fold cycles of BenchmarkFoldedRowLookup")

// BenchmarkFoldedRowLookup: lookups that read index rows simdex's own
// compaction has rewritten many times. The data families keep
// NEW_VERSION_BEHAVIOR, under which HBase keeps every version and delete
// marker of a cell through flushes and minor compactions, until a major
// compaction; this measures what that history costs a reader of the
// rows a live index folds most.
//
// Each cycle inserts 10 documents whose fingerprints share three of the
// four 16-bit blocks (so three index rows gain 10 delta cells each),
// folds them (the base cell rewritten, the deltas deleted), deletes the
// documents (tombstone cells) and folds again. One anchor document stays,
// so every lookup has a hit. The sub-benchmarks time lookups of a
// fingerprint 1 bit from the anchor after 1 cycle, after a quarter of
// -hbstore.foldcycles and after all of them; with history=kept
// (compaction.Config.KeepStoreHistory) then after an Admin flush of the
// namespace and after a major compaction of its index table; with
// history=dropped each run that folded asks HBase for that major
// compaction itself, as servers do by default.
func BenchmarkFoldedRowLookup(b *testing.B) {
	for _, mode := range []string{"kept", "dropped"} {
		b.Run("history="+mode, func(b *testing.B) { foldedRowLookup(b, mode == "kept") })
	}
}

func foldedRowLookup(b *testing.B, keep bool) {
	_, ix, zk, ns := openFreshIndex(b, "fold")
	comp, err := compaction.New(ix, compaction.Config{KeepStoreHistory: keep})
	if err != nil {
		b.Fatal(err)
	}
	base := rand.New(rand.NewPCG(7, 7)).Uint64() &^ 0xffff
	anchor := kvindex.Document{ID: "anchor", Fingerprint: fingerprint.Fingerprint(base | 0x8000), Time: t0}
	if _, err := ix.Insert(bg, anchor, kvindex.InsertAlways, 3); err != nil {
		b.Fatal(err)
	}
	docs := make([]kvindex.Document, 10)
	for i := range docs {
		docs[i] = kvindex.Document{ID: fmt.Sprintf("churn-%d", i), Fingerprint: fingerprint.Fingerprint(base | uint64(i+1)), Time: t0}
	}
	done := 0
	cycle := func(n int) {
		for ; done < n; done++ {
			if _, errs, err := ix.InsertBatch(bg, docs, kvindex.InsertAlways, 3); err != nil {
				b.Fatal(err)
			} else {
				for _, e := range errs {
					if e != nil {
						b.Fatal(e)
					}
				}
			}
			if _, err := comp.Run(bg); err != nil {
				b.Fatal(err)
			}
			for _, d := range docs {
				if err := ix.Delete(bg, d.ID); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := comp.Run(bg); err != nil {
				b.Fatal(err)
			}
		}
	}
	query := anchor.Fingerprint ^ 1 // reads the three folded rows
	measure := func(name string) {
		b.Run(name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				t := time.Now()
				res, err := ix.Lookup(bg, query, kvindex.LookupOptions{K: 3})
				lat = append(lat, time.Since(t))
				if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != anchor.ID {
					b.Fatalf("lookup: %v %+v, want the anchor alone", err, res.Hits)
				}
			}
			reportPercentiles(b, lat)
		})
	}
	for _, n := range []int{1, max(*foldCycles/4, 2), max(*foldCycles, 3)} {
		start := time.Now()
		cycle(n)
		b.Logf("%d cycles done (%s)", n, time.Since(start).Round(time.Millisecond))
		measure(fmt.Sprintf("cycles=%d", n))
	}
	if !keep {
		return
	}
	hbasetest.Peer(b, "", "flush", zk, ns)
	measure("after-flush")
	hbasetest.Peer(b, "", "major-compact", zk, ns+":index")
	measure("after-major-compaction")
}

// BenchmarkFoldedSeenRow: checks of a seen row the fold has rewritten many
// times, as BenchmarkFoldedRowLookup for index rows. Each cycle marks 10
// new items for one user and folds (the day's cell rewritten, the mark
// deltas deleted); the timed call checks 10 ids, 5 of them seen.
func BenchmarkFoldedSeenRow(b *testing.B) {
	for _, mode := range []string{"kept", "dropped"} {
		b.Run("history="+mode, func(b *testing.B) { foldedSeenRow(b, mode == "kept") })
	}
}

func foldedSeenRow(b *testing.B, keep bool) {
	st, _, zk, ns := openFreshIndex(b, "sfold")
	svc, err := seen.Open(bg, st, seen.Config{KeepStoreHistory: keep, Locker: st.Locker()})
	if err != nil {
		b.Fatal(err)
	}
	done := 0
	cycle := func(n int) {
		for ; done < n; done++ {
			marks := make([]seen.Mark, 10)
			for i := range marks {
				marks[i] = seen.Mark{ID: fmt.Sprintf("item-%d-%d", done, i)}
			}
			if _, err := svc.Mark(bg, "reader", marks); err != nil {
				b.Fatal(err)
			}
			if _, err := svc.FoldAll(bg); err != nil {
				b.Fatal(err)
			}
		}
	}
	measure := func(name string) {
		ids := []string{"item-0-0", "item-0-1", "item-0-2", "item-0-3", "item-0-4", "never-0", "never-1", "never-2", "never-3", "never-4"}
		b.Run(name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				t := time.Now()
				got, err := svc.Check(bg, "reader", ids)
				lat = append(lat, time.Since(t))
				if err != nil || !slices.Equal(got, []bool{true, true, true, true, true, false, false, false, false, false}) {
					b.Fatalf("check: %v %v", err, got)
				}
			}
			reportPercentiles(b, lat)
		})
	}
	for _, n := range []int{1, max(*foldCycles/4, 2), max(*foldCycles, 3)} {
		cycle(n)
		measure(fmt.Sprintf("cycles=%d", n))
	}
	if !keep {
		return
	}
	hbasetest.Peer(b, "", "flush", zk, ns)
	hbasetest.Peer(b, "", "major-compact", zk, ns+":seen")
	measure("after-major-compaction")
}
