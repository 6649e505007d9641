package hbase

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// secureBenchMode is one way of connecting to the secured HBase.
type secureBenchMode struct {
	name string
	krb  bool
	tls  bool
}

// secureBenchStats accumulates one mode's measurements over the rounds.
type secureBenchStats struct {
	lookups      int
	lookupTime   time.Duration
	lookupCPU    time.Duration
	lookupLat    []time.Duration
	putLat       []time.Duration
	batchPuts    int
	batchPutTime time.Duration
}

// BenchmarkSecureInterleaved measures the cost of security on one server:
// the secured HBase started with SIMDEX_HBASE_SECURE_STRICT=0 answers plain
// (SIMPLE, plaintext), TLS, Kerberos with privacy and both on the same
// tables. Each of 5 rounds runs every mode in turn (interleaved, so drift
// on a shared machine hits all alike): 16 goroutines of 4-row multi-gets
// for 3 s, 300 single puts one at a time, and 10 Multis of 1,000 puts of
// 100 bytes. Run with -benchtime=1x; b.N is not used. Reports per mode
// lookups/s, lookup p50/p99, the client's CPU per lookup (this process:
// HBase is another), single-put p50/p99 and batched puts/s.
func BenchmarkSecureInterleaved(b *testing.B) {
	s := hbasetest.Secure(b)
	if s.Strict {
		b.Skip("needs the secured HBase to accept every mode: start it with SIMDEX_HBASE_SECURE_STRICT=0")
	}
	modes := []secureBenchMode{{"plain", false, false}, {"tls", false, true}, {"kerberos-privacy", true, false}, {"kerberos-privacy+tls", true, true}}
	clients := map[string]*Client{}
	for _, m := range modes {
		var krb *Kerberos
		var tc *tls.Config
		if m.krb {
			krb = keytabAuth(s, "simdex", "simdex.keytab")
			krb.MinProtection = ProtectPrivacy
		}
		if m.tls {
			tc = s.TLSConfig(b, false)
		}
		clients[m.name] = secureClient(b, s.ZK, krb, tc)
	}
	ctx := context.Background()
	if err := loadBenchTable(ctx, clients["plain"]); err != nil {
		b.Fatal(err)
	}
	for _, m := range modes {
		if err := warmUp(ctx, clients[m.name]); err != nil {
			b.Fatalf("%s warm-up: %v", m.name, err)
		}
	}
	stats := map[string]*secureBenchStats{}
	for _, m := range modes {
		stats[m.name] = &secureBenchStats{}
	}
	val := make([]byte, 100)
	for round := range 5 {
		for _, m := range modes {
			c, st := clients[m.name], stats[m.name]
			n, d, cpu, lat := parallelLookups(b, c, 16, 3*time.Second, uint64(round))
			st.lookups += n
			st.lookupTime += d
			st.lookupCPU += cpu
			st.lookupLat = append(st.lookupLat, lat...)
			for i := range 300 {
				start := time.Now()
				if err := c.Put(ctx, benchTable, &Put{Row: fmt.Appendf(nil, "sec-%s-%d-%d", m.name, round, i), Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: val}}}); err != nil {
					b.Fatal(err)
				}
				st.putLat = append(st.putLat, time.Since(start))
			}
			start := time.Now()
			for k := range 10 {
				puts := make([]Action, 1000)
				for i := range puts {
					puts[i] = &Put{Row: fmt.Appendf(nil, "secb-%s-%d-%d-%04d", m.name, round, k, i), Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: val}}}
				}
				mustMulti(b, ctx, c, benchTable, puts)
			}
			st.batchPutTime += time.Since(start)
			st.batchPuts += 10 * 1000
		}
	}
	var tab strings.Builder
	fmt.Fprintf(&tab, "\n%-22s %10s %9s %9s %13s %9s %9s %12s\n", "mode", "lookups/s", "p50-µs", "p99-µs", "client-cpu-µs", "put-p50", "put-p99", "batch-puts/s")
	for _, m := range modes {
		st := stats[m.name]
		slices.Sort(st.lookupLat)
		slices.Sort(st.putLat)
		q := func(l []time.Duration, f float64) float64 { return float64(l[int(f*float64(len(l)-1))].Microseconds()) }
		lps := float64(st.lookups) / st.lookupTime.Seconds()
		cpu := float64(st.lookupCPU.Microseconds()) / float64(st.lookups)
		bps := float64(st.batchPuts) / st.batchPutTime.Seconds()
		fmt.Fprintf(&tab, "%-22s %10.0f %9.0f %9.0f %13.1f %9.0f %9.0f %12.0f\n", m.name, lps, q(st.lookupLat, 0.5), q(st.lookupLat, 0.99), cpu, q(st.putLat, 0.5), q(st.putLat, 0.99), bps)
		b.ReportMetric(lps, m.name+"-lookups/s")
		b.ReportMetric(cpu, m.name+"-client-cpu-µs/lookup")
		b.ReportMetric(q(st.putLat, 0.5), m.name+"-put-p50-µs")
		b.ReportMetric(bps, m.name+"-batch-puts/s")
	}
	b.Log(tab.String())
}

// parallelLookups runs 4-row multi-gets of benchTable from g goroutines for
// d and returns how many, the time taken, this process's CPU time over it
// and every lookup's latency.
func parallelLookups(b *testing.B, c *Client, g int, d time.Duration, seed uint64) (int, time.Duration, time.Duration, []time.Duration) {
	ctx := context.Background()
	var (
		n    atomic.Int64
		mu   sync.Mutex
		lats []time.Duration
		wg   sync.WaitGroup
		errs = make(chan error, g)
	)
	stop := make(chan struct{})
	cpu0, start := processCPU(), time.Now()
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			var mine []time.Duration
			defer func() {
				mu.Lock()
				lats = append(lats, mine...)
				mu.Unlock()
			}()
			for {
				select {
				case <-stop:
					return
				default:
				}
				gets := make([]Action, 4)
				for i := range gets {
					gets[i] = &Get{Row: fmt.Appendf(nil, "row%08d", rng.IntN(10000))}
				}
				t0 := time.Now()
				res, err := c.Multi(ctx, benchTable, gets)
				if err == nil && (res[0].Err != nil || len(res[0].Result.Cells) == 0) {
					err = errors.Join(res[0].Err, errors.New("row missing"))
				}
				if err != nil {
					errs <- err
					return
				}
				mine = append(mine, time.Since(t0))
				n.Add(1)
			}
		}()
	}
	time.Sleep(d)
	close(stop)
	wg.Wait()
	took, cpu := time.Since(start), processCPU()-cpu0
	close(errs)
	for err := range errs {
		b.Fatalf("lookup: %v", err)
	}
	return int(n.Load()), took, cpu, lats
}
