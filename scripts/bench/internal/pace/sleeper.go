package pace

import "time"

// Sleeper waits for the due times of an open loop's requests. It is not
// safe for concurrent use: give each sending goroutine its own.
//
// Until reads the clock, waits the remainder on a high-resolution timer
// (a timerfd on Linux, see pace_linux.go for why not time.Sleep), and
// reads the clock again: it never returns before the due time, and it
// returns at once for a due time that has passed, so an open loop that
// fell behind catches up instead of drifting.
type Sleeper struct {
	now func() time.Time // the clock due times are read against

	// timer waits d on the high-resolution timer; nil when there is none
	// or it failed once (a failed timer is not trusted again).
	timer      func(d time.Duration) error
	closeTimer func()

	// fallback waits about d when there is no timer; waking early is
	// allowed (Until waits again for the rest).
	fallback func(d time.Duration)
}

// Until sleeps until t, returning at once if t has passed; it never
// returns before t.
func (s *Sleeper) Until(t time.Time) {
	for d := t.Sub(s.now()); d > 0; d = t.Sub(s.now()) {
		if s.timer == nil {
			s.fallback(d)
			continue
		}
		if err := s.timer(d); err != nil {
			s.Close()
		}
	}
}

// Close releases the timer.
func (s *Sleeper) Close() {
	if s.closeTimer != nil {
		s.closeTimer()
	}
	s.timer, s.closeTimer = nil, nil
}
