package schema

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/simdex/simdex/fingerprint"
)

// PlanInput is what an admin knows before creating the tables.
type PlanInput struct {
	// Fingerprints expected at load (documents; one fingerprint each).
	Fingerprints int64
	// InsertsPerSecond is the steady insert rate.
	InsertsPerSecond float64
	// Retention is how long documents are kept (0: forever; then the rate
	// adds one year's worth).
	Retention time.Duration
	// RegionBytes is the target region size (default 10 GiB, HBase's
	// hbase.hregion.max.filesize default).
	RegionBytes int64
}

// Plan is a recommendation with the arithmetic that led to it.
type Plan struct {
	Live         int64 // fingerprints live at the peak
	Layout       fingerprint.Layout
	Candidates   float64 // expected candidates per lookup at Live
	IndexBytes   int64
	FPBytes      int64
	DocsBytes    int64
	IndexRegions int
	Steps        []string // the arithmetic, one line each
}

// Per-item size assumptions (measured orders of magnitude, docs/OPERATIONS.md):
// a residual in a Snappy-compressed sorted base set takes about 6 bytes plus
// HBase's per-cell overhead amortised over the set; an fp row about 80 bytes
// (8-byte key, id qualifier, cell overhead); a docs row about 150 bytes
// (id, fingerprints, time, small attributes, cell overhead).
const (
	bytesPerResidual = 7
	bytesPerFPRow    = 80
	bytesPerDocRow   = 150
	maxCandidates    = 200.0
)

// MakePlan recommends a layout (K=3, the smallest B whose lookups read at
// most about 200 candidates at the peak size; more blocks mean more tables,
// so more rows per lookup and more index bytes), the index region count and
// the bytes on disk.
func MakePlan(in PlanInput) (Plan, error) {
	if in.Fingerprints < 0 || in.InsertsPerSecond < 0 || in.Retention < 0 {
		return Plan{}, fmt.Errorf("%w: plan input must not be negative", ErrInvalid)
	}
	if in.RegionBytes == 0 {
		in.RegionBytes = 10 << 30
	}
	var p Plan
	window := in.Retention
	wname := "retention"
	if window == 0 {
		window = 365 * 24 * time.Hour
		wname = "one year (no retention)"
	}
	added := int64(in.InsertsPerSecond * window.Seconds())
	p.Live = in.Fingerprints + added
	p.Steps = append(p.Steps, fmt.Sprintf("live fingerprints = %d loaded + %.0f/s x %.0f s (%s) = %d", in.Fingerprints, in.InsertsPerSecond, window.Seconds(), wname, p.Live))
	for _, b := range []int{4, 5, 6, 7, 8} {
		l := fingerprint.Layout{B: b, K: 3}
		var cand float64
		for t := range l.NumTables() {
			cand += float64(p.Live) / math.Exp2(float64(l.PrefixBits(t)))
		}
		p.Layout, p.Candidates = l, cand
		p.Steps = append(p.Steps, fmt.Sprintf("B=%d K=3: T=%d tables, prefix %d bits: candidates/lookup = sum over tables of live/2^prefix = %.1f", b, l.NumTables(), l.PrefixBits(0), cand))
		if cand <= maxCandidates {
			break
		}
	}
	nt := int64(p.Layout.NumTables())
	p.IndexBytes = p.Live * nt * bytesPerResidual
	p.FPBytes = p.Live * bytesPerFPRow
	p.DocsBytes = p.Live * bytesPerDocRow
	p.Steps = append(p.Steps,
		fmt.Sprintf("index bytes = live x T x %d B/residual = %d x %d x %d = %s", bytesPerResidual, p.Live, nt, bytesPerResidual, human(p.IndexBytes)),
		fmt.Sprintf("fp bytes = live x %d B = %s; docs bytes = live x %d B = %s", bytesPerFPRow, human(p.FPBytes), bytesPerDocRow, human(p.DocsBytes)))
	regions := (p.IndexBytes + in.RegionBytes - 1) / in.RegionBytes
	regions = max(regions, nt)
	regions = (regions + nt - 1) / nt * nt
	p.IndexRegions = int(regions)
	p.Steps = append(p.Steps, fmt.Sprintf("index regions = ceil(index bytes / %s per region), at least T, rounded up to a multiple of T = %d", human(in.RegionBytes), p.IndexRegions))
	return p, nil
}

// String prints the plan with its arithmetic.
func (p Plan) String() string {
	var b strings.Builder
	for _, s := range p.Steps {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	fmt.Fprintf(&b, "recommendation: layout B=%d K=%d, index regions %d, bytes on disk (before HBase replication) index %s + fp %s + docs %s = %s\n",
		p.Layout.B, p.Layout.K, p.IndexRegions, human(p.IndexBytes), human(p.FPBytes), human(p.DocsBytes), human(p.IndexBytes+p.FPBytes+p.DocsBytes))
	return b.String()
}

func human(n int64) string {
	switch {
	case n >= 1<<40:
		return fmt.Sprintf("%.1f TiB", float64(n)/(1<<40))
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d B", n)
}
