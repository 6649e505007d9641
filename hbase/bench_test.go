package hbase

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// The benchmarks share one table, benchTable, with 10,000 rows "row%08d"
// (100-byte values), created on first use and kept, so scripts/bench/hbase.sh
// can run the Java peer on the same rows. They need SIMDEX_HBASE_ZK.
const benchTable = "simdex_bench:kv"

var benchSetup struct {
	once sync.Once
	c    *Client
	err  error
}

func benchClient(b *testing.B) *Client {
	benchSetup.once.Do(func() {
		c, err := New(Config{ZooKeeper: []string{hbasetestZK(b)}})
		if err != nil {
			benchSetup.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		benchSetup.c, benchSetup.err = c, loadBenchTable(ctx, c)
		if benchSetup.err == nil {
			benchSetup.err = warmUp(ctx, c)
		}
	})
	if benchSetup.err != nil {
		b.Fatal(benchSetup.err)
	}
	return benchSetup.c
}

func loadBenchTable(ctx context.Context, c *Client) error {
	if err := c.CreateNamespace(ctx, "simdex_bench"); err != nil && !errors.Is(err, ErrNamespaceExists) {
		return err
	}
	td := &TableDescriptor{Name: benchTable, Families: []FamilyDescriptor{{Name: "f", Attributes: map[string]string{AttrBloomFilter: "ROW"}}}}
	if err := c.CreateTable(ctx, td, nil); err != nil && !errors.Is(err, ErrTableExists) {
		return err
	}
	if r, err := c.Get(ctx, benchTable, &Get{Row: []byte("row00009999")}); err == nil && len(r.Cells) > 0 {
		return nil // loaded by an earlier run
	}
	val := make([]byte, 100)
	for start := 0; start < 10000; start += 1000 {
		var puts []Action
		for i := start; i < start+1000; i++ {
			puts = append(puts, &Put{Row: fmt.Appendf(nil, "row%08d", i), Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: val}}})
		}
		res, err := c.Multi(ctx, benchTable, puts)
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Err != nil {
				return r.Err
			}
		}
	}
	return nil
}

// warmUp does what the Java peer does before it measures (2,000 4-row
// multi-gets and 2,000 single puts), so both sides start with open
// connections, located regions and warm server code paths.
func warmUp(ctx context.Context, c *Client) error {
	rng := rand.New(rand.NewPCG(2, 2))
	val := make([]byte, 100)
	for i := range 2000 {
		gets := make([]Action, 4)
		for j := range gets {
			gets[j] = &Get{Row: fmt.Appendf(nil, "row%08d", rng.IntN(10000))}
		}
		if _, err := c.Multi(ctx, benchTable, gets); err != nil {
			return err
		}
		if err := c.Put(ctx, benchTable, &Put{Row: fmt.Appendf(nil, "go-warm%08d", i), Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: val}}}); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkHBaseMultiGet4 is a simdex lookup's shape: 4 random rows in one
// Multi. Reports p50/p99 latency.
func BenchmarkHBaseMultiGet4(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))
	var lat []time.Duration
	for b.Loop() {
		gets := make([]Action, 4)
		for i := range gets {
			gets[i] = &Get{Row: fmt.Appendf(nil, "row%08d", rng.IntN(10000))}
		}
		start := time.Now()
		res, err := c.Multi(ctx, benchTable, gets)
		lat = append(lat, time.Since(start))
		if err != nil || res[0].Err != nil || len(res[0].Result.Cells) == 0 {
			b.Fatalf("multi-get: %v %v", err, res)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkHBasePut is single puts, one at a time.
func BenchmarkHBasePut(b *testing.B) {
	benchPutRate(b, 1, func(ctx context.Context, c *Client, val []byte, n int) {
		if err := c.Put(ctx, benchTable, &Put{Row: fmt.Appendf(nil, "go-put%08d", n+1), Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: val}}}); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkHBaseMulti1000Puts is batched writes: one Multi of 1,000 puts.
func BenchmarkHBaseMulti1000Puts(b *testing.B) {
	benchPutRate(b, 1000, func(ctx context.Context, c *Client, val []byte, n int) {
		puts := make([]Action, 1000)
		for i := range puts {
			puts[i] = &Put{Row: fmt.Appendf(nil, "go-batch%04d-%04d", n, i), Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: val}}}
		}
		mustMulti(b, ctx, c, benchTable, puts)
	})
}

// benchPutRate runs op once per iteration (n counts them from 0), each
// writing perOp puts of val (100 bytes), and reports puts/s.
func benchPutRate(b *testing.B, perOp int, op func(ctx context.Context, c *Client, val []byte, n int)) {
	c := benchClient(b)
	ctx := context.Background()
	val := make([]byte, 100)
	n := 0
	start := time.Now()
	for b.Loop() {
		op(ctx, c, val, n)
		n++
	}
	b.ReportMetric(float64(n*perOp)/time.Since(start).Seconds(), "puts/s")
}

// hbasetestZK is hbasetest.ZK (a separate name keeps the import in one place).
func hbasetestZK(tb testing.TB) string { return hbasetest.ZK(tb) }

// BenchmarkHBaseMultiGet4Parallel is BenchmarkHBaseMultiGet4 from 16
// goroutines (a REST server's concurrent lookups) on one client. Besides
// ns/op it reports the client's CPU per lookup (user + system time of the
// whole process over the loop, from getrusage): HBase runs in another
// process, so this is the client's own cost.
func BenchmarkHBaseMultiGet4Parallel(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	b.SetParallelism(16 / max(1, runtime.GOMAXPROCS(0)))
	var seed atomic.Uint64
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(seed.Add(1), 1))
		for pb.Next() {
			gets := make([]Action, 4)
			for i := range gets {
				gets[i] = &Get{Row: fmt.Appendf(nil, "row%08d", rng.IntN(10000))}
			}
			res, err := c.Multi(ctx, benchTable, gets)
			if err != nil || res[0].Err != nil || len(res[0].Result.Cells) == 0 {
				b.Errorf("multi-get: %v %v", err, res)
				return
			}
		}
	})
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "client-cpu-µs/op")
}

// processCPU is this process's user + system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
