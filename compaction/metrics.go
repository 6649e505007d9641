package compaction

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are compaction's Prometheus metrics. A nil *Metrics records
// nothing.
type Metrics struct {
	runs       *prometheus.CounterVec // by result: ok, error
	rows       prometheus.Counter
	deltas     prometheus.Counter
	tombstones prometheus.Counter
	buckets    prometheus.Counter
	expired    prometheus.Counter
	bytesSaved prometheus.Counter
	lastRun    prometheus.Gauge
}

// NewMetrics builds the metrics and registers them with reg (nil: not
// registered). Registering twice with one registry reuses the first
// registration's collectors.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		runs:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "simdex_compaction_runs_total", Help: "Compaction runs by result."}, []string{"result"}),
		rows:       prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_compaction_rows_rewritten_total", Help: "Index rows rewritten by compaction."}),
		deltas:     prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_compaction_deltas_folded_total", Help: "Delta cells folded into base sets."}),
		tombstones: prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_compaction_tombstones_applied_total", Help: "Tombstones applied and dropped."}),
		buckets:    prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_compaction_buckets_dropped_total", Help: "Row time buckets dropped by retention."}),
		expired:    prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_compaction_documents_expired_total", Help: "Documents deleted by retention."}),
		bytesSaved: prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_compaction_bytes_saved_total", Help: "Cell bytes removed from rewritten rows (before minus after, when positive)."}),
		lastRun:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "simdex_compaction_last_run_seconds", Help: "Duration of the last compaction run."}),
	}
	if reg == nil {
		return m, nil
	}
	register := func(c prometheus.Collector) (prometheus.Collector, error) {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return are.ExistingCollector, nil
			}
			return nil, err
		}
		return c, nil
	}
	var err error
	var c prometheus.Collector
	if c, err = register(m.runs); err != nil {
		return nil, err
	}
	m.runs = c.(*prometheus.CounterVec)
	for _, f := range []*prometheus.Counter{&m.rows, &m.deltas, &m.tombstones, &m.buckets, &m.expired, &m.bytesSaved} {
		if c, err = register(*f); err != nil {
			return nil, err
		}
		*f = c.(prometheus.Counter)
	}
	if c, err = register(m.lastRun); err != nil {
		return nil, err
	}
	m.lastRun = c.(prometheus.Gauge)
	return m, nil
}

func (m *Metrics) observe(s Summary, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.runs.WithLabelValues(result).Inc()
	m.rows.Add(float64(s.RowsRewritten))
	m.deltas.Add(float64(s.DeltasFolded))
	m.tombstones.Add(float64(s.TombstonesApplied))
	m.buckets.Add(float64(s.BucketsDropped))
	m.expired.Add(float64(s.DocumentsExpired))
	if s.BytesBefore > s.BytesAfter {
		m.bytesSaved.Add(float64(s.BytesBefore - s.BytesAfter))
	}
	m.lastRun.Set(s.Duration.Seconds())
}
