package promreg

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func counter(name string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: name})
}

func TestRegisterAllOrNone(t *testing.T) {
	reg := prometheus.NewRegistry()
	taken := counter("b_total")
	if err := reg.Register(taken); err != nil {
		t.Fatal(err)
	}
	a, b := counter("a_total"), counter("b_total")
	var are prometheus.AlreadyRegisteredError
	if err := Register(reg, a, b); !errors.As(err, &are) {
		t.Fatalf("registering a name twice: %v", err)
	}
	if err := reg.Register(counter("a_total")); err != nil { // a was rolled back
		t.Fatalf("a left registered after the failure: %v", err)
	}

	reg = prometheus.NewRegistry()
	if err := Register(reg, a, b); err != nil {
		t.Fatal(err)
	}
	errNot := errors.New("x: not registered")
	if err := Unregister(reg, errNot, a, b); err != nil {
		t.Fatal(err)
	}
	if err := Unregister(reg, errNot, a, b); !errors.Is(err, errNot) {
		t.Fatalf("unregistering twice: %v", err)
	}
	if Register(nil, a) != nil || Unregister(nil, errNot, a) != nil {
		t.Fatal("a nil registerer is not a no-op")
	}
}
