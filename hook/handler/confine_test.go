package handler_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/sandbox"
)

const confinePolicy = `version: 1
default: {safe: allow, confined: allow, destructive: ask}
rules:
  - id: allow-ls
    effect: allow
    tool: shell
    command: ["ls *"]
  - id: no-rm
    effect: deny
    tool: shell
    command: ["rm *"]
    message: No deletes.
    suggestion: Keep the file.
sandbox: {shell: on}
`

// canConfine skips a test on a machine that cannot confine.
func canConfine(t *testing.T) {
	t.Helper()
	k := sandbox.Probe()
	if k.LandlockABI < 4 || !k.UserNS {
		t.Skipf("this machine cannot confine fully (%s)", k)
	}
}

// rewritten is the command line the answer's input rewrite carries for
// a host, "" when there is none.
func rewritten(t *testing.T, host string, m map[string]any) (string, map[string]any) {
	t.Helper()
	var in map[string]any
	switch host {
	case "claude", "codex":
		hs, _ := m["hookSpecificOutput"].(map[string]any)
		in, _ = hs["updatedInput"].(map[string]any)
	case "gemini":
		hs, _ := m["hookSpecificOutput"].(map[string]any)
		in, _ = hs["tool_input"].(map[string]any)
	case "opencode":
		in, _ = m["args"].(map[string]any)
	}
	for _, k := range []string{"command", "cmd"} {
		if s, ok := in[k].(string); ok {
			return s, in
		}
	}
	return "", in
}

// TestConfineRewriteEveryHost: an allowed shell call, by a rule and by
// the confined default, is answered on each host with the input rewrite
// that runs the line byte for byte under `warden sandbox` with the
// policy that decided it; the other arguments are kept; a denied call
// gets no rewrite.
func TestConfineRewriteEveryHost(t *testing.T) {
	canConfine(t)
	cwd := project(t, confinePolicy)
	pol, _ := filepath.EvalSymlinks(filepath.Join(cwd, "..", "..", "warden.yaml"))
	exe, err := sandbox.Executable()
	if err != nil {
		t.Fatal(err)
	}
	events := map[string]func(cmd string) string{
		"claude": func(cmd string) string {
			return hostEvent("PreToolUse", "Bash", cwd, map[string]any{"command": cmd, "description": "d"})
		},
		"codex": func(cmd string) string {
			return hostEvent("PreToolUse", "exec_command", cwd, map[string]any{"cmd": cmd, "yield_time_ms": 1000})
		},
		"gemini": func(cmd string) string {
			return hostEvent("BeforeTool", "run_shell_command", cwd, map[string]any{"command": cmd, "description": "d"})
		},
		"opencode": func(cmd string) string {
			js, _ := json.Marshal(map[string]any{"event": "tool.execute.before", "session_id": "s1", "directory": cwd, "tool": "bash",
				"call_id": "c1", "args": map[string]any{"command": cmd, "description": "d"}, "rewrite": true})
			return string(js)
		},
	}
	for host, ev := range events {
		for _, line := range []string{"ls -la", "./build.sh 'it''s' \"$HOME\"\necho done", "python3 -c \"print('x')\""} {
			_, m, log := runHook(t, nil, ev(line), host, "--stateless")
			got, in := rewritten(t, host, m)
			// What only the confined default allows may never run unconfined.
			want, _ := sandbox.Rewrite(exe, pol, !strings.HasPrefix(line, "ls "), line)
			if got != want {
				t.Errorf("%s: %q was answered with %q; want the rewrite %q\n%v\n%s", host, line, got, want, m, log)
			}
			if host != "codex" && in["description"] != "d" {
				t.Errorf("%s: the rewrite lost the other arguments: %v", host, in)
			}
			if host == "codex" && in["yield_time_ms"] == nil {
				t.Errorf("codex: the rewrite lost the other arguments: %v", in)
			}
			if host == "claude" || host == "codex" {
				if d, _ := permission(m); d != "allow" {
					t.Errorf("%s: the rewrite comes with permissionDecision %q, want allow", host, d)
				}
			}
		}
		_, m, _ := runHook(t, nil, ev("rm x"), host, "--stateless")
		if got, _ := rewritten(t, host, m); got != "" {
			t.Errorf("%s: a denied call got a rewrite: %s", host, got)
		}
	}
}

// TestConfineOldOpenCodePlugin: a plugin that cannot assign the rewrite
// (written before it) gets a deny for a call allowed only confined, and
// the call allowed by a rule runs with a warning that it is unconfined.
func TestConfineOldOpenCodePlugin(t *testing.T) {
	canConfine(t)
	cwd := project(t, confinePolicy)
	ev := func(cmd string) string {
		js, _ := json.Marshal(map[string]any{"event": "tool.execute.before", "session_id": "s1", "directory": cwd, "tool": "bash",
			"call_id": "c1", "args": map[string]any{"command": cmd}})
		return string(js)
	}
	_, m, _ := runHook(t, nil, ev("./build.sh"), "opencode", "--stateless")
	if m["decision"] != "deny" || !strings.Contains(m["message"].(string), "warden init opencode") {
		t.Errorf("an old plugin's call allowed only confined: %v; want a deny that says to update the plugin", m)
	}
	_, m, _ = runHook(t, nil, ev("ls -la"), "opencode", "--stateless")
	if m["decision"] == "deny" || m["args"] != nil || !strings.Contains(m["append"].(string), "runs unconfined") {
		t.Errorf("an old plugin's call allowed by a rule: %v; want it allowed with a warning that it runs unconfined", m)
	}
}

// TestConfineAuditModeNoRewrite: in audit mode warden only observes: no
// rewrite.
func TestConfineAuditModeNoRewrite(t *testing.T) {
	cwd := project(t, "mode: audit\n"+confinePolicy)
	_, m, _ := runHook(t, nil, claudePre(cwd, "./build.sh"), "claude", "--stateless")
	if got, _ := rewritten(t, "claude", m); got != "" {
		t.Errorf("audit mode rewrote the call: %s", got)
	}
}

// TestConfineWithStore: with the store (the usual hook), the allow is
// rewritten too and the audit record keeps the model's command.
func TestConfineWithStore(t *testing.T) {
	canConfine(t)
	cwd := project(t, confinePolicy)
	_, m, log := runHook(t, nil, claudePre(cwd, "./build.sh"), "claude")
	got, _ := rewritten(t, "claude", m)
	if !strings.Contains(got, " sandbox --policy ") || !strings.HasSuffix(got, " -c './build.sh'") {
		t.Fatalf("the allowed call was not rewritten: %v\n%s", m, log)
	}
	recs, err := storeOf(t, cwd).Audit(context.Background(), warden.AuditFilter{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Args["command"] != "./build.sh" {
		t.Fatalf("audit records %+v; want one with the model's command", recs)
	}
	sb := recs[0].Sandbox
	if sb == nil || !sb.Ran || !sb.Only || sb.Shell != "on" || sb.Network != "deny" || !strings.Contains(sb.Enforced, "Landlock ABI") {
		t.Errorf("the audit record's confinement is %+v; want ran, only confined, shell on, network deny, with what the kernel enforces", sb)
	}
	// A denied call's record says how it would have run, and that it did not.
	runHook(t, nil, strings.Replace(claudePre(cwd, "rm x"), `"t1"`, `"t2"`, 1), "claude")
	recs, _ = storeOf(t, cwd).Audit(context.Background(), warden.AuditFilter{Session: "s1"})
	if len(recs) != 2 || recs[1].Sandbox == nil || recs[1].Sandbox.Ran {
		t.Errorf("the denied call's record: %+v; want a confinement that did not run", recs[len(recs)-1])
	}
}

func hostEvent(event, tool, cwd string, input map[string]any) string {
	js, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": cwd, "hook_event_name": event,
		"tool_name": tool, "tool_input": input, "tool_use_id": "t1"})
	return string(js)
}

// TestConfineApprovedCall: a call that asks (a host without a prompt:
// warden's approval queue) and is approved by a human runs confined when
// it is sent again.
func TestConfineApprovedCall(t *testing.T) {
	canConfine(t)
	cwd := project(t, `version: 1
default: {safe: allow, destructive: ask}
sandbox: {shell: on}
`)
	ev := hostEvent("PreToolUse", "Bash", cwd, map[string]any{"command": "./deploy.sh"})
	_, m, log := runHook(t, nil, ev, "codex")
	if got, _ := rewritten(t, "codex", m); got != "" {
		t.Fatalf("an ask was rewritten: %v", m)
	}
	st := storeOf(t, cwd)
	pending, err := st.Approvals(context.Background(), warden.ApprovalFilter{Status: warden.ApprovalPending})
	if err != nil || len(pending) != 1 {
		t.Fatalf("approvals %v %v; want the one the call queued\n%v\n%s", pending, err, m, log)
	}
	if _, err := st.ResolveApproval(context.Background(), pending[0].ID, warden.Resolution{Status: warden.ApprovalApproved, Scope: warden.ScopeOnce, DecidedBy: "test"}, nil); err != nil {
		t.Fatal(err)
	}
	_, m, log = runHook(t, nil, strings.Replace(ev, `"t1"`, `"t2"`, 1), "codex")
	got, _ := rewritten(t, "codex", m)
	if !strings.Contains(got, " sandbox --policy ") || !strings.HasSuffix(got, " -c './deploy.sh'") {
		t.Fatalf("the approved call was not rewritten to run confined: %v\n%s", m, log)
	}
}
