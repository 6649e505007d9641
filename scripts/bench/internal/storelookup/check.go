package storelookup

import (
	"bufio"
	"context"
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

// printSizes prints the index's rows and bytes per fingerprint per
// permutation table and, on the embedded store, each table's bytes on disk
// (Pebble's estimate: sstable bytes after block compression, keys
// included): what a load costs in space, beside what its lookups cost in
// time.
func printSizes(ctx context.Context, ix *kvindex.Index) error {
	stats, err := ix.StatsWith(ctx, kvindex.StatsOptions{FullestRows: 1})
	if err != nil {
		return err
	}
	if stats.Fingerprints == 0 {
		return fmt.Errorf("the index holds no fingerprint")
	}
	T := ix.Layout().NumTables()
	fmt.Printf("documents %d, fingerprints %d; index rows %d, index bytes %d = %.2f bytes per fingerprint per table\n",
		stats.Documents, stats.Fingerprints, stats.IndexRows, stats.IndexBytes, float64(stats.IndexBytes)/float64(stats.Fingerprints)/float64(T))
	ps, ok := ix.Store().(*pebblestore.Store)
	if !ok {
		return nil
	}
	for _, t := range []storage.Table{storage.TableIndex, storage.TableFP, storage.TableDocs, storage.TableBands} {
		n, err := ps.DB().EstimateDiskUsage([]byte{byte(t)}, []byte{byte(t) + 1})
		if err != nil {
			return err
		}
		per, unit := float64(n)/float64(stats.Fingerprints), ""
		if t == storage.TableIndex {
			per, unit = per/float64(T), " per permutation table"
		}
		fmt.Printf("table %s on disk: %d bytes = %.2f bytes per fingerprint%s\n", t, n, per, unit)
	}
	return nil
}

// bruteCheck compares n lookups at the layout's K, each a fingerprint of
// the input with two random bits flipped, with a brute-force scan of every
// fingerprint line of the input: the hits must be exactly the input's ids
// within K, nothing missed and nothing farther. An input of documents (no
// fingerprint lines) is reported and skipped.
func bruteCheck(ctx context.Context, ix *kvindex.Index, input string, n int) error {
	all, err := readFingerprints(input)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		fmt.Println("no fingerprint lines in the input (documents): lookups not checked against brute force")
		return nil
	}
	r := rand.New(rand.NewPCG(5, 5))
	K := ix.Layout().K
	var total time.Duration
	for range n {
		q := all[r.IntN(len(all))].fp ^ 1<<r.IntN(64) ^ 1<<r.IntN(64)
		var want []string
		for _, e := range all {
			if bits.OnesCount64(uint64(e.fp^q)) <= K {
				want = append(want, e.id)
			}
		}
		t0 := time.Now()
		res, err := ix.Lookup(ctx, q, kvindex.LookupOptions{K: K})
		total += time.Since(t0)
		if err != nil {
			return err
		}
		got := make([]string, 0, len(res.Hits))
		for _, h := range res.Hits {
			got = append(got, h.ID)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("lookup %s: got %v, brute force %v", q, got, want)
		}
	}
	fmt.Printf("%d sampled lookups at k=%d all equal brute force over %d input fingerprints; mean lookup %.0f us\n",
		n, K, len(all), float64(total.Microseconds())/float64(n))
	return nil
}

// readFingerprints reads every "id,hex fingerprint,time" line of path;
// other lines (a document input's JSON) are skipped.
func readFingerprints(path string) ([]query, error) {
	var out []query
	err := eachLine(path, func(line string) (bool, error) {
		p := strings.Split(line, ",")
		if len(p) != 3 {
			return true, nil
		}
		if fp, err := fingerprint.Parse(p[1]); err == nil {
			out = append(out, query{id: p[0], fp: fp})
		}
		return true, nil
	})
	return out, err
}

// eachLine calls f with each line of path (lines up to 16 MiB) until it
// returns false or an error, which eachLine returns.
func eachLine(path string, f func(line string) (more bool, err error)) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if more, err := f(sc.Text()); err != nil || !more {
			return err
		}
	}
	return sc.Err()
}
