package kvindex_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// groupSizes returns the count and sum of the group-size histogram.
func groupSizes(t *testing.T, reg *prometheus.Registry) (count uint64, sum float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "simdex_insert_group_size" {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	return 0, 0
}

// TestGroupCommitMatchesBatch: documents that fill one group (GroupMax of
// them, released at once) get exactly the results InsertBatch gives the
// same documents on a second index, the oracle: groups of near-duplicates
// keep the earliest (time, id) as the original whatever order the callers
// arrived in.
func TestGroupCommitMatchesBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n = 24
	var docs []kvindex.Document
	for c := range n / 4 { // clusters of 4 near-duplicates with spread times
		base := fingerprint.Fingerprint(r.Uint64())
		for j := range 4 {
			fp := base
			if j > 0 {
				fp = flip(r, base, 1+r.IntN(3))
			}
			docs = append(docs, doc(fmt.Sprintf("c%d-%d", c, j), fp, t0.Add(time.Duration(r.IntN(5))*time.Second)))
		}
	}
	for _, mode := range []kvindex.InsertMode{kvindex.InsertIfUnique, kvindex.InsertAlways} {
		t.Run(mode.String(), func(t *testing.T) {
			reg := prometheus.NewRegistry()
			// A window far longer than the test: the group closes because it is full.
			grouped := openAt(t, t.TempDir(), kvindex.Config{GroupWindow: time.Second, GroupMax: n, Registerer: reg}, true)
			oracle := openAt(t, t.TempDir(), kvindex.Config{}, true)
			got := insertAll(t, grouped, docs, mode)
			want, errs, err := oracle.InsertBatch(bg, docs, mode, 3)
			if err != nil || errors.Join(errs...) != nil {
				t.Fatal(err, errs)
			}
			for i := range docs {
				if got[i].Stored != want[i].Stored || origID(got[i]) != origID(want[i]) || len(got[i].Duplicates) != len(want[i].Duplicates) {
					t.Errorf("%s: grouped stored=%v original=%q dups=%d; batch stored=%v original=%q dups=%d", docs[i].ID,
						got[i].Stored, origID(got[i]), len(got[i].Duplicates), want[i].Stored, origID(want[i]), len(want[i].Duplicates))
				}
			}
			if count, sum := groupSizes(t, reg); count != 1 || sum != n {
				t.Fatalf("%d groups of %v documents in all; want one group of %d", count, sum, n)
			}
		})
	}
}

func origID(r kvindex.InsertResult) string {
	if r.Original == nil {
		return ""
	}
	return r.Original.ID
}

// TestGroupCommitExactlyOneOriginal: concurrent near-duplicates with a
// short window (several groups, arrival order varies): exactly one stored
// per round and every other names it.
func TestGroupCommitExactlyOneOriginal(t *testing.T) {
	reg := prometheus.NewRegistry()
	ix := openAt(t, t.TempDir(), kvindex.Config{GroupWindow: 2 * time.Millisecond, GroupMax: 4, Registerer: reg}, true)
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 30 {
		base := fingerprint.Fingerprint(r.Uint64())
		var docs []kvindex.Document
		for j := range 10 {
			docs = append(docs, kvindex.Document{ID: fmt.Sprintf("r%d-%d", round, j), Fingerprint: flip(r, base, r.IntN(2))}) // pairwise within 2; Time: on arrival
		}
		res := insertAll(t, ix, docs, kvindex.InsertIfUnique)
		var stored []string
		for i, x := range res {
			if x.Stored {
				stored = append(stored, docs[i].ID)
			}
		}
		if len(stored) != 1 {
			t.Fatalf("round %d: stored %v; want exactly one", round, stored)
		}
		for i, x := range res {
			if !x.Stored && origID(x) != stored[0] {
				t.Fatalf("round %d: %s names %q, the original is %s", round, docs[i].ID, origID(x), stored[0])
			}
		}
	}
	if count, sum := groupSizes(t, reg); count == 0 || sum/float64(count) <= 1 {
		t.Fatalf("%d groups for %v documents: nothing was grouped", count, sum)
	}
}

// TestGroupCommitSameIDAndCancel: the same id twice at once is never put in
// one batch (which would refuse it): both calls succeed, one replacing the
// other. A member whose context ends while its group waits gets its own
// context error; the rest of the group is unaffected.
func TestGroupCommitSameIDAndCancel(t *testing.T) {
	ix := openAt(t, t.TempDir(), kvindex.Config{GroupWindow: 50 * time.Millisecond}, true)
	d := doc("same", 0x1234, t0)
	res := insertAll(t, ix, []kvindex.Document{d, d}, kvindex.InsertAlways)
	if !res[0].Stored || !res[1].Stored || res[0].Replaced == res[1].Replaced {
		t.Fatalf("same id twice: %+v", res)
	}

	leaderDone := make(chan error, 1)
	go func() {
		_, err := ix.Insert(bg, doc("leader", 0xabcdef, t0), kvindex.InsertAlways, 3)
		leaderDone <- err
	}()
	time.Sleep(5 * time.Millisecond) // the leader's group is open
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := ix.Insert(ctx, doc("gone", 0xfedcba, t0), kvindex.InsertAlways, 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled member: %v, want context.Canceled", err)
	}
	if err := <-leaderDone; err != nil {
		t.Fatalf("leader after a member left: %v", err)
	}
	if _, err := ix.Get(bg, "leader"); err != nil {
		t.Fatal(err)
	}
}

func TestGroupConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg kvindex.Config
		ok  bool
	}{
		{kvindex.Config{RecipeVersion: 1, GroupWindow: 2 * time.Millisecond}, true},
		{kvindex.Config{RecipeVersion: 1, GroupWindow: 2 * time.Millisecond, GroupMax: 1}, true},
		{kvindex.Config{RecipeVersion: 1, GroupWindow: -time.Millisecond}, false},
		{kvindex.Config{RecipeVersion: 1, GroupWindow: 2 * time.Second}, false},
		{kvindex.Config{RecipeVersion: 1, GroupMax: -1}, false},
		{kvindex.Config{RecipeVersion: 1, GroupMax: 20000}, false},
		{kvindex.Config{RecipeVersion: 1, GroupsInFlight: -1}, false},
		{kvindex.Config{RecipeVersion: 1, GroupsInFlight: 4}, true},
	} {
		if err := tc.cfg.Validate(); (err == nil) != tc.ok || (err != nil && !errors.Is(err, kvindex.ErrConfig)) {
			t.Errorf("Validate(window %v, max %d) = %v, want ok=%v", tc.cfg.GroupWindow, tc.cfg.GroupMax, err, tc.ok)
		}
	}
}
