package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/exectest"
)

// copyBin copies an executable into dir.
func copyBin(t *testing.T, src, dir string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	tmp := dst + ".new"
	if err := exectest.WriteFile(tmp, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil { // a new file, as an upgrade makes
		t.Fatal(err)
	}
	return dst
}

// hookdStatus reports whether a hookd answers on sock.
func hookdStatus(sock string) bool {
	return exec.Command(wardenBin, "hookd", "status", "--socket", sock).Run() == nil
}

// auditLines is the project's audit trail as JSON lines, oldest first.
func auditLines(t *testing.T, project string) []string {
	t.Helper()
	out, err := exec.Command(wardenBin, "audit", "--policy", filepath.Join(project, "warden.yaml"), "--jsonl").Output()
	if err != nil {
		t.Fatalf("warden audit: %v", err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for start := time.Now(); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > time.Minute { // room for a loaded machine
			t.Fatalf("after 10 s: %s", what)
		}
	}
}

// TestHookdLifecycle runs warden-hook as a host does, one process per event:
// the first call is decided by `warden hook` and starts hookd; later calls
// are answered by hookd alone; WARDEN_HOOKD=off keeps hookd out; and a
// hookd whose binary was replaced (an upgrade) exits.
func TestHookdLifecycle(t *testing.T) {
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "warden.yaml"), []byte(governedPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	bins := t.TempDir()
	warden, client := copyBin(t, wardenBin, bins), copyBin(t, wardenHookBin, bins)
	sockDir, _ := os.MkdirTemp("", "whd-")
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "hookd.sock")
	defer exec.Command(wardenBin, "hookd", "stop", "--socket", sock).Run()

	call := func(bin string, env []string, cmd string) (string, int) {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"session_id": "life", "cwd": project, "hook_event_name": "PreToolUse",
			"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}})
		c := exec.Command(bin, "claude")
		c.Dir = project
		c.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME"), "WARDEN_HOOKD_SOCKET=" + sock}, env...)
		c.Stdin = bytes.NewReader(in)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		c.Run()
		var m struct {
			Out struct {
				Decision string `json:"permissionDecision"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("%s answered no JSON: %v\nstdout: %s\nstderr: %s", bin, err, out.String(), errb.String())
		}
		return m.Out.Decision, c.ProcessState.ExitCode()
	}

	// Off: decided by warden hook, and no hookd is started.
	if d, _ := call(client, []string{"WARDEN_HOOKD=off"}, "touch a"); d != "allow" {
		t.Fatalf("touch with WARDEN_HOOKD=off: %s, want allow", d)
	}
	time.Sleep(300 * time.Millisecond)
	if hookdStatus(sock) {
		t.Fatal("WARDEN_HOOKD=off started a hookd")
	}

	// First call: answered at once, and hookd starts for the next ones.
	if d, _ := call(client, nil, "rm -rf build"); d != "deny" {
		t.Fatalf("rm -rf: %s, want deny", d)
	}
	waitFor(t, "warden-hook started no hookd", func() bool { return hookdStatus(sock) })

	// A warden-hook with no warden to run can only have its answer from
	// hookd; it still decides both ways.
	alone := copyBin(t, client, t.TempDir())
	if d, _ := call(alone, nil, "touch b"); d != "allow" {
		t.Errorf("touch through hookd: %s, want allow", d)
	}
	if d, code := call(alone, nil, "git status && rm -rf keepme"); d != "deny" || code != 0 {
		t.Errorf("compound through hookd: %s (exit %d), want deny", d, code)
	}
	// Without hookd that same client cannot decide, and says deny.
	if d, code := call(alone, []string{"WARDEN_HOOKD=off"}, "touch c"); d != "deny" || code != 2 {
		t.Errorf("no hookd, no warden: %s (exit %d), want deny, exit 2", d, code)
	}

	// An upgrade replaces the warden binary: hookd answers the call in
	// hand, then exits; the next call starts the new one.
	copyBin(t, wardenBin, bins)
	if d, _ := call(client, nil, "touch d"); d != "allow" {
		t.Errorf("touch after the upgrade: %s", d)
	}
	waitFor(t, "hookd still runs after its binary was replaced", func() bool { return !hookdStatus(sock) })
	log, _ := os.ReadFile(filepath.Join(sockDir, "hookd.log"))
	if !strings.Contains(string(log), "stopped: its binary "+warden+" changed") {
		t.Errorf("hookd log does not say why it stopped:\n%s", log)
	}

	// The audit trail has every decision, whichever process made it; the
	// deny warden-hook gave itself (touch c) joins it from the spool with
	// the next record the store takes (touch d).
	var got []string
	for _, line := range auditLines(t, project) {
		var r struct {
			Decision string         `json:"decision"`
			Args     map[string]any `json:"args"`
		}
		json.Unmarshal([]byte(line), &r)
		got = append(got, fmt.Sprintf("%s %v", r.Decision, r.Args["command"]))
	}
	want := "allow touch a|deny rm -rf build|allow touch b|deny git status && rm -rf keepme|allow touch d|deny touch c"
	if strings.Join(got, "|") != want {
		t.Errorf("audit trail:\n%s\nwant:\n%s", strings.Join(got, "|"), want)
	}
}

// TestHookdParallelCalls: a host may run hooks for parallel tool calls at
// once; every call gets its own answer and its own audit record.
func TestHookdParallelCalls(t *testing.T) {
	project := t.TempDir()
	os.WriteFile(filepath.Join(project, "warden.yaml"), []byte(governedPolicy), 0o644)
	sockDir, _ := os.MkdirTemp("", "whd-")
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "hookd.sock")
	defer exec.Command(wardenBin, "hookd", "stop", "--socket", sock).Run()
	run := func(i int) (string, error) {
		cmd := fmt.Sprintf("touch f%d", i)
		if i%2 == 1 {
			cmd = fmt.Sprintf("rm f%d", i)
		}
		in, _ := json.Marshal(map[string]any{"session_id": "par", "cwd": project, "hook_event_name": "PreToolUse",
			"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}})
		c := exec.Command(wardenHookBin, "claude")
		c.Env = append(os.Environ(), "WARDEN_HOOKD_SOCKET="+sock)
		c.Stdin = bytes.NewReader(in)
		out, err := c.Output()
		return string(out), err
	}
	run(0)
	waitFor(t, "no hookd", func() bool { return hookdStatus(sock) })
	const n = 20
	errs := make(chan error, n)
	for i := 1; i <= n; i++ {
		go func() {
			out, err := run(i)
			want := `"allow"`
			if i%2 == 1 {
				want = `"deny"`
			}
			if err != nil || !strings.Contains(out, want) {
				err = fmt.Errorf("call %d: %v %s", i, err, out)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if recs := auditLines(t, project); len(recs) != n+1 {
		t.Errorf("%d audit records, want %d", len(recs), n+1)
	}
}
