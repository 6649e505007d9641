package main

import (
	"syscall"
	"time"
)

// sleepUntil sleeps until t. An open loop must send each request on time,
// and time.Sleep cannot: when the whole process is idle, the Go runtime
// waits for its next timer in epoll_wait, whose timeout is in whole
// milliseconds, so a sleep of 300 µs returned ~770 µs late and one of 700
// µs ~370 µs late on the benchmark machine (BENCHMARKS.md, area hb7), and
// since latency counts from the due time, that lateness was reported as
// the server's. nanosleep(2) is a kernel high-resolution timer (~70 µs
// late there, the timer slack and the wake-up); it blocks this goroutine's
// thread, which the runtime replaces for other goroutines meanwhile.
func sleepUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		ts := syscall.NsecToTimespec(int64(d))
		if err := syscall.Nanosleep(&ts, nil); err != nil && err != syscall.EINTR {
			time.Sleep(d)
			return
		}
	}
}
