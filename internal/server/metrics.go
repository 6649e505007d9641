package server

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's own Prometheus collectors; the index registers
// its own (store latency, candidates and hits per lookup, inserts by
// outcome) on the same registerer.
type metrics struct {
	requests           *prometheus.HistogramVec
	errors             *prometheus.CounterVec
	fingerprintSeconds prometheus.Histogram
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
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.errors, m.fingerprintSeconds} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
