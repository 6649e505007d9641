package loadgen

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The server's side of a run, from its /metrics before and after: its CPU
// time and, from its latency histograms, where a request's time went
// (the handler as the server times it, the index's store calls, the HBase
// RPCs), to set beside the latencies loadgen measures end to end. The gap
// between the two is outside the handler: the kernel's loopback, waking
// threads and CPUs, and loadgen itself.

// stage is a latency histogram of the server's /metrics: the buckets of
// every series of metric whose labels contain all of labels, summed.
type stage struct {
	name   string
	metric string // without the _bucket suffix
	labels []string
}

// stagesFor are the histograms reported for a mode's requests.
func stagesFor(mode string, batch int) []stage {
	route := `route="/v1/check"`
	insert := mode == "insert" || mode == "insert-if-unique"
	switch {
	case insert && batch > 0:
		route = `route="/v1/documents/batch"`
	case insert:
		route = `route="/v1/documents"`
	}
	st := []stage{
		{"handler", "simdex_http_request_duration_seconds", []string{route, `method="POST"`}},
		{"store get", "simdex_store_seconds", []string{`op="get"`}},
	}
	if insert {
		st = append(st, stage{"store mutate", "simdex_store_seconds", []string{`op="mutate"`}})
	}
	return append(st, stage{"HBase Multi", "hbase_client_rpc_duration_seconds", []string{`method="Multi"`}})
}

// snapshot is what one scrape of /metrics gave.
type snapshot struct {
	cpu     time.Duration
	buckets [][]bucket // per stage, by upper bound; cumulative counts
}

type bucket struct {
	le    float64 // upper bound in seconds (+Inf for the last)
	count float64
}

func scrape(ctx context.Context, addr string, stages []stage) (snapshot, error) {
	var s snapshot
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/metrics", nil)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return s, err
	}
	return parseMetrics(b, stages)
}

// parseMetrics reads process_cpu_seconds_total and the stages' buckets
// from the Prometheus text format.
func parseMetrics(b []byte, stages []stage) (snapshot, error) {
	s := snapshot{buckets: make([][]bucket, len(stages))}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return s, fmt.Errorf("/metrics: %w", err)
	}
	cpu, ok := families["process_cpu_seconds_total"]
	if !ok || len(cpu.GetMetric()) == 0 {
		return s, errors.New("no process_cpu_seconds_total in /metrics")
	}
	s.cpu = time.Duration(value(cpu.GetMetric()[0]) * float64(time.Second))
	for i, st := range stages {
		for _, m := range families[st.metric].GetMetric() {
			if !hasLabels(m.GetLabel(), st.labels) {
				continue
			}
			for _, hb := range m.GetHistogram().GetBucket() {
				count := float64(hb.GetCumulativeCount())
				if hb.CumulativeCountFloat != nil {
					count = hb.GetCumulativeCountFloat()
				}
				s.buckets[i] = addBucket(s.buckets[i], hb.GetUpperBound(), count)
			}
		}
	}
	return s, nil
}

// value is the value of a counter, gauge or untyped sample.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}

// addBucket adds count to the bucket of bound le in bs, kept by bound,
// inserting it when it is not there yet (so the series of one stage sum).
func addBucket(bs []bucket, le, count float64) []bucket {
	k, found := slices.BinarySearchFunc(bs, le, func(b bucket, le float64) int {
		return cmp.Compare(b.le, le)
	})
	if found {
		bs[k].count += count
		return bs
	}
	return slices.Insert(bs, k, bucket{le, count})
}

// hasLabels reports whether labels hold every pair of want, each written
// name="value".
func hasLabels(labels []*dto.LabelPair, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(labels, func(l *dto.LabelPair) bool {
			return l.GetName()+"="+strconv.Quote(l.GetValue()) == w
		}) {
			return false
		}
	}
	return true
}

// diffBuckets is after - before, bucket by bucket (a series that appeared
// in between counts from zero).
func diffBuckets(before, after []bucket) []bucket {
	out := slices.Clone(after)
	for i := range out {
		for _, b := range before {
			if b.le == out[i].le {
				out[i].count -= b.count
			}
		}
	}
	return out
}

// quantile estimates quantile q of cumulative buckets the way Prometheus'
// histogram_quantile does: linear within the bucket that holds it (so it
// is only as fine as the buckets, which double). ok is false without
// observations; a quantile in the +Inf bucket returns the highest finite
// bound.
func quantile(bs []bucket, q float64) (float64, bool) {
	if len(bs) == 0 || bs[len(bs)-1].count <= 0 {
		return 0, false
	}
	rank := q * bs[len(bs)-1].count
	lo, below := 0.0, 0.0
	for _, b := range bs {
		if b.count >= rank {
			if math.IsInf(b.le, 1) {
				return lo, true
			}
			if b.count == below {
				return b.le, true
			}
			return lo + (b.le-lo)*(rank-below)/(b.count-below), true
		}
		lo, below = b.le, b.count
	}
	return lo, true
}
