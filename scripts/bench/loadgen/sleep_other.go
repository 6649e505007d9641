//go:build !linux

package main

import "time"

// sleepUntil sleeps until t (see sleep_linux.go for why Linux does not use
// time.Sleep).
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
