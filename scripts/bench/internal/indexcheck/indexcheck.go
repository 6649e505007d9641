// Package indexcheck measures an index built from a fingerprint input
// file ("id,hex fingerprint,time" lines, as scripts/bench/bulkload writes):
// index-table bytes per fingerprint per table, and sampled lookups at
// distance K checked against brute force over the whole input.
//
//	go run ./scripts/bench/indexcheck -data-dir DIR -input fps.csv -queries 200
package indexcheck

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// Run is the tool: its flags in args.
func Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("indexcheck", flag.ContinueOnError)
	dir := fs.String("data-dir", "", "index directory")
	input := fs.String("input", "", "the fingerprint lines the index was loaded from")
	queries := fs.Int("queries", 200, "sampled lookups")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return run(ctx, *dir, *input, *queries)
}

func run(ctx context.Context, dir, input string, queries int) error {
	st, err := pebblestore.Open(dir, pebblestore.Options{})
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
	f, err := os.Open(input)
	if err != nil {
		return err
	}
	defer f.Close()
	var ids []string
	var fps []uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Split(sc.Text(), ",")
		if len(p) != 3 {
			continue
		}
		fp, err := fingerprint.Parse(p[1])
		if err != nil {
			continue
		}
		ids = append(ids, p[0])
		fps = append(fps, uint64(fp))
	}
	stats, err := ix.StatsWith(ctx, kvindex.StatsOptions{FullestRows: 1})
	if err != nil {
		return err
	}
	T := ix.Layout().NumTables()
	fmt.Printf("documents %d, fingerprints %d (input lines %d); index rows %d, index bytes %d = %.2f bytes per fingerprint per table\n",
		stats.Documents, stats.Fingerprints, len(fps), stats.IndexRows, stats.IndexBytes, float64(stats.IndexBytes)/float64(stats.Fingerprints)/float64(T))
	// On-disk bytes of each table's key range (Pebble's estimate: sstable
	// bytes after block compression, including keys).
	for _, t := range []storage.Table{storage.TableIndex, storage.TableFP, storage.TableDocs, storage.TableBands} {
		n, err := st.DB().EstimateDiskUsage([]byte{byte(t)}, []byte{byte(t) + 1})
		if err != nil {
			return err
		}
		per := float64(n) / float64(stats.Fingerprints)
		if t == storage.TableIndex {
			per /= float64(T)
		}
		fmt.Printf("table %s on disk: %d bytes = %.2f bytes per fingerprint%s\n", t, n, per, map[bool]string{true: " per permutation table"}[t == storage.TableIndex])
	}
	if len(fps) == 0 {
		fmt.Println("no fingerprint lines in the input (documents): lookups not checked")
		return nil
	}
	r := rand.New(rand.NewPCG(5, 5))
	K := ix.Layout().K
	var total time.Duration
	for range queries {
		q := fps[r.IntN(len(fps))] ^ 1<<r.IntN(64) ^ 1<<r.IntN(64)
		var want []string
		for i, f := range fps {
			if bits.OnesCount64(f^q) <= K {
				want = append(want, ids[i])
			}
		}
		t0 := time.Now()
		res, err := ix.Lookup(ctx, fingerprint.Fingerprint(q), kvindex.LookupOptions{K: K})
		total += time.Since(t0)
		if err != nil {
			return err
		}
		var got []string
		for _, h := range res.Hits {
			got = append(got, h.ID)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("lookup %016x: got %v, brute force %v", q, got, want)
		}
	}
	fmt.Printf("%d sampled lookups at k=%d all equal brute force; mean lookup %.0f us\n", queries, K, float64(total.Microseconds())/float64(queries))
	return nil
}
