// Package compaction measures compaction on an existing embedded
// index (e.g. one built by cmd/bulkload): it first adds -deltas documents
// with random fingerprints as online inserts write them (fp and docs cells,
// one delta cell per table, counters), then runs one compaction and prints
// time and on-disk bytes before and after.
//
//	go run ./scripts/bench/compaction -data-dir DIR -deltas 1000000
package compaction

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/simdex/simdex/compaction"
	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// Run is the tool: its flags in args.
func Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("compaction", flag.ContinueOnError)
	dir := fs.String("data-dir", "", "index directory")
	n := fs.Int("deltas", 1000000, "documents to add as delta cells first")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return run(ctx, *dir, *n)
}

func run(ctx context.Context, dir string, n int) error {
	st, err := pebblestore.Open(dir, pebblestore.Options{NoSync: true})
	if err != nil {
		return err
	}
	ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, AdoptStored: true, NoCreate: true})
	if errors.Is(err, kvindex.ErrNoIndex) {
		return fmt.Errorf("no index in %s", dir)
	}
	if err != nil {
		return err
	}
	defer ix.Close()
	r := rand.New(rand.NewPCG(99, 1))
	start := time.Now()
	var muts []storage.Mutation
	for i := range n {
		fp := fingerprint.Fingerprint(r.Uint64())
		at := time.Unix(1700000000+int64(r.IntN(365*86400)), 0)
		cells, err := ix.BulkWriter().InsertCells(kvindex.Document{ID: fmt.Sprintf("delta-%d", i), Fingerprint: fp, Time: at})
		if err != nil {
			return err
		}
		muts = append(muts, cells...)
		if len(muts) > 50000 || i == n-1 {
			if err := ix.BulkWriter().Apply(ctx, append(muts, ix.BulkWriter().Counters(int64(len(muts)/6), int64(len(muts)/6))...)); err != nil {
				return err
			}
			muts = muts[:0]
		}
	}
	if err := st.Flush(); err != nil {
		return err
	}
	before := du(dir)
	fmt.Printf("added %d delta documents in %.1fs; store %d bytes\n", n, time.Since(start).Seconds(), before)
	c, err := compaction.New(ix, compaction.Config{Logger: slog.New(slog.NewTextHandler(os.Stdout, nil))})
	if err != nil {
		return err
	}
	t0 := time.Now()
	s, err := c.Run(ctx)
	if err != nil {
		return err
	}
	el := time.Since(t0)
	if err := st.Flush(); err != nil {
		return err
	}
	if err := st.DB().Compact(ctx, []byte{0}, []byte{0xff}, true); err != nil {
		return err
	}
	after := du(dir)
	fmt.Printf("compaction: %.1fs, %d rows rewritten, %d deltas folded; row bytes %d -> %d; store %d -> %d bytes (after a Pebble full compaction)\n",
		el.Seconds(), s.RowsRewritten, s.DeltasFolded, s.BytesBefore, s.BytesAfter, before, after)
	return nil
}

func du(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
