//go:build !race

package shell_test

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
