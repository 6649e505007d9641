package server

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/simdex/simdex/kvindex"
)

// TestCheckOutcomeMetric: every checked document (single or batch item)
// counts once in simdex_checks_total under its outcome.
func TestCheckOutcomeMetric(t *testing.T) {
	e := newRuleEnv(t)
	// A longer page quoting orig: stored_is_excerpt, which the default
	// policy reports as related.
	orig, page := busesText, busesPage
	other := "Farmers in the valley expect a late harvest after the cold and wet weather of the last months. " +
		"Prices for apples and pears may rise at the markets before the winter holidays begin."
	if r := e.do("POST", "/v1/documents", map[string]any{"id": "orig", "text": orig}); r.status != http.StatusCreated {
		t.Fatalf("insert: %d %s", r.status, r.body)
	}
	e.do("POST", "/v1/check", map[string]any{"text": orig})
	e.do("POST", "/v1/check", map[string]any{"text": page})
	e.do("POST", "/v1/check", map[string]any{"text": other})
	if r := e.do("POST", "/v1/check/batch", map[string]any{"items": []map[string]any{{"text": orig}, {"text": other}, {"fingerprint": "zz"}}}); r.status != http.StatusOK {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	m := e.srv.metrics
	for _, c := range []struct {
		outcome string
		got     prometheus.Counter
		want    float64
	}{{"duplicate", m.checkDup, 2}, {"related", m.checkRelated, 1}, {"unique", m.checkUnique, 2}} {
		if got := testutil.ToFloat64(c.got); got != c.want {
			t.Errorf("simdex_checks_total{outcome=%q} = %v, want %v", c.outcome, got, c.want)
		}
	}
}

// TestIndexCollector: the index gauges report the counters row, and a
// failed read leaves them out instead of failing the scrape.
func TestIndexCollector(t *testing.T) {
	var fail bool
	c := newIndexCollector(func(ctx context.Context) (kvindex.Stats, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("index stats read without a deadline")
		}
		if fail {
			return kvindex.Stats{}, errors.New("store down")
		}
		return kvindex.Stats{Documents: 7, Fingerprints: 5}, nil
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetMetric()[0].GetGauge().GetValue()
	}
	if got["simdex_index_documents"] != 7 || got["simdex_index_fingerprints"] != 5 || len(got) != 2 {
		t.Fatalf("gathered %v", got)
	}
	fail = true
	if mfs, err = reg.Gather(); err != nil || len(mfs) != 0 {
		t.Fatalf("with the store down: %d families, err %v; want none and no error", len(mfs), err)
	}
}
