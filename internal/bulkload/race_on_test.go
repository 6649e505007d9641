//go:build race

package bulkload

// raceEnabled is true when the tests run under the race detector.
const raceEnabled = true
