package e2e

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/hookd"
)

// cpuTimes is the CPU time (user and system) of this process and of its
// waited-for children.
type cpuTimes struct{ self, children time.Duration }

func cpuNow() cpuTimes {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(r *syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return cpuTimes{tv(&self), tv(&kids)}
}

// procCPU is the CPU time of process pid so far (0 for pid 0 or when
// unreadable), from /proc/PID/stat.
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	// utime and stime are fields 14 and 15 of the line (11 and 12 after
	// the command), in clock ticks of 10 ms on Linux.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// hookdPid asks the hookd on sock for its process id.
func hookdPid(b *testing.B, sock string) int {
	resp, err := hookd.Ask(sock, &hookd.Request{Op: hookd.OpPing}, 10*time.Second)
	if err != nil {
		b.Fatalf("ping hookd: %v", err)
	}
	return resp.PID
}
