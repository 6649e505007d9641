// Package defaults fills the zero fields of Config structs with their
// defaults, the first step of every package's withDefaults (kvindex, seen):
// one line per field instead of three, and the same rule everywhere (a
// zero value means "the default").
package defaults

import "log/slog"

// Set sets *field to def when it holds its type's zero value.
func Set[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}

// Logger sets *l to a logger that discards everything when it is nil
// (a Config's Logger is optional).
func Logger(l **slog.Logger) {
	if *l == nil {
		*l = slog.New(slog.DiscardHandler)
	}
}
