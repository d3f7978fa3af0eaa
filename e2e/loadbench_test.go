package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/sqlite"
)

// BenchmarkHookLoad runs many `warden-hook claude` clients at once on one
// project, each a new process per call as a host makes it, through one
// hookd: 1, 10, 50 and 200 at a time, b.N calls in all (at least 4 per
// client). It reports calls/s, the median and 99th percentile wall time
// per call, the calls that timed out, and the audit records written
// against the calls made (the two must be equal).
//
// Run: bash e2e/loadbench.sh [calls], or
// go test ./e2e -run '^$' -bench HookLoad -benchtime 400x. With
// WARDEN_HOOKD=off every call runs `warden hook` instead.
func BenchmarkHookLoad(b *testing.B) {
	levels := []int{1, 10, 50, 200}
	if s := os.Getenv("WARDEN_LOAD_LEVELS"); s != "" {
		levels = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("WARDEN_LOAD_LEVELS=%q: want numbers such as 1,10,50", s)
			}
			levels = append(levels, n)
		}
	}
	for _, conc := range levels {
		b.Run(fmt.Sprintf("clients-%d", conc), func(b *testing.B) {
			dir := b.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(hookBenchPolicy), 0o644); err != nil {
				b.Fatal(err)
			}
			old := time.Now().Add(-time.Minute)
			os.Chtimes(filepath.Join(dir, "warden.yaml"), old, old)
			sockDir, err := os.MkdirTemp("", "whl-")
			if err != nil {
				b.Fatal(err)
			}
			sock := filepath.Join(sockDir, "hookd.sock")
			defer func() {
				exec.Command(wardenBin, "hookd", "stop", "--socket", sock).Run()
				os.RemoveAll(sockDir)
			}()
			env := append(os.Environ(), "WARDEN_HOOKD_SOCKET="+sock)
			var seq atomic.Int64
			devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer devNull.Close()
			call := func(worker int) (time.Duration, string, error) {
				n := seq.Add(1)
				cmdline := "git status && git diff HEAD~1"
				if n%4 == 0 {
					cmdline = "git status && rm -rf build"
				}
				in, _ := json.Marshal(map[string]any{"session_id": fmt.Sprintf("load-%d", worker), "cwd": dir,
					"hook_event_name": "PreToolUse", "tool_name": "Bash",
					"tool_input": map[string]any{"command": cmdline}, "tool_use_id": fmt.Sprintf("toolu_%d", n)})
				return spawn(wardenHookBin, dir, env, in, devNull)
			}
			// The first call creates the store and starts hookd.
			if _, out, err := call(-1); err != nil || !strings.Contains(out, "permissionDecision") {
				b.Fatalf("first call: %v %s", err, out)
			}
			if os.Getenv("WARDEN_HOOKD") != "off" {
				waitHookd(b, sock)
			}
			total := max(b.N, 4*conc)
			var next atomic.Int64
			var mu sync.Mutex
			times := make([]time.Duration, 0, total)
			var timeouts, failures atomic.Int64
			var wg sync.WaitGroup
			hookdPID := 0
			if os.Getenv("WARDEN_HOOKD") != "off" {
				hookdPID = hookdPid(b, sock)
			}
			cpu0, hookd0 := cpuNow(), procCPU(hookdPID)
			b.ResetTimer()
			start := time.Now()
			for w := range conc {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(total) {
						el, out, err := call(w)
						if strings.Contains(out, "in time") || strings.Contains(out, "no decision within") {
							timeouts.Add(1)
						} else if err != nil || !strings.Contains(out, "permissionDecision") {
							failures.Add(1)
						}
						mu.Lock()
						times = append(times, el)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			wall := time.Since(start)
			b.StopTimer()
			cpu1, hookd1 := cpuNow(), procCPU(hookdPID)

			st, err := sqlite.Open(context.Background(), filepath.Join(dir, ".warden", "warden.db"))
			if err != nil {
				b.Fatal(err)
			}
			recs, err := st.Audit(context.Background(), warden.AuditFilter{})
			st.Close()
			if err != nil {
				b.Fatal(err)
			}
			records := len(recs) - 1 // the first call's
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(float64(total)/wall.Seconds(), "calls/s")
			b.ReportMetric(ms(times[len(times)/2]), "p50-ms")
			b.ReportMetric(ms(times[min(len(times)-1, len(times)*99/100)]), "p99-ms")
			b.ReportMetric(float64(timeouts.Load()), "timeouts")
			b.ReportMetric(float64(records), "records")
			b.ReportMetric(float64(total), "calls")
			b.ReportMetric(float64(failures.Load()), "unanswered")
			// CPU time per call, which the load of other processes on the
			// machine does not change much, unlike wall time: the clients
			// (and `warden hook` when it runs), the generator, and hookd.
			perCall := func(d time.Duration) float64 { return ms(d) / float64(total) }
			b.ReportMetric(perCall(cpu1.children-cpu0.children), "client-cpu-ms/call")
			b.ReportMetric(perCall(cpu1.self-cpu0.self), "gen-cpu-ms/call")
			b.ReportMetric(perCall(hookd1-hookd0), "hookd-cpu-ms/call")
			if records != total {
				b.Logf("%d audit records for %d calls", records, total)
			}
		})
	}
}

// spawn runs bin claude in dir with env, the hook JSON in on its stdin,
// as a host does, and returns the wall time, its stdout and its error.
// It is lean so that the generator does not limit the load: stdin and
// stdout are pipes the process reads and writes directly (no copying
// goroutines), and stderr, which the benchmark does not read, goes to
// the one /dev/null.
func spawn(bin, dir string, env []string, in []byte, stderr *os.File) (time.Duration, string, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return 0, "", err
	}
	defer inR.Close()
	// The input is far below a pipe's buffer: the write does not block.
	_, err = inW.Write(in)
	inW.Close()
	if err != nil {
		return 0, "", err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return 0, "", err
	}
	defer outR.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "claude")
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = dir, env, inR, outW, stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		outW.Close()
		return 0, "", err
	}
	outW.Close()
	var out bytes.Buffer
	_, rerr := out.ReadFrom(outR)
	err = cmd.Wait()
	el := time.Since(start)
	if err == nil {
		err = rerr
	}
	return el, out.String(), err
}
