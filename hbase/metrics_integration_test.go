package hbase

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/simdex/simdex/internal/hbasetest"
)

func TestMetrics(t *testing.T) {
	zk := hbasetest.ZK(t)
	reg := prometheus.NewRegistry()
	c, err := New(Config{ZooKeeper: []string{zk}, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	// The table is created through another client, so c's counters see
	// only what follows. (No system table serves: HBase 3.0 has no
	// hbase:namespace, and hbase:meta is located through ZooKeeper.)
	admin, err := New(Config{ZooKeeper: []string{zk}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() }) // after the table's cleanup drops it
	table := createTestTable(t, admin)
	if _, err := c.Namespaces(ctx); err != nil {
		t.Fatal(err)
	}
	// The first Get locates the row's region through hbase:meta (a cache
	// miss); the others hit the cache.
	for range 3 {
		if _, err := c.Get(ctx, table, &Get{Row: []byte("default")}); err != nil {
			t.Fatal(err)
		}
	}
	if got := gauge(t, reg, "hbase_client_region_cache_misses_total"); got != 1 {
		t.Errorf("region cache misses = %v, want 1", got)
	}
	if got := gauge(t, reg, "hbase_client_open_connections"); got != 2 {
		t.Errorf("open connections = %v, want 2 (master, region server)", got)
	}
	if n := len(family(t, reg, "hbase_client_rpc_duration_seconds").GetMetric()); n < 3 {
		t.Errorf("latency series = %d, want ListNamespaceDescriptors, Scan and Get", n)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if fams, _ := reg.Gather(); len(fams) != 0 {
		t.Errorf("%d metric families still registered after Close", len(fams))
	}
	// Unregistered on Close: a second client can register again.
	c2, err := New(Config{ZooKeeper: []string{zk}, Registerer: reg})
	if err != nil {
		t.Fatalf("second client on the same registry: %v", err)
	}
	c2.Close()
}

func family(t *testing.T, reg *prometheus.Registry, name string) *dto.MetricFamily {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	t.Fatalf("metric %s not registered", name)
	return nil
}

// gauge reads a single-series counter or gauge.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	m := family(t, reg, name).GetMetric()[0]
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}
