package pace

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// fakeTimer is a Sleeper's clock and timer under the test's control: a
// wait advances the clock by what the timer is asked for (or by early
// when set, to play a wake-up before the due time), and is recorded.
type fakeTimer struct {
	clock     time.Time
	timerWait []time.Duration // what the timer was armed with, in order
	fallWait  []time.Duration // what the fallback was asked for
	early     time.Duration   // >0: the timer wakes this much before expiry
	fail      bool            // the timer returns an error
	closed    int
}

func (f *fakeTimer) sleeper() *Sleeper {
	return &Sleeper{
		now: func() time.Time { return f.clock },
		timer: func(d time.Duration) error {
			f.timerWait = append(f.timerWait, d)
			if f.fail {
				return errors.New("timer broken")
			}
			if f.early > 0 && d > f.early {
				d -= f.early
			}
			f.clock = f.clock.Add(d)
			return nil
		},
		closeTimer: func() { f.closed++ },
		fallback: func(d time.Duration) {
			f.fallWait = append(f.fallWait, d)
			f.clock = f.clock.Add(d)
		},
	}
}

// TestUntilArmsTheExactRemainder: the timer is armed with exactly the time
// left to the due time, to the nanosecond (no rounding to the runtime's
// milliseconds, which is what made time.Sleep report its own lateness as
// the server's), and Until returns on the due time, not after it.
func TestUntilArmsTheExactRemainder(t *testing.T) {
	f := &fakeTimer{clock: time.Unix(1000, 0)}
	s := f.sleeper()
	for _, d := range []time.Duration{time.Microsecond, 300 * time.Microsecond, 700*time.Microsecond + 13, 3*time.Millisecond + 17*time.Microsecond} {
		f.timerWait = nil
		due := f.clock.Add(d)
		s.Until(due)
		if !slices.Equal(f.timerWait, []time.Duration{d}) {
			t.Errorf("Until(now+%v) armed the timer with %v, want [%v]", d, f.timerWait, d)
		}
		if !f.clock.Equal(due) {
			t.Errorf("Until(now+%v) returned %v after the due time", d, f.clock.Sub(due))
		}
	}
}

// TestUntilPastDue: a due time that has passed (an open loop that fell
// behind) returns at once, without sleeping, so the loop catches up.
func TestUntilPastDue(t *testing.T) {
	f := &fakeTimer{clock: time.Unix(1000, 0)}
	s := f.sleeper()
	s.Until(f.clock)
	s.Until(f.clock.Add(-time.Second))
	if len(f.timerWait) != 0 || len(f.fallWait) != 0 {
		t.Errorf("past due times slept: timer %v, fallback %v", f.timerWait, f.fallWait)
	}
}

// TestUntilNeverEarly: a timer that wakes before the due time is armed
// again for the rest: a request sent early would be timed from a due time
// it did not wait for.
func TestUntilNeverEarly(t *testing.T) {
	f := &fakeTimer{clock: time.Unix(1000, 0), early: 100 * time.Microsecond}
	s := f.sleeper()
	due := f.clock.Add(250 * time.Microsecond)
	s.Until(due)
	if f.clock.Before(due) {
		t.Fatalf("Until returned %v before the due time", due.Sub(f.clock))
	}
	// 250 wakes at 150 (100 early), 100 left is not more than early: exact.
	if want := []time.Duration{250 * time.Microsecond, 100 * time.Microsecond}; !slices.Equal(f.timerWait, want) {
		t.Errorf("timer armed with %v, want %v", f.timerWait, want)
	}
}

// TestUntilFallsBack: a timer that fails is closed and not used again;
// the fallback waits the rest, then every later wait.
func TestUntilFallsBack(t *testing.T) {
	f := &fakeTimer{clock: time.Unix(1000, 0), fail: true}
	s := f.sleeper()
	due := f.clock.Add(time.Millisecond)
	s.Until(due)
	s.Until(due.Add(500 * time.Microsecond))
	if len(f.timerWait) != 1 || f.closed != 1 {
		t.Errorf("failed timer armed %d times and closed %d times, want 1 and 1", len(f.timerWait), f.closed)
	}
	if want := []time.Duration{time.Millisecond, 500 * time.Microsecond}; !slices.Equal(f.fallWait, want) {
		t.Errorf("fallback waited %v, want %v", f.fallWait, want)
	}
	if !f.clock.Equal(due.Add(500 * time.Microsecond)) {
		t.Errorf("clock %v past the last due time", f.clock.Sub(due.Add(500*time.Microsecond)))
	}
}

// TestOpenLoopSchedule drives an open loop as loadgen and storelookup do
// (request i due at start + i*interval, latency counted from the due
// time): sending is never late while requests take less than the
// interval; after a request that overran, the overdue ones go at once
// and the loop is back on the schedule, without drifting.
func TestOpenLoopSchedule(t *testing.T) {
	f := &fakeTimer{clock: time.Unix(1000, 0)}
	s := f.sleeper()
	const interval = 500 * time.Microsecond // 2,000/s
	start := f.clock
	// Request 5 (due at 2.5 ms) takes 1.6 ms, the others 0.2 ms: requests
	// 6-9 are due before the one before them is done.
	wantLate := map[int]time.Duration{
		6: 1100 * time.Microsecond,
		7: 800 * time.Microsecond,
		8: 500 * time.Microsecond,
		9: 200 * time.Microsecond,
	}
	for i := range 20 {
		due := start.Add(time.Duration(i) * interval)
		s.Until(due)
		if late := f.clock.Sub(due); late != wantLate[i] {
			t.Errorf("request %d sent %v after its due time, want %v", i, late, wantLate[i])
		}
		work := 200 * time.Microsecond
		if i == 5 {
			work = 1600 * time.Microsecond
		}
		f.clock = f.clock.Add(work)
	}
}
