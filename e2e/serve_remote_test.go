package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
)

// remoteHook runs warden-hook for Claude Code with a PreToolUse event for
// a Bash command, in the service's project folder, with the environment
// given, and returns its stdout, stderr and exit code.
func remoteHook(t *testing.T, dir string, env []string, command string, flags ...string) (string, string, int) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"session_id": "s-remote", "hook_event_name": "PreToolUse", "cwd": dir,
		"tool_name": "Bash", "tool_input": map[string]any{"command": command}})
	cmd := exec.Command(wardenHookBin, append([]string{"claude"}, flags...)...)
	cmd.Dir = dir
	// Claude Code as `claude -p` runs it: it cannot prompt its user, so
	// an ask waits in the service's approval queue.
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "WARDEN_HOOKD_SOCKET=" + dir + "/no-hookd.sock",
		"CLAUDE_CODE_ENTRYPOINT=sdk-cli"}, env...)
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestServeRemoteHook: warden-hook with --serve (as `warden init claude
// --serve URL` wires it) is decided and audited by the service, waits
// there for a person's answer, and is denied, never allowed, when the
// service is unreachable or refuses its token.
func TestServeRemoteHook(t *testing.T) {
	dir := serveProject(t, servePolicy)
	agent := serveToken(t, dir, "agent", "laptop")
	person := serveToken(t, dir, "person", "alice")
	s := startServe(t, dir)
	env := []string{"WARDEN_SERVE_TOKEN=" + agent}

	out, _, code := remoteHook(t, dir, env, "echo hi", "--serve", s.url)
	if code != 0 || !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("echo through the service: exit %d: %s", code, out)
	}
	out, _, code = remoteHook(t, dir, append(env, "WARDEN_SERVE_URL="+s.url), "git push origin main")
	if !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Fatalf("git push through the service (URL from the environment): exit %d: %s", code, out)
	}

	// An ask waits on the service; a person answers; the hook allows.
	type res struct {
		out  string
		code int
	}
	done := make(chan res, 1)
	go func() {
		o, _, c := remoteHook(t, dir, env, "touch remote.txt", "--serve", s.url, "--wait", "90s")
		done <- res{o, c}
	}()
	a := s.waitPending(person)
	if a.Host != "claude" || a.Session != "s-remote" || a.Agent != "laptop" {
		t.Fatalf("approval from the remote hook: %+v", a)
	}
	if code := s.call("POST", "/v1/approvals/"+a.ID+"/approve", person, map[string]any{"scope": "once"}, nil); code != 200 {
		t.Fatalf("approve: %d", code)
	}
	select {
	case r := <-done:
		if !strings.Contains(r.out, `"permissionDecision":"allow"`) {
			t.Fatalf("the waiting hook after the approval: exit %d: %s", r.code, r.out)
		}
	case <-time.After(120 * time.Second):
		t.Fatal("the waiting hook got no answer")
	}

	// Every decision is in the service's audit trail.
	var recs []warden.AuditRecord
	s.call("GET", "/v1/audit?session=s-remote", person, nil, &recs)
	if len(recs) != 3 || recs[0].Host != "claude" || recs[0].Agent != "laptop" || recs[2].Decision != warden.Allow {
		t.Fatalf("audit on the service: %+v", recs)
	}

	// Fail closed: a wrong token, an agent token that was revoked, no
	// token, a service that is not there.
	for _, c := range []struct {
		name string
		env  []string
		url  string
		want string
		code warden.Code
	}{
		{"wrong token", []string{"WARDEN_SERVE_TOKEN=wdn_nottherightone"}, s.url, "refused", warden.CodeRefused},
		{"no token", []string{"XDG_CONFIG_HOME=" + t.TempDir()}, s.url, "no agent token", warden.CodeRefused},
		{"person token", []string{"WARDEN_SERVE_TOKEN=" + person}, s.url, "needs an agent token", warden.CodeRefused},
		{"unreachable", env, "http://127.0.0.1:1", "unreachable", warden.CodeUnavailable},
		{"not a URL", env, "127.0.0.1:1", "want http://HOST:PORT", warden.CodeRefused},
	} {
		out, stderr, code := remoteHook(t, dir, c.env, "echo hi", "--serve", c.url)
		// The model is told what happened and what to do: the service's
		// setup for a refusal, a retry for a service that is down.
		hint := map[warden.Code]string{warden.CodeRefused: "agent token", warden.CodeUnavailable: "Retry the call"}[c.code]
		if code != 2 || !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out+stderr, c.want) ||
			!strings.Contains(out+stderr, string(c.code)) || !strings.Contains(out+stderr, hint) {
			t.Errorf("%s: exit %d, want 2 and a %s deny saying %q and %q:\n%s\n%s", c.name, code, c.code, c.want, hint, out, stderr)
		}
	}
	// The service recorded none of the refused calls.
	s.call("GET", "/v1/audit?session=s-remote", person, nil, &recs)
	if len(recs) != 3 {
		t.Fatalf("audit after the refused calls: %d records", len(recs))
	}
}

// TestServeDoctor: on a project wired to a team's service (`warden init
// claude --serve URL`), init registers no MCP server that could not start
// there, and `warden doctor` checks the service, the agent token and a
// deny through the service instead of a local policy: it passes when the
// machine is set up, and says what is wrong when it is not.
func TestServeDoctor(t *testing.T) {
	dir := serveProject(t, servePolicy)
	agent := serveToken(t, dir, "agent", "laptop")
	person := serveToken(t, dir, "person", "alice")
	s := startServe(t, dir)
	project := t.TempDir()
	run := func(env []string, args ...string) (string, int) {
		cmd := exec.Command(wardenBin, args...)
		cmd.Dir = project
		cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "WARDEN_HOOKD_SOCKET=" + project + "/no-hookd.sock"}, env...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := run(nil, "init", "claude", "--serve", s.url, "--bin", wardenHookBin)
	if code != 0 || !strings.Contains(out, "MCP server (warden mcp serve) is not registered") {
		t.Fatalf("init --serve: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(project + "/.mcp.json"); err == nil {
		t.Fatal("init --serve registered warden's MCP server, which has no policy to start with here")
	}
	out, code = run([]string{"WARDEN_SERVE_TOKEN=" + agent}, "doctor", "claude")
	if code != 0 || strings.Count("\n"+out, "\nok  ") != 7 || !strings.Contains(out, "denied by the service") {
		t.Fatalf("doctor on a project the service decides for: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		name, want string
		env        []string
	}{
		{"person token", "hooks need an agent token", []string{"WARDEN_SERVE_TOKEN=" + person}},
		{"unknown token", "refused this machine's agent token", []string{"WARDEN_SERVE_TOKEN=wdn_0123456789abcdef0123456789abcdef"}},
		{"no token", "no agent token for warden serve", []string{"XDG_CONFIG_HOME=" + t.TempDir()}},
	} {
		out, code := run(c.env, "doctor", "claude")
		if code == 0 || !strings.Contains(out, "FAIL claude   token") || !strings.Contains(out, c.want) {
			t.Errorf("doctor with %s: exit %d, want a failed token check saying %q\n%s", c.name, code, c.want, out)
		}
	}
	s.stop()
	out, code = run([]string{"WARDEN_SERVE_TOKEN=" + agent}, "doctor", "claude")
	if code == 0 || !strings.Contains(out, "FAIL claude   service") || !strings.Contains(out, "does not answer") {
		t.Fatalf("doctor with the service stopped: exit %d\n%s", code, out)
	}
}
