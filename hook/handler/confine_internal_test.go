package handler

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox"
)

// TestConfineWithoutMechanism: on a kernel that cannot confine (no
// Landlock, no user namespaces), what must run confined never runs
// unconfined; what need not runs with a warning that says so.
func TestConfineWithoutMechanism(t *testing.T) {
	saved := kernel
	kernel = func() sandbox.Kernel { return sandbox.Kernel{UserNSNote: "turned off for the test"} }
	defer func() { kernel = saved }()
	pol := &policy.Policy{File: "/p/warden.yaml"}
	ev := hook.Event{Kind: hook.PreTool, Call: warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "./build.sh"}}}
	cases := []struct {
		name    string
		d       warden.Decision
		prompts bool
		want    warden.Effect
		text    string
	}{
		{"only confined, no prompt", warden.Decision{Decision: warden.Allow, Code: warden.CodeDefault, Sandbox: &warden.Confinement{Shell: "on", Network: "deny", Only: true}}, false, warden.Deny, "may run only confined"},
		{"only confined, the host prompts", warden.Decision{Decision: warden.Allow, Code: warden.CodeDefault, Sandbox: &warden.Confinement{Shell: "on", Network: "deny", Only: true}}, true, warden.Ask, "cannot fully judge"},
		{"required", warden.Decision{Decision: warden.Allow, Code: warden.CodeAllowed, Rule: "r", Sandbox: &warden.Confinement{Shell: "required", Network: "deny"}}, true, warden.Deny, "sandbox.shell is required"},
		{"allowed by a rule", warden.Decision{Decision: warden.Allow, Code: warden.CodeAllowed, Rule: "r", Sandbox: &warden.Confinement{Shell: "on", Network: "deny"}}, false, warden.Allow, "runs unconfined"},
		{"approved by a human", warden.Decision{Decision: warden.Allow, Code: warden.CodeAllowed, Rule: "approval:a-1", Sandbox: &warden.Confinement{Shell: "on", Network: "deny", Only: true}}, false, warden.Allow, "runs unconfined"},
	}
	// A call decided by warden serve for a hook on another machine.
	d := warden.Decision{Decision: warden.Allow, Code: warden.CodeDefault, Sandbox: &warden.Confinement{Shell: "on", Network: "deny", Only: true}}
	if in := prepareConfined(ev, &d, pol, false, true); in != nil || d.Decision != warden.Deny || !strings.Contains(d.Reason, "another machine") {
		t.Errorf("remote: %v %s %q; want no rewrite and a deny that says why", in, d.Decision, d.Reason)
	}
	for _, c := range cases {
		d := c.d
		in := prepareConfined(ev, &d, pol, c.prompts, false)
		if in != nil {
			t.Errorf("%s: rewritten on a kernel that cannot confine: %v", c.name, in)
		}
		text := d.Reason + strings.Join(d.Warnings, " ")
		if d.Decision != c.want || !strings.Contains(text, c.text) || d.Sandbox.Ran || d.Sandbox.Note == "" {
			t.Errorf("%s: %s %q %+v; want %s saying %q, a note and not ran", c.name, d.Decision, text, d.Sandbox, c.want, c.text)
		}
	}
}
