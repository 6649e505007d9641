// Package indextest is for tests of the index on a store: near-duplicate
// fingerprints, and insert-if-unique raced through two Index values over
// one store, as two server processes race it.
package indextest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// Flip returns fp with d distinct random bits flipped.
func Flip(r *rand.Rand, fp fingerprint.Fingerprint, d int) fingerprint.Fingerprint {
	for _, b := range r.Perm(64)[:d] {
		fp ^= 1 << b
	}
	return fp
}

// RaceInsertIfUnique runs rounds in which two documents 2 bits apart
// (random fingerprints drawn from seed) are inserted at once with
// insert-if-unique, the one through a and the other through b: in every
// round exactly one must be stored.
func RaceInsertIfUnique(t testing.TB, a, b *kvindex.Index, rounds int, seed uint64) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ixs := [2]*kvindex.Index{a, b}
	r := rand.New(rand.NewPCG(seed, seed))
	for round := range rounds {
		base := fingerprint.Fingerprint(r.Uint64())
		docs := [2]kvindex.Document{
			{ID: fmt.Sprintf("r%d-a", round), Fingerprint: base, Time: at},
			{ID: fmt.Sprintf("r%d-b", round), Fingerprint: Flip(r, base, 2), Time: at.Add(time.Second)},
		}
		var res [2]kvindex.InsertResult
		var errs [2]error
		var wg sync.WaitGroup
		for i := range ixs {
			wg.Go(func() {
				res[i], errs[i] = ixs[i].Insert(ctx, docs[i], kvindex.InsertIfUnique, 3)
			})
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatal(errs)
		}
		if res[0].Stored == res[1].Stored {
			t.Fatalf("round %d: stored %v and %v; want exactly one", round, res[0].Stored, res[1].Stored)
		}
	}
}

// MustLookup is ix.Lookup of fp with opt; an error fails the test.
func MustLookup(t testing.TB, ix *kvindex.Index, fp fingerprint.Fingerprint, opt kvindex.LookupOptions) kvindex.LookupResult {
	t.Helper()
	res, err := ix.Lookup(context.Background(), fp, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Batch collects mutations and applies them through an index's BulkWriter
// in batches of 20,000, as a bulk load writes: Add applies each full
// batch, Flush what is left. An error fails the test.
type Batch struct {
	ix   *kvindex.Index
	muts []storage.Mutation
}

// NewBatch is an empty Batch for ix.
func NewBatch(ix *kvindex.Index) *Batch { return &Batch{ix: ix} }

// Add adds muts, and applies the batch once it holds 20,000 or more.
func (b *Batch) Add(t testing.TB, muts ...storage.Mutation) {
	t.Helper()
	if b.muts = append(b.muts, muts...); len(b.muts) >= 20_000 {
		b.Flush(t)
	}
}

// Flush applies what the batch holds.
func (b *Batch) Flush(t testing.TB) {
	t.Helper()
	if len(b.muts) == 0 {
		return
	}
	if err := b.ix.BulkWriter().Apply(context.Background(), b.muts); err != nil {
		t.Fatal(err)
	}
	b.muts = b.muts[:0]
}
