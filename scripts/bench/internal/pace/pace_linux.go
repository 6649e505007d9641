package pace

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Sleeper waits for the due times of an open loop's requests. It is not
// safe for concurrent use: give each sending goroutine its own.
//
// An open loop must send each request on time, and neither of the obvious
// ways does on a 2-core machine:
//
//   - time.Sleep: when the whole process is idle, the Go runtime waits for
//     its next timer in epoll_wait, whose timeout is in whole milliseconds,
//     so a sleep of 300 µs returned ~770 µs late and one of 700 µs ~370 µs
//     late on the benchmark machine (BENCHMARKS.md, area hb7); since
//     latency counts from the due time, that lateness was reported as the
//     server's.
//   - nanosleep(2) (what loadgen used next): precise, but a blocking
//     system call that keeps its P (the runtime's right to run Go code).
//     With 32 connections and GOMAXPROCS=2, both Ps are usually held by
//     sleeping threads, and an answer that arrives meanwhile waits until
//     a sleep ends or sysmon, which backs off to 10 ms sleeps when idle,
//     takes a P back: open-loop p99s of 1.6-17.8 ms against the same
//     server that gave 1.0-1.4 ms with GOMAXPROCS=34 (BENCHMARKS.md,
//     session 9).
//
// A timerfd(2) is a high-resolution kernel timer that is also a file
// descriptor: registered with the runtime's network poller (os.NewFile of
// a non-blocking fd), a read parks only the goroutine, and the poller's
// epoll_wait wakes at the timer's expiry with microsecond precision, like
// at an answer's arrival.
type Sleeper struct {
	fd int
	f  *os.File // the timerfd, pollable; nil: nanosleep instead
}

// NewSleeper returns a Sleeper; Close it when done.
func NewSleeper() *Sleeper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &Sleeper{fd: -1}
	}
	return &Sleeper{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}
}

// Until sleeps until t, returning at once if t has passed; it never
// returns before t.
func (s *Sleeper) Until(t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	if s.f != nil {
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
		if err := unix.TimerfdSettime(s.fd, 0, &spec, nil); err == nil {
			var expirations [8]byte
			if _, err := s.f.Read(expirations[:]); err == nil {
				return
			}
		}
		// A timerfd that fails once is not trusted again.
		s.f.Close()
		s.f = nil
	}
	for d = time.Until(t); d > 0; d = time.Until(t) {
		ts := syscall.NsecToTimespec(int64(d))
		if err := syscall.Nanosleep(&ts, nil); err != nil && err != syscall.EINTR {
			time.Sleep(d)
			return
		}
	}
}

// Close releases the timer.
func (s *Sleeper) Close() {
	if s.f != nil {
		s.f.Close()
	}
}
