package pace

import (
	"testing"
	"time"
)

// TestTimerfdInUse: on Linux a Sleeper waits on its timerfd, and keeps it
// through real waits (a Sleeper that fell back to nanosleep would pace an
// open loop badly, see NewSleeper), and never returns before a due time.
func TestTimerfdInUse(t *testing.T) {
	s := NewSleeper()
	defer s.Close()
	if s.timer == nil {
		t.Fatal("no timerfd: the Sleeper fell back to nanosleep")
	}
	for _, d := range []time.Duration{-time.Second, 0, 50 * time.Microsecond, time.Millisecond, 100 * time.Microsecond} {
		due := time.Now().Add(d)
		s.Until(due)
		if now := time.Now(); now.Before(due) {
			t.Fatalf("sleep of %v ended %v before its due time", d, due.Sub(now))
		}
	}
	if s.timer == nil {
		t.Fatal("the timerfd failed during a wait and the Sleeper fell back to nanosleep")
	}
}
