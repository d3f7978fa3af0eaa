//go:build !race

package session_test

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
