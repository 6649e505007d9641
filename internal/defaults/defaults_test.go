package defaults

import (
	"log/slog"
	"testing"
	"time"
)

func TestSet(t *testing.T) {
	type cfg struct {
		D time.Duration
		N int
		S string
	}
	c := cfg{N: 7}
	Set(&c.D, time.Hour)
	Set(&c.N, 3) // set: kept
	Set(&c.S, "x")
	if c.D != time.Hour || c.N != 7 || c.S != "x" {
		t.Fatalf("%+v", c)
	}
	var l *slog.Logger
	Logger(&l)
	if l == nil {
		t.Fatal("nil logger not replaced")
	}
	mine := slog.Default()
	Logger(&mine)
	if mine != slog.Default() {
		t.Fatal("a set logger was replaced")
	}
}
