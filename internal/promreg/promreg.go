// Package promreg registers and unregisters a package's Prometheus
// collectors as one set: all or none are registered (a failed Open must
// not leave half its metrics behind, or the retry's Register fails), and
// Close unregisters them all. kvindex, hbase and seen share it.
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers cs with reg, unregistering those already registered
// when one fails. A nil reg registers nothing (the collectors still count;
// nobody scrapes them).
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return err
		}
	}
	return nil
}

// Unregister unregisters cs from reg (nil: nothing to do), joining
// notRegistered once for each collector that was not registered.
func Unregister(reg prometheus.Registerer, notRegistered error, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	var errs []error
	for _, c := range cs {
		if !reg.Unregister(c) {
			errs = append(errs, notRegistered)
		}
	}
	return errors.Join(errs...)
}
