package hbase

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/internal/promreg"
)

// metrics are the client's Prometheus collectors.
type metrics struct {
	reg     prometheus.Registerer
	latency *prometheus.HistogramVec // per RPC method
	// observers caches latency's series of the methods the client calls
	// (hashing label values on every call showed in profiles). Written
	// only in newMetrics, read-only afterwards.
	observers   map[string]prometheus.Observer
	retries     *prometheus.CounterVec // per operation
	cacheMisses prometheus.Counter     // region cache misses (meta lookups)
	openConns   prometheus.Gauge
	// coalesced counts Multi calls of gets that shared one MultiRequest
	// with others (coalesce.go).
	coalesced prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		reg: reg,
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hbase_client_rpc_duration_seconds",
			Help:    "Latency of HBase RPCs by method, including failed ones.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
		}, []string{"method"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hbase_client_retries_total",
			Help: "Operations retried after a retryable error, by operation.",
		}, []string{"op"}),
		cacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hbase_client_region_cache_misses_total",
			Help: "Region lookups that went to hbase:meta.",
		}),
		openConns: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hbase_client_open_connections",
			Help: "Open RPC connections to HBase servers.",
		}),
		coalesced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hbase_client_multi_coalesced_calls_total",
			Help: "Multi calls of gets sent in one MultiRequest together with other concurrent calls.",
		}),
	}
	m.observers = make(map[string]prometheus.Observer)
	for _, method := range []string{"Get", "Mutate", "Multi", "Scan", "ListNamespaceDescriptors", "getProcedureResult"} {
		m.observers[method] = m.latency.WithLabelValues(method)
	}
	if err := promreg.Register(reg, m.collectors()...); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.latency, m.retries, m.cacheMisses, m.openConns, m.coalesced}
}

// unregister removes the collectors so a new Client can register again.
func (m *metrics) unregister() error {
	return promreg.Unregister(m.reg, errors.New("hbase: metrics collector was not registered"), m.collectors()...)
}

// observe records one RPC's latency in seconds.
func (m *metrics) observe(method string, seconds float64) {
	if o, ok := m.observers[method]; ok {
		o.Observe(seconds)
		return
	}
	m.latency.WithLabelValues(method).Observe(seconds)
}
