//go:build !linux

package pace

import "time"

// NewSleeper returns a Sleeper; Close it when done. Outside Linux it waits
// with time.Sleep (see pace_linux.go for what that costs an open loop).
func NewSleeper() *Sleeper {
	return &Sleeper{now: time.Now, fallback: time.Sleep}
}
