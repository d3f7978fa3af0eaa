package handler_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/hook/handler"
	"github.com/warden-run/warden/host"
)

// headless answers a Claude Code hook input as `warden hook claude` does
// under `claude -p`, where the host cannot prompt its user.
func headless(t *testing.T, stdin string) (int, map[string]any, string) {
	t.Helper()
	h, _ := host.Lookup("claude")
	rt := handler.Local()
	rt.Interactive = func(hook.Host) bool { return false }
	r := handler.Run(context.Background(), rt, h, []byte(stdin), hook.Flags{Timeout: hook.DefaultDeadline()})
	var m map[string]any
	if err := json.Unmarshal(r.Stdout, &m); err != nil {
		t.Fatalf("no JSON answer (exit %d): %v\n%s\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	return r.Code, m, r.Stderr
}

// TestQueuedApprovalToldOnStderr: a call that queues an approval (a host
// run headless cannot prompt) prints one line on the hook's stderr, which
// the hosts show their user: the approval, the call and the command that
// answers it. The same call again finds the same approval and prints
// nothing more.
func TestQueuedApprovalToldOnStderr(t *testing.T) {
	dir := project(t, `version: 1
default: deny
rules:
  - id: ask-touch
    effect: ask
    tool: shell
    command: ["touch *"]
  - id: files
    effect: allow
    path: ["**"]
`)
	_, m, stderr := headless(t, claudePre(dir, "touch notes.txt"))
	if d, _ := permission(m); d != "deny" {
		t.Fatalf("touch, headless: %q, want a deny that names the queued approval", d)
	}
	line := regexp.MustCompile(`warden: approval (a-[0-9a-f]+) waits for a human: Bash: touch notes\.txt \(rule ask-touch\), asked by claude\. Answer: warden approvals approve (a-[0-9a-f]+)`)
	got := line.FindStringSubmatch(stderr)
	if got == nil || got[1] != got[2] {
		t.Fatalf("stderr does not tell the human:\n%s", stderr)
	}
	_, _, again := headless(t, claudePre(dir, "touch notes.txt"))
	if line.MatchString(again) {
		t.Errorf("the same call again told the human again:\n%s", again)
	}
}
