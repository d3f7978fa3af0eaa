//go:build unix

package mcpproxy_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user and system) the process used so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
