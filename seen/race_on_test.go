//go:build race

package seen

// raceEnabled: the race detector slows hashing and id checks ~10x, so the
// largest test sizes shrink under it (the plain `go test` run keeps them).
const raceEnabled = true
