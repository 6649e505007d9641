package pace

import (
	"testing"
	"time"
)

// TestSleeperUntil: an open loop's sleeps never end before their due time
// (a request sent early would be timed from a due time it did not wait
// for), past due times return at once, and a Sleeper is reusable.
func TestSleeperUntil(t *testing.T) {
	s := NewSleeper()
	defer s.Close()
	for _, d := range []time.Duration{-time.Second, 0, 50 * time.Microsecond, time.Millisecond, 3 * time.Millisecond, 100 * time.Microsecond} {
		due := time.Now().Add(d)
		s.Until(due)
		if now := time.Now(); now.Before(due) {
			t.Fatalf("sleep of %v ended %v before its due time", d, due.Sub(now))
		}
	}
}
