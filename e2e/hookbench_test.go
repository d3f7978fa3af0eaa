package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// hookBenchPolicy is a policy of typical size for the hook benchmark.
const hookBenchPolicy = governedPolicy + `  - id: allow-git-read
    effect: allow
    tool: shell
    command: ["git diff *", "git log *", "git show *"]
  - id: ask-push
    effect: ask
    tool: shell
    command: ["git push *"]
    message: Pushing needs the user's approval.
    suggestion: Ask the user to push.
protected:
  - ".git/**"
  - "**/.env"
`

// BenchmarkHookClaude measures one PreToolUse call as Claude Code makes
// it: a new process per event, given the hook JSON on stdin, that decides
// with the session's state, writes the audit record to the SQLite store
// and answers. It reports the median and 90th percentile wall time per
// call (ms).
//
//   - warden-hook/...: `warden-hook claude` (what `warden init` wires) with
//     its hookd running: the small client starts, hands the event to hookd
//     (compiled policy and store kept open) and prints the answer.
//   - warden/...: `warden hook claude`, a full warden process that finds
//     and loads the policy and opens the store for this one call.
//   - .../allow-halt-other: the allow with a halt row present for another
//     session (`warden halt --session other`): the halt check's cost,
//     against .../allow with no halt row.
//
// Run: go test ./e2e -run '^$' -bench HookClaude (or e2e/hookbench.sh).
func BenchmarkHookClaude(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(hookBenchPolicy), 0o644); err != nil {
		b.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "whd-")
	if err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(sockDir, "hookd.sock")
	defer func() {
		exec.Command(wardenBin, "hookd", "stop", "--socket", sock).Run()
		os.RemoveAll(sockDir)
	}()
	for _, bc := range []struct {
		name, cmd string
		bin       string
		args      []string
		halt      bool // a halt row for another session is present
	}{
		{"warden-hook/allow", "git status && git diff HEAD~1", wardenHookBin, nil, false},
		{"warden-hook/allow-halt-other", "git status && git diff HEAD~1", wardenHookBin, nil, true},
		{"warden-hook/deny", "git status && rm -rf build", wardenHookBin, nil, false},
		{"warden/allow", "git status && git diff HEAD~1", wardenBin, nil, false},
		{"warden/allow-halt-other", "git status && git diff HEAD~1", wardenBin, nil, true},
		{"warden/deny", "git status && rm -rf build", wardenBin, nil, false},
		{"warden/stateless-deny", "git status && rm -rf build", wardenBin, []string{"--stateless"}, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in, _ := json.Marshal(map[string]any{"session_id": "bench-" + bc.name, "transcript_path": "/t", "cwd": dir,
				"hook_event_name": "PreToolUse", "permission_mode": "default", "tool_name": "Bash",
				"tool_input": map[string]any{"command": bc.cmd}, "tool_use_id": "toolu_1"})
			args := append([]string{"claude"}, bc.args...)
			if bc.bin == wardenBin {
				args = append([]string{"hook"}, args...)
			}
			call := func() (time.Duration, string) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, bc.bin, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "WARDEN_HOOKD_SOCKET="+sock)
				cmd.Stdin = bytes.NewReader(in)
				start := time.Now()
				out, err := cmd.Output()
				el := time.Since(start)
				if err != nil {
					b.Fatalf("%s %v: %v", bc.bin, args, err)
				}
				return el, string(out)
			}
			// The first call creates the store (and starts hookd); it is
			// not what a host sees on every call.
			if _, out := call(); !strings.Contains(out, "permissionDecision") {
				b.Fatalf("unexpected answer %s", out)
			}
			if bc.bin == wardenHookBin {
				waitHookd(b, sock)
			}
			if bc.halt {
				halt := exec.Command(wardenBin, "halt", "--session", "other", "--message", "bench")
				halt.Dir = dir
				if out, err := halt.CombinedOutput(); err != nil {
					b.Fatalf("warden halt: %v\n%s", err, out)
				}
				defer func() {
					resume := exec.Command(wardenBin, "resume", "--session", "other")
					resume.Dir = dir
					resume.Run()
				}()
				if _, out := call(); strings.Contains(out, "HALTED") || !strings.Contains(out, `"allow"`) {
					b.Fatalf("another session's halt stopped this one: %s", out)
				}
			}
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				el, _ := call()
				times = append(times, el)
			}
			b.StopTimer()
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(times[len(times)/2]), "median-ms")
			b.ReportMetric(ms(times[len(times)*9/10]), "p90-ms")
		})
	}
}

// BenchmarkHookFloor is the floor under BenchmarkHookClaude on this
// machine: starting warden-hook and letting it exit at once (no arguments:
// it prints its usage), with the same harness.
func BenchmarkHookFloor(b *testing.B) {
	times := make([]time.Duration, 0, b.N)
	for range b.N {
		cmd := exec.Command(wardenHookBin)
		start := time.Now()
		if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 {
			b.Fatalf("warden-hook without arguments: %v, want exit 2", err)
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}

// waitHookd waits until a hookd answers on sock.
func waitHookd(t testing.TB, sock string) {
	t.Helper()
	for start := time.Now(); exec.Command(wardenBin, "hookd", "status", "--socket", sock).Run() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("no hookd on %s 10 s after warden-hook started one", sock)
		}
	}
}

// opaBin returns the opa binary ($OPA_BIN or opa on PATH), or "".
func opaBin() string {
	if b := os.Getenv("OPA_BIN"); b != "" {
		return b
	}
	b, _ := exec.LookPath("opa")
	return b
}

// BenchmarkOPAEval measures the same hook call through `opa eval` on the
// equivalent Rego policy (testdata/hookbench.rego), with the same harness:
// one process per call, the hook JSON as input, the hook answer as output.
// It needs an opa binary ($OPA_BIN or on PATH); OPA is not on npm or in
// Debian, so it skips without one.
func BenchmarkOPAEval(b *testing.B) {
	opa := opaBin()
	if opa == "" {
		b.Skip("no opa binary: set OPA_BIN (OPA is not on npm or in Debian; `go install github.com/open-policy-agent/opa@v1.4.2` builds one)")
	}
	rego, _ := filepath.Abs(filepath.Join("testdata", "hookbench.rego"))
	for _, bc := range []struct{ name, cmd, want string }{
		{"allow", "git status && git diff HEAD~1", `"allow"`},
		{"deny", "git status && rm -rf build", `"deny"`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in, _ := json.Marshal(map[string]any{"session_id": "bench", "cwd": "/tmp", "hook_event_name": "PreToolUse",
				"tool_name": "Bash", "tool_input": map[string]any{"command": bc.cmd}})
			call := func() time.Duration {
				cmd := exec.Command(opa, "eval", "--stdin-input", "-d", rego, "-f", "raw", "data.warden.hook_output")
				cmd.Stdin = bytes.NewReader(in)
				start := time.Now()
				out, err := cmd.Output()
				el := time.Since(start)
				if err != nil || !strings.Contains(string(out), bc.want) {
					b.Fatalf("opa eval: %v %s", err, out)
				}
				return el
			}
			call()
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				times = append(times, call())
			}
			b.StopTimer()
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(times[len(times)/2]), "median-ms")
			b.ReportMetric(ms(times[len(times)*9/10]), "p90-ms")
		})
	}
}
