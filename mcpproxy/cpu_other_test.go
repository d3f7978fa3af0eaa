//go:build !unix

package mcpproxy_test

import (
	"testing"
	"time"
)

// cpuTime is zero where the process's CPU time is not measured.
func cpuTime(testing.TB) time.Duration { return 0 }
