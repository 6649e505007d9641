package seen

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/internal/promreg"
)

// metrics are the package's Prometheus collectors.
type metrics struct {
	marks   prometheus.Counter
	checked prometheus.Counter
	dropped *prometheus.CounterVec
	// droppedSeen and droppedNear are dropped's two children, looked up
	// once (a label lookup per candidate would cost more than the check).
	droppedSeen, droppedNear prometheus.Counter
	deletes                  prometheus.Counter
	forgets                  prometheus.Counter
	foldRows                 prometheus.Counter
	foldDeltas               prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		marks:      prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_seen_marks_total", Help: "Items marked as seen."}),
		checked:    prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_seen_checked_total", Help: "Candidate ids checked or filtered against seen sets."}),
		dropped:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "simdex_seen_dropped_total", Help: "Candidates dropped by filters, by reason (seen, near)."}, []string{"reason"}),
		deletes:    prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_seen_item_deletes_total", Help: "Seen items deleted."}),
		forgets:    prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_seen_user_forgets_total", Help: "Users whose seen sets were deleted."}),
		foldRows:   prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_seen_fold_rows_total", Help: "Seen rows rewritten by folds."}),
		foldDeltas: prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_seen_fold_deltas_total", Help: "Seen delta cells folded into compact cells."}),
	}
	m.droppedSeen, m.droppedNear = m.dropped.WithLabelValues(ReasonSeen), m.dropped.WithLabelValues(ReasonNear)
	if err := promreg.Register(reg, m.marks, m.checked, m.dropped, m.deletes, m.forgets, m.foldRows, m.foldDeltas); err != nil {
		return nil, err
	}
	return m, nil
}
