//go:build linux

package handler

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox"
)

// specWorkspace makes a git workspace with a hook file and a policy that
// confines shell commands, and loads the policy.
func specWorkspace(t testing.TB) (string, *policy.Policy) {
	t.Helper()
	ws := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for name, body := range map[string]string{"warden.yaml": "version: 1\nsandbox: {shell: on}\n", ".git/hooks/pre-commit": "#!/bin/sh\nexit 0\n", ".env": "TOKEN=secret-x\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol, err := policy.Load(filepath.Join(ws, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return ws, pol
}

// withRunner makes the rewrite use runner as warden-sandbox ("" for
// none) for the test.
func withRunner(t testing.TB, runner string) {
	old := specRunner
	specRunner = func() string { return runner }
	t.Cleanup(func() { specRunner = old })
}

func shellCall(line string) (hook.Event, *warden.Decision) {
	ev := hook.Event{Kind: hook.PreTool, Call: warden.ToolCall{Tool: "Bash", Host: "claude", Args: map[string]any{"command": line}}}
	return ev, &warden.Decision{Decision: warden.Allow, Sandbox: &warden.Confinement{Shell: "on", Network: "deny"}}
}

// TestConfineSpecRewrite: with warden-sandbox next to warden, an allowed
// shell call is rewritten to run under it on a spec file the hook wrote
// into the store folder; the rewritten line, run by bash, keeps the git
// hook unchanged and .env unread and runs a benign write; sent again, it
// is not wrapped twice; without warden-sandbox the rewrite runs `warden
// sandbox`.
func TestConfineSpecRewrite(t *testing.T) {
	if k := kernel(); k.LandlockABI < 4 || !k.UserNS {
		t.Skipf("this machine cannot confine fully (%s)", k)
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", bin+"/", "../../cmd/warden-sandbox").CombinedOutput(); err != nil {
		t.Fatalf("go build warden-sandbox: %v\n%s", err, out)
	}
	runner := filepath.Join(bin, "warden-sandbox")
	withRunner(t, runner)
	ws, pol := specWorkspace(t)
	line := `python3 -c "import os; open(os.path.join('.git', 'hoo' + 'ks', 'pre-commit'), 'w').write('pwned')"; cat .env; echo made > made.txt`
	ev, d := shellCall(line)
	in := prepareConfined(ev, d, pol, false, false)
	rw, _ := in["command"].(string)
	if !strings.Contains(rw, sandbox.Quote(runner)+" --spec '"+filepath.Join(ws, ".warden", "sandbox")+"/") || !strings.Contains(rw, " --spec-sha256 ") {
		t.Fatalf("the rewrite does not run the lean runner on a spec in the store folder: %q", rw)
	}
	if !d.Sandbox.Ran {
		t.Errorf("the decision does not say the call runs confined: %+v", d.Sandbox)
	}
	cmd := exec.Command("bash", "-c", rw)
	cmd.Dir = ws
	out, _ := cmd.CombinedOutput()
	if got, _ := os.ReadFile(filepath.Join(ws, ".git", "hooks", "pre-commit")); string(got) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("the confined command changed the git hook: %q\n%s", got, out)
	}
	if strings.Contains(string(out), "secret-x") {
		t.Errorf("the confined command read .env: %s", out)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "made.txt")); string(got) != "made\n" {
		t.Errorf("the benign write did not happen: %q\n%s", got, out)
	}

	// Sent again with the rewritten input: one sandbox, not two.
	ev2, d2 := shellCall(rw)
	in2 := prepareConfined(ev2, d2, pol, false, false)
	again, _ := in2["command"].(string)
	if inner, ok := sandbox.Unwrap("/nowhere/warden", runner, again); !ok || inner != line {
		t.Errorf("the rewritten line sent again was rewritten to\n%q\nwant the original line under one runner", again)
	}

	// No runner next to warden: `warden sandbox`.
	withRunner(t, "")
	ev3, d3 := shellCall("ls")
	in3 := prepareConfined(ev3, d3, pol, false, false)
	if old, _ := in3["command"].(string); !strings.Contains(old, " sandbox --policy ") || strings.Contains(old, " --spec ") {
		t.Errorf("without warden-sandbox the rewrite is %q; want warden sandbox --policy", old)
	}
}

// BenchmarkPrepareConfinedSpec is BenchmarkPrepareConfined with
// warden-sandbox next to warden: the rewrite runs the lean runner on a
// spec file, which the hook derives (the workspace's walk kept from the
// previous call) and checks on disk for every call.
func BenchmarkPrepareConfinedSpec(b *testing.B) {
	_, pol := specWorkspace(b)
	withRunner(b, "/usr/local/bin/warden-sandbox")
	ev, _ := shellCall("go test ./... && git status --short")
	kernel()
	for range 2 {
		_, d := shellCall("")
		prepareConfined(ev, d, pol, false, false)
		time.Sleep(250 * time.Millisecond) // the workspace's stamps past the clock step
	}
	b.ReportAllocs()
	for b.Loop() {
		_, d := shellCall("")
		if prepareConfined(ev, d, pol, false, false) == nil {
			b.Fatal("no rewrite")
		}
	}
}

// TestUnshareRefusedFallsBack: a line under unshare whose unshare could
// not make the namespaces (a sandbox around the host's shell refuses
// them, which the hook's probe cannot see) tells the model why nothing
// ran, and the next rewrites in the workspace start the runner alone,
// which confines with what is left, until the mark is a day old; a
// command that ran leaves no mark.
func TestUnshareRefusedFallsBack(t *testing.T) {
	u := sandbox.Unshare()
	if k := kernel(); u == "" || !k.UserNS {
		t.Skipf("no unshare to start the runner with here (%s)", k)
	}
	runner := "/opt/warden/warden-sandbox"
	withRunner(t, runner)
	_, pol := specWorkspace(t)
	rewrite := func() string {
		ev, d := shellCall("ls")
		in := prepareConfined(ev, d, pol, false, false)
		rw, _ := in["command"].(string)
		return rw
	}
	first := rewrite()
	if !sandbox.IsInsideRewrite(first) {
		t.Fatalf("the first rewrite does not start the runner under unshare: %q", first)
	}
	post := func(line, output string) string {
		ev := hook.Event{Kind: hook.PostTool, Call: warden.ToolCall{Tool: "Bash", Host: "claude", Args: map[string]any{"command": line}}, Output: output}
		return confinedAfter(ev, pol, "")
	}
	if got := post(first, "total 0\n"); got != "" || unshareRefusedHere(pol) {
		t.Fatalf("a confined command that ran marked the workspace (%q)", got)
	}
	if got := post(first, "unshare: write failed /proc/self/uid_map: Operation not permitted\n"); !strings.Contains(got, "could not start for this command") || !strings.Contains(got, "Run it again") {
		t.Errorf("the model was not told why the command did not run: %q", got)
	}
	if !unshareRefusedHere(pol) {
		t.Fatal("unshare's refusal left no mark")
	}
	next := rewrite()
	if sandbox.IsInsideRewrite(next) || !strings.HasPrefix(next, sandbox.Quote(runner)+" --spec ") {
		t.Errorf("after unshare's refusal the rewrite is %q; want the runner alone", next)
	}
	// The mark ages out: unshare is tried again a day later.
	old := time.Now().Add(-unshareMarkerAge - time.Minute)
	if err := os.Chtimes(unshareMarker(pol), old, old); err != nil {
		t.Fatal(err)
	}
	if again := rewrite(); !sandbox.IsInsideRewrite(again) {
		t.Errorf("a day after unshare's refusal the rewrite is still %q", again)
	}
}
