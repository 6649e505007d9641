//go:build !linux

package pace

import "time"

// Sleeper waits for the due times of an open loop's requests (see
// pace_linux.go for why Linux does not use time.Sleep).
type Sleeper struct{}

// NewSleeper returns a Sleeper; Close it when done.
func NewSleeper() *Sleeper { return &Sleeper{} }

// Until sleeps until t.
func (s *Sleeper) Until(t time.Time) { time.Sleep(time.Until(t)) }

// Close releases the timer.
func (s *Sleeper) Close() {}
