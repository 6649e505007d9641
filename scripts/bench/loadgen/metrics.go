package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"
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
func stagesFor(mode string) []stage {
	route := `route="/v1/check"`
	if mode == "insert" || mode == "insert-if-unique" {
		route = `route="/v1/documents"`
	}
	return []stage{
		{"handler", "simdex_http_request_duration_seconds", []string{route, `method="POST"`}},
		{"store get", "simdex_store_seconds", []string{`op="get"`}},
		{"HBase Multi", "hbase_client_rpc_duration_seconds", []string{`method="Multi"`}},
	}
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
	cpuSeen := false
	for line := range bytes.Lines(b) {
		line = bytes.TrimSpace(line)
		if v, ok := bytes.CutPrefix(line, []byte("process_cpu_seconds_total ")); ok {
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				return s, err
			}
			s.cpu, cpuSeen = time.Duration(f*float64(time.Second)), true
			continue
		}
		for i, st := range stages {
			rest, ok := bytes.CutPrefix(line, []byte(st.metric+"_bucket{"))
			if !ok {
				continue
			}
			labels, value, ok := bytes.Cut(rest, []byte("} "))
			if !ok || !hasLabels(labels, st.labels) {
				continue
			}
			_, le, ok := bytes.Cut(labels, []byte(`le="`))
			if !ok {
				continue
			}
			le, _, _ = bytes.Cut(le, []byte(`"`))
			bound, err1 := strconv.ParseFloat(string(le), 64)
			count, err2 := strconv.ParseFloat(string(value), 64)
			if err1 != nil || err2 != nil {
				return s, fmt.Errorf("bucket line %q", line)
			}
			k, found := slices.BinarySearchFunc(s.buckets[i], bound, func(b bucket, le float64) int {
				switch {
				case b.le < le:
					return -1
				case b.le > le:
					return 1
				}
				return 0
			})
			if found {
				s.buckets[i][k].count += count // another series of the same stage
			} else {
				s.buckets[i] = slices.Insert(s.buckets[i], k, bucket{bound, count})
			}
		}
	}
	if !cpuSeen {
		return s, errors.New("no process_cpu_seconds_total in /metrics")
	}
	return s, nil
}

func hasLabels(labels []byte, want []string) bool {
	for _, w := range want {
		if !bytes.Contains(labels, []byte(w)) {
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
