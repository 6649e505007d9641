package loadgen

import (
	"math"
	"testing"
	"time"
)

const metricsText = `# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5
# TYPE simdex_http_request_duration_seconds histogram
simdex_http_request_duration_seconds_bucket{code="200",method="POST",route="/v1/check",le="0.001"} 90
simdex_http_request_duration_seconds_bucket{code="200",method="POST",route="/v1/check",le="0.002"} 99
simdex_http_request_duration_seconds_bucket{code="200",method="POST",route="/v1/check",le="+Inf"} 100
simdex_http_request_duration_seconds_bucket{code="503",method="POST",route="/v1/check",le="0.001"} 10
simdex_http_request_duration_seconds_bucket{code="503",method="POST",route="/v1/check",le="0.002"} 10
simdex_http_request_duration_seconds_bucket{code="503",method="POST",route="/v1/check",le="+Inf"} 10
simdex_http_request_duration_seconds_bucket{code="200",method="GET",route="/metrics",le="0.001"} 5
simdex_http_request_duration_seconds_bucket{code="200",method="GET",route="/metrics",le="0.002"} 5
simdex_http_request_duration_seconds_bucket{code="200",method="GET",route="/metrics",le="+Inf"} 5
# TYPE simdex_store_seconds histogram
simdex_store_seconds_bucket{op="get",le="0.0001"} 4
simdex_store_seconds_bucket{op="get",le="0.0002"} 8
simdex_store_seconds_bucket{op="get",le="+Inf"} 8
`

// TestParseMetrics: the stages' series are summed across codes, other
// routes are left out, and quantiles interpolate within buckets as
// Prometheus' histogram_quantile does.
func TestParseMetrics(t *testing.T) {
	st := stagesFor("check-fp", 0)
	s, err := parseMetrics([]byte(metricsText), st)
	if err != nil {
		t.Fatal(err)
	}
	if s.cpu != 12500*time.Millisecond {
		t.Fatalf("cpu %v", s.cpu)
	}
	handler := []bucket{{0.001, 100}, {0.002, 109}, {math.Inf(1), 110}}
	if got := s.buckets[0]; len(got) != 3 || got[0] != handler[0] || got[1] != handler[1] || got[2].count != 110 {
		t.Fatalf("handler buckets %v, want %v", got, handler)
	}
	if _, ok := quantile(s.buckets[2], .5); ok {
		t.Fatal("HBase Multi: a quantile without observations")
	}
	before, _ := parseMetrics([]byte("process_cpu_seconds_total 1\n# TYPE simdex_store_seconds histogram\n"+
		`simdex_store_seconds_bucket{op="get",le="0.0001"} 2`+"\n"+
		`simdex_store_seconds_bucket{op="get",le="0.0002"} 2`+"\n"+
		`simdex_store_seconds_bucket{op="get",le="+Inf"} 2`+"\n"), st)
	get := diffBuckets(before.buckets[1], s.buckets[1]) // 2 in (0, 0.1 ms], 4 in (0.1, 0.2 ms]
	for _, c := range []struct{ q, want float64 }{
		{0.25, 0.0001 * 1.5 / 2},       // rank 1.5 of the first bucket's 2
		{0.5, 0.0001 + 0.0001*1.0/4},   // rank 3: 1 of the second bucket's 4
		{0.99, 0.0001 + 0.0001*3.94/4}, // rank 5.94
		{1, 0.0002},
	} {
		got, ok := quantile(get, c.q)
		if !ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("store get q%v = %v, want %v", c.q, got, c.want)
		}
	}
	// In the +Inf bucket: the highest finite bound.
	if got, _ := quantile(s.buckets[0], .999); got != 0.002 {
		t.Errorf("handler q0.999 = %v, want 0.002", got)
	}
	if _, err := parseMetrics([]byte("up 1\n"), st); err == nil {
		t.Error("no CPU line: no error")
	}
}
