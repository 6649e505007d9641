package pace

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// NewSleeper returns a Sleeper on a timerfd (nanosleep if the kernel
// refuses one); Close it when done.
//
// An open loop must send each request on time, and neither of the obvious
// ways does on a 2-core machine:
//
//   - time.Sleep: when the whole process is idle, the Go runtime waits for
//     its next timer in epoll_wait, whose timeout is in whole milliseconds,
//     so a sleep of 300 µs returned ~770 µs late and one of 700 µs ~370 µs
//     late on the benchmark machine (benchmarks/2026-11-23-hbase-coalescing.md);
//     since latency counts from the due time, that lateness was reported
//     as the server's.
//   - nanosleep(2): precise, but a blocking system call that keeps its P
//     (the runtime's right to run Go code). With 32 connections and
//     GOMAXPROCS=2, both Ps are usually held by sleeping threads, and an
//     answer that arrives meanwhile waits until a sleep ends or sysmon,
//     which backs off to 10 ms sleeps when idle, takes a P back: open-loop
//     p99s of 1.6-17.8 ms against the same server that gave 1.0-1.4 ms
//     with GOMAXPROCS=34 (benchmarks/2026-11-25-hbase-lookups.md).
//
// A timerfd(2) is a high-resolution kernel timer that is also a file
// descriptor: registered with the runtime's network poller (os.NewFile of
// a non-blocking fd), a read parks only the goroutine, and the poller's
// epoll_wait wakes at the timer's expiry with microsecond precision, like
// at an answer's arrival.
func NewSleeper() *Sleeper {
	s := &Sleeper{now: time.Now, fallback: nanosleep}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return s
	}
	f := os.NewFile(uintptr(fd), "timerfd") // pollable
	s.timer = func(d time.Duration) error {
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
		if err := unix.TimerfdSettime(fd, 0, &spec, nil); err != nil {
			return err
		}
		var expirations [8]byte
		_, err := f.Read(expirations[:])
		return err
	}
	s.closeTimer = func() { f.Close() }
	return s
}

// nanosleep sleeps about d in nanosleep(2), or time.Sleep if that fails.
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	if err := syscall.Nanosleep(&ts, nil); err != nil && err != syscall.EINTR {
		time.Sleep(d)
	}
}
