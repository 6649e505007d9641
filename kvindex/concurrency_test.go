package kvindex_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/indextest"
	"github.com/simdex/simdex/kvindex"
)

// Two near-identical documents inserted at once with insert-if-unique: in
// every round exactly one is stored, and the other names it as original.
func TestRacingNearDuplicatesExactlyOneOriginal(t *testing.T) {
	ix := openIndex(t, fingerprint.DefaultLayout)
	near := func(r *rand.Rand, round int, base fingerprint.Fingerprint) []kvindex.Document {
		return []kvindex.Document{
			doc(fmt.Sprintf("r%d-a", round), base, t0),
			doc(fmt.Sprintf("r%d-b", round), flip(r, base, 1+r.IntN(3)), t0.Add(time.Duration(r.IntN(3)-1)*time.Second)),
		}
	}
	raceRounds(t, ix, 200, 50, rand.New(rand.NewPCG(3, 4)), near, func(round int, docs []kvindex.Document, res []kvindex.InsertResult) {
		winner, loser := 0, 1
		if res[1].Stored {
			winner, loser = 1, 0
		}
		if res[loser].Original == nil || res[loser].Original.ID != docs[winner].ID {
			t.Fatalf("round %d: loser's original %+v, want %s", round, res[loser].Original, docs[winner].ID)
		}
		if res[winner].Original != nil {
			t.Fatalf("round %d: the stored document has an original %+v", round, res[winner].Original)
		}
	})
}

// raceRounds runs rounds rounds (short under -short): docs makes two
// documents from r and a random fingerprint base, insertAll inserts them
// at once with insert-if-unique, exactly one must be stored, and check
// (when given) judges the round further.
func raceRounds(t *testing.T, ix *kvindex.Index, rounds, short int, r *rand.Rand,
	docs func(r *rand.Rand, round int, base fingerprint.Fingerprint) []kvindex.Document,
	check func(round int, docs []kvindex.Document, res []kvindex.InsertResult)) {
	t.Helper()
	if testing.Short() {
		rounds = short
	}
	for round := range rounds {
		ds := docs(r, round, fingerprint.Fingerprint(r.Uint64()))
		res := insertAll(t, ix, ds, kvindex.InsertIfUnique)
		if res[0].Stored == res[1].Stored {
			t.Fatalf("round %d: stored = %v, %v; want exactly one", round, res[0].Stored, res[1].Stored)
		}
		if check != nil {
			check(round, ds, res)
		}
	}
}

// Many goroutines insert, replace, delete and look up at once. Afterwards
// the index agrees with what was acknowledged: every live document is found
// by its own fingerprint, deleted ones are not, and the counters match.
func TestConcurrentMixedWorkload(t *testing.T) {
	ix := openIndex(t, fingerprint.DefaultLayout)
	const workers, ops = 6, 120
	// A small pool of fingerprints so that writers collide on rows and
	// share fingerprints.
	pool := make([]fingerprint.Fingerprint, 40)
	r0 := rand.New(rand.NewPCG(9, 9))
	for i := range pool {
		pool[i] = fingerprint.Fingerprint(r0.Uint64())
	}
	var mu sync.Mutex // protects final
	final := map[string]kvindex.Document{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range ops {
				// Each worker owns its ids, so the final state per id is
				// the worker's last acknowledged operation.
				id := fmt.Sprintf("w%d-%d", w, r.IntN(15))
				switch op := r.IntN(10); {
				case op < 5:
					d := doc(id, flip(r, pool[r.IntN(len(pool))], r.IntN(2)), t0.Add(time.Duration(i)*time.Minute))
					if _, err := ix.Insert(bg, d, kvindex.InsertAlways, 3); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					final[id] = d
					mu.Unlock()
				case op < 7:
					err := ix.Delete(bg, id)
					mu.Lock()
					_, had := final[id]
					delete(final, id)
					mu.Unlock()
					if (err == nil) != had {
						t.Errorf("Delete %s: %v (had=%v)", id, err, had)
						return
					}
				default:
					if _, err := ix.Lookup(bg, pool[r.IntN(len(pool))], kvindex.LookupOptions{K: 3}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	fps := map[fingerprint.Fingerprint]bool{}
	for id, d := range final {
		fps[d.Fingerprint] = true
		res := indextest.MustLookup(t, ix, d.Fingerprint, kvindex.LookupOptions{K: 0})
		if !slices.Contains(ids(res.Hits), id) {
			t.Fatalf("live document %s not found by its fingerprint (hits %v)", id, ids(res.Hits))
		}
		for _, h := range res.Hits {
			if g, ok := final[h.ID]; !ok || g.Fingerprint != d.Fingerprint {
				t.Fatalf("stale hit %+v", h)
			}
		}
	}
	for _, p := range pool {
		res, _ := ix.Lookup(bg, p, kvindex.LookupOptions{K: 3})
		for _, h := range res.Hits {
			if g, ok := final[h.ID]; !ok || g.Fingerprint != h.Fingerprint {
				t.Fatalf("hit for a deleted or replaced document: %+v", h)
			}
		}
	}
	st, err := ix.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Documents != int64(len(final)) || st.Fingerprints != int64(len(fps)) {
		t.Fatalf("counters: %d documents, %d fingerprints; want %d, %d", st.Documents, st.Fingerprints, len(final), len(fps))
	}
}
