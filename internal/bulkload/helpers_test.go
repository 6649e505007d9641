package bulkload

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

var bg = context.Background()

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func openIndex(t testing.TB, dir string) *kvindex.Index {
	t.Helper()
	ix, err := openIndexErr(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func openIndexErr(dir string) (*kvindex.Index, error) { return openIndexOpts(dir, false) }

// openIndexOpts opens the test index; bulk opens the store as cmd/bulkload
// does (no WAL: durability only from the loader's checkpoint flushes).
func openIndexOpts(dir string, bulk bool) (*kvindex.Index, error) {
	st, err := pebblestore.Open(dir, pebblestore.Options{NoSync: true, Bulk: bulk, CacheBytes: 8 << 20})
	if err != nil {
		return nil, err
	}
	ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, BucketWidth: 24 * time.Hour, MaxCellBytes: 1024, Bands: kvindex.BandsOff})
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return ix, nil
}

// genDoc is one generated precomputed-fingerprint record.
type genDoc struct {
	id string
	fp fingerprint.Fingerprint
	at time.Time
}

// genFPs returns n records: random fingerprints, a few near-duplicates of
// earlier ones, a few exact repeats, over several days.
func genFPs(seed uint64, n int) []genDoc {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]genDoc, 0, n)
	for i := range n {
		fp := fingerprint.Fingerprint(r.Uint64())
		switch {
		case i > 10 && i%97 == 0: // near-duplicate of an earlier record
			fp = out[r.IntN(len(out))].fp
			for _, b := range r.Perm(64)[:1+r.IntN(3)] {
				fp ^= 1 << b
			}
		case i > 10 && i%131 == 0: // exact repeat
			fp = out[r.IntN(len(out))].fp
		}
		out = append(out, genDoc{id: fmt.Sprintf("doc-%06d", i), fp: fp, at: t0.Add(time.Duration(r.IntN(5*24)) * time.Hour)})
	}
	return out
}

func fpLines(docs []genDoc) string {
	var b strings.Builder
	for i, d := range docs {
		if i%2 == 0 {
			fmt.Fprintf(&b, "%s,%s,%s\n", d.id, d.fp, d.at.Format(time.RFC3339))
		} else {
			dec := fmt.Sprint(uint64(d.fp))
			if len(dec) == 16 {
				dec = "d:" + dec // 16 digits alone read as hex (fingerprint.Parse)
			}
			fmt.Fprintf(&b, "%s\t%s\t%d\n", d.id, dec, d.at.Unix())
		}
	}
	return b.String()
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gz(t testing.TB, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zst(t testing.TB, s string) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll([]byte(s), nil)
}

// dump returns every cell of every table; rows of the meta table named in
// skipMeta are left out. The counters are summed over their rows (an
// online insert adds to a counter shard, a load to the row counters) and
// reported as the row counters' cells.
func dump(t testing.TB, ix *kvindex.Index, skipMeta ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	counters := map[string]uint64{}
	for _, tb := range storage.Tables {
		err := ix.Store().Scan(bg, tb, nil, nil, func(r storage.Row) error {
			if tb == storage.TableMeta {
				for _, s := range skipMeta {
					if string(r.Key) == s {
						return nil
					}
				}
				if strings.HasPrefix(string(r.Key), "counters") {
					for _, c := range r.Cells {
						counters[string(c.Qualifier)] += binary.BigEndian.Uint64(c.Value)
					}
					return nil
				}
			}
			for _, c := range r.Cells {
				if tb == storage.TableMeta && string(r.Key) == "simdex" && string(c.Qualifier) == "created" {
					continue // creation time
				}
				out[fmt.Sprintf("%d/%x/%x", tb, r.Key, c.Qualifier)] = string(c.Value)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for q, v := range counters {
		out[fmt.Sprintf("%d/%x/%x", storage.TableMeta, "counters", q)] = string(binary.BigEndian.AppendUint64(nil, v))
	}
	return out
}

func diff(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "only in first: "+k)
		} else if v != w {
			out = append(out, "differs: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "only in second: "+k)
		}
	}
	if len(out) > 10 {
		out = append(out[:10], fmt.Sprintf("... %d more", len(out)-10))
	}
	return strings.Join(out, "\n")
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReaderSize(strings.NewReader(s), 4096) }
