//go:build !race

package seen

const raceEnabled = false
