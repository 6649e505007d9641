// Package pace keeps the benchmarks' open loops on schedule: a Sleeper
// that wakes a goroutine at a due time with microsecond precision instead
// of the Go runtime's whole-millisecond idle waits, so that latencies
// counted from due times measure the system, not the load generator.
package pace
