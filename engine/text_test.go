package engine_test

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/claude"
	"github.com/warden-run/warden/host/codex"
	"github.com/warden-run/warden/host/gemini"
	"github.com/warden-run/warden/host/opencode"
)

// TestRuleTextIsTerminalSafe: a rule's message and suggestion with emoji,
// box drawing and arrows reach the decision, and every host's rendering of
// it, as plain text (docs/policy.md, "What the model reads").
func TestRuleTextIsTerminalSafe(t *testing.T) {
	e, _ := newEngine(t, `version: 1
rules:
  - id: no-rm-rf
    effect: deny
    tool: shell
    command: "rm -rf *"
    message: "🚫 Recursive deletion ━━ blocked ⚠️"
    suggestion: "✅ Use git revert → or ask the user 🙂"
  - id: warn-curl
    effect: warn
    tool: shell
    command: "curl *"
    message: "📡 Network access ║ say so"
`)
	d := e.Decide(bash("rm -rf build"), nil).Decision
	if d.Decision != warden.Deny || d.Rule != "no-rm-rf" {
		t.Fatalf("decision %s %s, want deny by no-rm-rf", d.Decision, d.Rule)
	}
	if d.Reason != "Recursive deletion  blocked" || d.Suggestion != "Use git revert -> or ask the user" {
		t.Errorf("reason %q, suggestion %q: not the rule's text made plain", d.Reason, d.Suggestion)
	}
	w := e.Decide(bash("curl https://example.com"), nil).Decision
	if len(w.Warnings) != 1 || w.Warnings[0] != "Network access  say so" {
		t.Errorf("warnings %q, want the warn rule's message made plain", w.Warnings)
	}
	d.Warnings = w.Warnings
	me := d.ModelError()
	rendered := map[string]string{
		"decision text": d.Text(),
		"model error":   me.Reason + "\n" + me.Suggestion,
		"claude":        string(claude.Decide(d, claude.Options{}).Marshal()),
		"codex":         string(codex.Decide(d).Marshal()),
		"gemini":        string(gemini.Decide(d, gemini.Options{}).Marshal()),
		"opencode":      string(opencode.Decide(d).Marshal()),
	}
	for host, s := range rendered {
		if r, bad := warden.UnsafeRune(s); bad {
			t.Errorf("%s: %q is not terminal-safe (%U) in %s", host, r, r, s)
		}
		if !strings.Contains(s, "Recursive deletion") {
			t.Errorf("%s: the rule's message is missing: %s", host, s)
		}
	}
}
