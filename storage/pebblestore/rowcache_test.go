package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/storetest"
)

func openStore(t testing.TB, opt Options) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openStoreIn opens an unsynced store in dir's subdirectory db (the rest of
// dir is the test's), closed when the test ends.
func openStoreIn(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(filepath.Join(dir, "db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The contract holds with the row cache off and with a cache so small that
// rows are evicted all the time (TestContract runs the default cache).
func TestContractCacheVariants(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes int64
	}{{"off", -1}, {"tiny", 64 * 1024}} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) storage.Store {
				return openStore(t, Options{RowCacheBytes: tc.bytes})
			})
		})
	}
}

func put(row, qual string, val []byte) storage.Mutation {
	return storage.Mutation{Kind: storage.Put, Table: storage.TableIndex, Row: []byte(row), Qualifier: []byte(qual), Value: val}
}

func TestRowCacheHitsAndInvalidation(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	s := openStore(t, Options{Registerer: reg})
	key := []storage.RowKey{{Table: storage.TableIndex, Key: []byte("r\x00w")}}
	if err := s.Mutate(ctx, []storage.Mutation{put("r\x00w", "q1", []byte("v1"))}); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		t.Helper()
		rows, err := s.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for _, c := range rows[0].Cells {
			fmt.Fprintf(&b, "%s=%s;", c.Qualifier, c.Value)
		}
		// The caller owns the memory: scribbling on it must not reach the cache.
		for _, c := range rows[0].Cells {
			clear(c.Value)
		}
		return b.String()
	}
	for i, want := range []string{"q1=v1;", "q1=v1;"} {
		if got := read(); got != want {
			t.Fatalf("read %d: %q, want %q", i, got, want)
		}
	}
	if st := s.CacheStats(); st.Hits != 1 || st.Misses != 1 || st.Entries != 1 {
		t.Fatalf("after a miss and a hit: %+v", st)
	}
	steps := []struct {
		m    storage.Mutation
		want string
	}{
		{put("r\x00w", "q0", []byte("v0")), "q0=v0;q1=v1;"},
		{storage.Mutation{Kind: storage.DeleteCell, Table: storage.TableIndex, Row: []byte("r\x00w"), Qualifier: []byte("q1")}, "q0=v0;"},
		{storage.Mutation{Kind: storage.DeleteRow, Table: storage.TableIndex, Row: []byte("r\x00w")}, ""},
		{storage.Mutation{Kind: storage.Add, Table: storage.TableIndex, Row: []byte("r\x00w"), Qualifier: []byte("n"), Delta: 5}, "n=\x00\x00\x00\x00\x00\x00\x00\x05;"},
		{storage.Mutation{Kind: storage.Add, Table: storage.TableIndex, Row: []byte("r\x00w"), Qualifier: []byte("n"), Delta: 2}, "n=\x00\x00\x00\x00\x00\x00\x00\x07;"},
	}
	for _, st := range steps {
		if err := s.Mutate(ctx, []storage.Mutation{st.m}); err != nil {
			t.Fatal(err)
		}
		for range 2 { // a miss that fills, then a hit
			if got := read(); got != st.want {
				t.Fatalf("after %v: %q, want %q", st.m.Kind, got, st.want)
			}
		}
	}
	// One hit per step except after DeleteRow: an absent row is not cached.
	if got := gatheredValue(t, reg, "simdex_pebble_row_cache_hits_total"); got < 5 {
		t.Errorf("hits metric %v, want >= 5", got)
	}
}

func gatheredValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s not registered", name)
	return 0
}

// TestRowCacheBudget reads many more rows than fit and checks the budget
// holds and every read is still right.
func TestRowCacheBudget(t *testing.T) {
	ctx := context.Background()
	const budget = 256 << 10
	s := openStore(t, Options{RowCacheBytes: budget, NoSync: true})
	var muts []storage.Mutation
	for i := range 2000 {
		muts = append(muts, put(fmt.Sprintf("row%05d", i), "q", bytes.Repeat([]byte{byte(i)}, 100)))
	}
	if err := s.Mutate(ctx, muts); err != nil {
		t.Fatal(err)
	}
	for pass := range 2 {
		for i := range 2000 {
			rows, err := s.Get(ctx, []storage.RowKey{{Table: storage.TableIndex, Key: []byte(fmt.Sprintf("row%05d", i))}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows[0].Cells) != 1 || !bytes.Equal(rows[0].Cells[0].Value, bytes.Repeat([]byte{byte(i)}, 100)) {
				t.Fatalf("pass %d row %d: %v", pass, i, rows[0].Cells)
			}
		}
	}
	st := s.CacheStats()
	if st.Bytes > budget || st.Evictions == 0 || st.Hits == 0 || st.Entries == 0 {
		t.Fatalf("stats %+v: want bytes <= %d, evictions and hits", st, budget)
	}
}

// TestRowCacheNoStaleReadAfterAck hammers a few rows (so that they share
// cache shards) with writers and readers at once. Each writer owns a row
// and writes an increasing sequence number to it (and a counter Add, and a
// cell of a shared row); after each acknowledged Mutate it publishes the
// number. A reader that starts after the publication must see at least that
// number: the cache may never serve a row older than an acknowledged write.
func TestRowCacheNoStaleReadAfterAck(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		bytes int64
	}{{"default", 0}, {"tiny", 64 << 10}} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, Options{RowCacheBytes: tc.bytes, NoSync: true})
			const writers, readers = 4, 8
			dur := 1500 * time.Millisecond
			if testing.Short() {
				dur = 300 * time.Millisecond
			}
			var acked [writers]atomic.Uint64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, writers+readers)
			rowName := func(w int) string { return fmt.Sprintf("w%d", w) }
			for w := range writers {
				wg.Add(1)
				go func() { // stopped by stop, joined by wg
					defer wg.Done()
					for seq := uint64(1); ; seq++ {
						select {
						case <-stop:
							return
						default:
						}
						var v [8]byte
						binary.BigEndian.PutUint64(v[:], seq)
						muts := []storage.Mutation{
							put(rowName(w), "seq", v[:]),
							{Kind: storage.Add, Table: storage.TableIndex, Row: []byte(rowName(w)), Qualifier: []byte("n"), Delta: 1},
							put("shared", rowName(w), v[:]),
						}
						if seq%7 == 0 { // a row rewritten from scratch
							muts = append([]storage.Mutation{{Kind: storage.DeleteRow, Table: storage.TableIndex, Row: []byte(rowName(w))}}, muts...)
							muts[2].Delta = int64(seq) // the counter restarts: make it seq again
						}
						if err := s.Mutate(ctx, muts); err != nil {
							errs <- err
							return
						}
						acked[w].Store(seq)
					}
				}()
			}
			for r := range readers {
				wg.Add(1)
				go func() { // stopped by stop, joined by wg
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						w := (r + i) % writers
						floor := acked[w].Load()
						rows, err := s.Get(ctx, []storage.RowKey{
							{Table: storage.TableIndex, Key: []byte(rowName(w))},
							{Table: storage.TableIndex, Key: []byte("shared")},
						})
						if err != nil {
							errs <- err
							return
						}
						got := map[string]uint64{}
						for _, c := range rows[0].Cells {
							got[string(c.Qualifier)] = binary.BigEndian.Uint64(c.Value)
						}
						for _, c := range rows[1].Cells {
							if string(c.Qualifier) == rowName(w) {
								got["shared"] = binary.BigEndian.Uint64(c.Value)
							}
						}
						for _, q := range []string{"seq", "n", "shared"} {
							if got[q] < floor {
								errs <- fmt.Errorf("reader %d: row %s cell %s = %d after write %d was acknowledged (stale)", r, rowName(w), q, got[q], floor)
								return
							}
						}
					}
				}()
			}
			time.Sleep(dur)
			close(stop)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			st := s.CacheStats()
			t.Logf("writes acknowledged %d, cache %+v", acked[0].Load(), st)
			if st.Hits == 0 {
				t.Errorf("no cache hits: the test did not exercise the cache")
			}
		})
	}
}

func TestCellsRoundTrip(t *testing.T) {
	for _, cells := range [][]storage.Cell{
		nil,
		{{Qualifier: []byte("a"), Value: nil}},
		{{Qualifier: []byte("d\x00\x01"), Value: []byte("x")}, {Qualifier: []byte("e"), Value: bytes.Repeat([]byte("v"), 300)}},
	} {
		for _, shared := range []bool{false, true} {
			got, err := decodeCells(encodeCells(cells), shared)
			if err != nil || len(got) != len(cells) {
				t.Fatalf("%v (shared %v): %v %v", cells, shared, got, err)
			}
			for i := range got {
				if !bytes.Equal(got[i].Qualifier, cells[i].Qualifier) || !bytes.Equal(got[i].Value, cells[i].Value) {
					t.Fatalf("cell %d (shared %v): %v, want %v", i, shared, got[i], cells[i])
				}
			}
		}
	}
}

// FuzzDecodeCells: the cache only decodes what it encoded, but a decoder
// must never panic, and what it accepts must re-encode to the same bytes.
func FuzzDecodeCells(f *testing.F) {
	f.Add([]byte{0})
	f.Add(encodeCells([]storage.Cell{{Qualifier: []byte("q"), Value: []byte("v")}}))
	f.Add([]byte{2, 1, 'q', 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		cells, err := decodeCells(b, false)
		shared, serr := decodeCells(b, true)
		if (err == nil) != (serr == nil) || len(cells) != len(shared) {
			t.Fatalf("copying decode: %d cells, %v; shared decode: %d cells, %v", len(cells), err, len(shared), serr)
		}
		if err != nil {
			return
		}
		if re := encodeCells(cells); len(cells) > 0 && !bytes.Equal(re, b) {
			t.Fatalf("re-encoded %x, decoded from %x", re, b)
		}
	})
}

// TestGetShared: GetShared answers what Get answers, from the cache's own
// bytes on a hit; a write replaces the cached row without touching bytes a
// reader still holds, and Get's copies stay independent of the cache.
func TestGetShared(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	key := []storage.RowKey{{Table: storage.TableSeen, Key: []byte("row")}}
	put := func(v string) {
		t.Helper()
		if err := st.Mutate(ctx, []storage.Mutation{{Kind: storage.Put, Table: storage.TableSeen, Row: []byte("row"), Qualifier: []byte("q"), Value: []byte(v)}}); err != nil {
			t.Fatal(err)
		}
	}
	value := func(rows []storage.Row) string {
		t.Helper()
		if len(rows) != 1 || len(rows[0].Cells) != 1 {
			t.Fatalf("rows %v", rows)
		}
		return string(rows[0].Cells[0].Value)
	}
	put("first")
	if _, err := st.Get(ctx, key); err != nil { // fills the cache
		t.Fatal(err)
	}
	a, err := st.GetShared(ctx, key)
	if err != nil || value(a) != "first" {
		t.Fatalf("%v %v", a, err)
	}
	b, err := st.GetShared(ctx, key)
	if err != nil || &a[0].Cells[0].Value[0] != &b[0].Cells[0].Value[0] {
		t.Fatalf("two shared reads of a cached row do not share its bytes (%v)", err)
	}
	c, err := st.Get(ctx, key)
	if err != nil || &c[0].Cells[0].Value[0] == &a[0].Cells[0].Value[0] {
		t.Fatalf("Get returned the cache's bytes (%v)", err)
	}
	c[0].Cells[0].Value[0] = 'X' // the caller's own copy
	put("second")
	d, err := st.GetShared(ctx, key)
	if err != nil || value(d) != "second" {
		t.Fatalf("after a write: %v %v", d, err)
	}
	if value(a) != "first" || value(b) != "first" {
		t.Fatalf("a write changed bytes a reader holds: %q %q", value(a), value(b))
	}
	if st.CacheStats().Hits < 2 {
		t.Fatalf("the shared reads did not come from the cache: %+v", st.CacheStats())
	}
}
