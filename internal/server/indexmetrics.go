package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/kvindex"
)

// indexStatsTimeout bounds the store read behind one scrape of the index
// gauges; a store that does not answer in time leaves them out of that
// scrape (the rest of /metrics is served as usual).
const indexStatsTimeout = time.Second

// indexCollector exposes the index's document and fingerprint counters
// (the counters rows, one store read per scrape). On HBase every server
// reads the same shared row, so each reports the whole index.
type indexCollector struct {
	stats        func(context.Context) (kvindex.Stats, error)
	documents    *prometheus.Desc
	fingerprints *prometheus.Desc
}

func newIndexCollector(stats func(context.Context) (kvindex.Stats, error)) *indexCollector {
	return &indexCollector{
		stats:        stats,
		documents:    prometheus.NewDesc("simdex_index_documents", "Documents in the index (its counters rows, read at scrape time).", nil, nil),
		fingerprints: prometheus.NewDesc("simdex_index_fingerprints", "Distinct fingerprints carried by the index's documents (its counters rows, read at scrape time).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *indexCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.documents
	ch <- c.fingerprints
}

// Collect implements prometheus.Collector. A failed read yields no
// samples rather than an error, which would fail the whole scrape.
func (c *indexCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), indexStatsTimeout)
	defer cancel()
	st, err := c.stats(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.documents, prometheus.GaugeValue, float64(st.Documents))
	ch <- prometheus.MustNewConstMetric(c.fingerprints, prometheus.GaugeValue, float64(st.Fingerprints))
}
