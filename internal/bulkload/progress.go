package bulkload

import (
	"fmt"
	"strings"
	"time"
)

// startProgress starts the progress reporter (when cfg.Progress is set) and
// returns the function that stops it and waits for it. The reporter owns
// nothing but its ticker; it reads the loader's atomic counters.
func (l *loader) startProgress() (stop func()) {
	if l.cfg.Progress == nil {
		return func() {}
	}
	every := l.cfg.ProgressEvery
	if l.cfg.ProgressTTY {
		every = 500 * time.Millisecond
	}
	done := make(chan struct{})
	joined := make(chan struct{})
	start := time.Now()
	startBytes := l.cp.InputBytes
	go func() {
		defer close(joined)
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-done:
				if l.cfg.ProgressTTY {
					fmt.Fprintln(l.cfg.Progress, l.progressLine(start, startBytes))
				}
				return
			case <-tk.C:
				line := l.progressLine(start, startBytes)
				if l.cfg.ProgressTTY {
					fmt.Fprintf(l.cfg.Progress, "\r%s\x1b[K", line)
				} else {
					fmt.Fprintln(l.cfg.Progress, line)
				}
			}
		}
	}()
	return func() { close(done); <-joined }
}

// progressLine renders the state: a bar over input bytes while reading
// (when the total is known), then over rows while merging; rate and ETA.
func (l *loader) progressLine(start time.Time, startBytes int64) string {
	el := time.Since(start).Seconds()
	phase, _ := l.phase.Load().(string)
	recs, rej := l.pRecords.Load(), l.pRejected.Load()
	var frac float64 = -1
	var eta string
	switch phase {
	case "read":
		b := l.pBytes.Load()
		if l.totalBytes > 0 {
			frac = float64(b) / float64(l.totalBytes)
			if rate := float64(b-startBytes) / el; rate > 0 && b < l.totalBytes {
				eta = (time.Duration(float64(l.totalBytes-b)/rate) * time.Second).Round(time.Second).String()
			}
		}
	case "merge":
		rows := l.pRows.Load()
		if l.totalRows > 0 {
			frac = min(1, float64(rows)/float64(l.totalRows))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s ", phase)
	if frac >= 0 {
		const width = 30
		n := int(frac * width)
		fmt.Fprintf(&b, "[%s%s] %5.1f%% ", strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac)
	}
	fmt.Fprintf(&b, "%d records (%.0f/s), %d rejected", recs, float64(recs)/max(el, 1e-9), rej)
	if phase == "merge" {
		fmt.Fprintf(&b, ", %d rows written", l.pRows.Load())
	}
	if eta != "" {
		fmt.Fprintf(&b, ", ETA %s", eta)
	}
	return b.String()
}
