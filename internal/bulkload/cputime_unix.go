//go:build unix

package bulkload

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) this process has used so far,
// for the phase log lines: on a shared machine wall time alone does not say
// where a load's time goes.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
