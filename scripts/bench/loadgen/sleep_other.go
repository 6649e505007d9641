//go:build !linux

package main

import "time"

// sleeper waits for the due times of one connection's open-loop requests
// (see sleep_linux.go for why Linux does not use time.Sleep).
type sleeper struct{}

func newSleeper() *sleeper { return &sleeper{} }

// until sleeps until t.
func (s *sleeper) until(t time.Time) { time.Sleep(time.Until(t)) }

func (s *sleeper) close() {}
