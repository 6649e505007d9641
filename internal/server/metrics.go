package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/detect"
)

// metrics are the server's own Prometheus collectors; the index registers
// its own (store latency, candidates and hits per lookup, inserts by
// outcome) on the same registerer.
type metrics struct {
	requests           *prometheus.HistogramVec
	errors             *prometheus.CounterVec
	fingerprintSeconds prometheus.Histogram
	// checks counts checked documents by outcome (observeCheck); its
	// three series are made in newMetrics, so each shows from the first
	// scrape, at 0.
	checks                              *prometheus.CounterVec
	checkDup, checkRelated, checkUnique prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "simdex_http_request_duration_seconds",
			Help:    "Latency of HTTP requests by route, method and status code.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method", "code"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "simdex_http_errors_total",
			Help: "Error responses (and failed batch items) by problem kind.",
		}, []string{"kind"}),
		fingerprintSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "simdex_fingerprint_duration_seconds",
			Help:    "Time to fingerprint one document's text.",
			Buckets: prometheus.ExponentialBuckets(0.00001, 4, 10),
		}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "simdex_checks_total",
			Help: "Checked documents (each item of a batch) by outcome: duplicate (a hit the request's policy counts), related (hits only in relations the policy does not count), unique (no hit).",
		}, []string{"outcome"}),
	}
	m.checkDup = m.checks.WithLabelValues("duplicate")
	m.checkRelated = m.checks.WithLabelValues("related")
	m.checkUnique = m.checks.WithLabelValues("unique")
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.errors, m.fingerprintSeconds, m.checks} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observeCheck counts one checked document by its outcome.
func (m *metrics) observeCheck(res detect.Result) {
	switch {
	case len(res.Duplicates) > 0:
		m.checkDup.Inc()
	case len(res.Related) > 0:
		m.checkRelated.Inc()
	default:
		m.checkUnique.Inc()
	}
}
