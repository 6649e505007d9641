package kvindex

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/internal/promreg"
)

// metrics are the index's Prometheus collectors. With a nil Registerer they
// still count (cheaply) but nobody scrapes them.
type metrics struct {
	reg        prometheus.Registerer
	collectors []prometheus.Collector
	storeSec   *prometheus.HistogramVec
	storeErrs  *prometheus.CounterVec
	candidates prometheus.Histogram
	hits       prometheus.Histogram
	corrupt    prometheus.Counter
	// uncommitted: fp entries a lookup dropped because their document's
	// docs cell is missing or carries another fingerprint.
	uncommitted prometheus.Counter
	inserts     *prometheus.CounterVec
	groupSize   prometheus.Histogram
	// bandCandidates: documents found in a query's band rows.
	bandCandidates prometheus.Histogram
	// boilerplateKeys: text-key rows skipped as boilerplate
	// (TextKeyMaxDocs).
	boilerplateKeys prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		reg: reg,
		storeSec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "simdex_store_seconds",
			Help:    "Latency of store calls made by the index, by operation.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}, []string{"op"}),
		storeErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "simdex_store_errors_total",
			Help: "Store calls that failed, by operation.",
		}, []string{"op"}),
		candidates: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "simdex_lookup_candidates",
			Help:    "Residuals examined per fingerprint lookup (decoded from base sets plus deltas).",
			Buckets: prometheus.ExponentialBuckets(1, 4, 12),
		}),
		hits: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "simdex_lookup_hits",
			Help:    "Documents within distance k per fingerprint lookup, before the limit.",
			Buckets: []float64{0, 1, 2, 5, 10, 50, 100, 1000},
		}),
		corrupt: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "simdex_corrupt_cells_total",
			Help: "Stored cells that failed to decode.",
		}),
		uncommitted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "simdex_lookup_uncommitted_entries_total",
			Help: "Fingerprint-table entries a lookup passed over because their document is not committed (its docs cell is missing or carries another fingerprint): inserts that failed between their first writes and their docs cell, or replaces and deletes in flight.",
		}),
		inserts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "simdex_inserts_total",
			Help: "Documents offered for insertion, by outcome (stored, replaced, duplicate).",
		}, []string{"outcome"}),
		groupSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "simdex_insert_group_size",
			Help:    "Documents decided together per group commit (Config.GroupWindow).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
		}),
		bandCandidates: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "simdex_lookup_band_candidates",
			Help:    "Distinct documents in a text lookup's LSH band rows (near-copies plus false candidates the decision rule rejects).",
			Buckets: []float64{0, 1, 2, 5, 10, 50, 100, 1000, 10000},
		}),
		boilerplateKeys: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "simdex_lookup_boilerplate_text_keys_total",
			Help: "Text-key rows a lookup skipped because more than kvindex.TextKeyMaxDocs documents share the sentence (boilerplate).",
		}),
	}
	m.collectors = []prometheus.Collector{m.storeSec, m.storeErrs, m.candidates, m.hits, m.corrupt, m.uncommitted, m.inserts, m.groupSize, m.bandCandidates, m.boilerplateKeys}
	if err := promreg.Register(reg, m.collectors...); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *metrics) observeStore(op string, start time.Time, err error) {
	m.storeSec.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err != nil {
		m.storeErrs.WithLabelValues(op).Inc()
	}
}

func (m *metrics) unregister() error {
	return promreg.Unregister(m.reg, errors.New("kvindex: metric collector was not registered"), m.collectors...)
}
