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

// BenchmarkHookClaude measures one `warden hook claude` PreToolUse call as
// a host makes it: a new process that starts, finds and loads the policy,
// opens the SQLite store, decides with the session's state, writes the
// audit record and exits. It reports the median and 90th percentile wall
// time per call (ms). Run: go test ./e2e -run '^$' -bench HookClaude
// (or e2e/hookbench.sh).
func BenchmarkHookClaude(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(hookBenchPolicy), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name, cmd string
		args      []string
	}{
		{"allow", "git status && git diff HEAD~1", nil},
		{"deny", "git status && rm -rf build", nil},
		{"stateless-deny", "git status && rm -rf build", []string{"--stateless"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in, _ := json.Marshal(map[string]any{"session_id": "bench-" + bc.name, "transcript_path": "/t", "cwd": dir,
				"hook_event_name": "PreToolUse", "permission_mode": "default", "tool_name": "Bash",
				"tool_input": map[string]any{"command": bc.cmd}, "tool_use_id": "toolu_1"})
			call := func() (time.Duration, string) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, wardenBin, append([]string{"hook", "claude"}, bc.args...)...)
				cmd.Dir = dir
				cmd.Stdin = bytes.NewReader(in)
				start := time.Now()
				out, err := cmd.Output()
				el := time.Since(start)
				if err != nil {
					b.Fatalf("warden hook claude: %v", err)
				}
				return el, string(out)
			}
			// The first call creates the store; it is not what a host sees
			// on every call.
			if _, out := call(); !strings.Contains(out, "permissionDecision") {
				b.Fatalf("unexpected answer %s", out)
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

// TestHookWallTime runs the hook 30 times and logs the median: a quick
// figure in every e2e run (go test -v ./e2e -run HookWallTime). It fails
// only when the median is far above the 5 ms target (100 ms), since the
// test machines are shared.
func TestHookWallTime(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(hookBenchPolicy), 0o644)
	in := fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status"}}`, dir)
	var times []time.Duration
	for i := range 31 {
		cmd := exec.Command(wardenBin, "hook", "claude")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(in)
		start := time.Now()
		if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"allow"`) {
			t.Fatalf("hook: %v %s", err, out)
		}
		if i > 0 {
			times = append(times, time.Since(start))
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	med := times[len(times)/2]
	t.Logf("warden hook claude (PreToolUse, SQLite store, audit write): median %.2f ms, min %.2f ms, max %.2f ms over %d calls",
		float64(med.Microseconds())/1000, float64(times[0].Microseconds())/1000, float64(times[len(times)-1].Microseconds())/1000, len(times))
	if med > 100*time.Millisecond {
		t.Errorf("median hook wall time %s is far above the 5 ms target", med)
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
