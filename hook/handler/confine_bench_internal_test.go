package handler

import (
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox"
)

// BenchmarkPrepareConfined: what the rewrite adds to a hook's answer for
// an allowed shell call, once the kernel was probed (hookd; a `warden
// hook` process probes once per call: BenchmarkProbe).
func BenchmarkPrepareConfined(b *testing.B) {
	pol := &policy.Policy{File: "/work/p/warden.yaml"}
	ev := hook.Event{Kind: hook.PreTool, Call: warden.ToolCall{Tool: "Bash", Host: "claude",
		Args: map[string]any{"command": "go test ./... && git status --short", "description": "run the tests"}}}
	kernel()
	b.ReportAllocs()
	for b.Loop() {
		d := warden.Decision{Decision: warden.Allow, Sandbox: &warden.Confinement{Shell: "on", Network: "deny"}}
		if prepareConfined(ev, &d, pol, false, false) == nil {
			b.Fatal("no rewrite")
		}
	}
}

// BenchmarkProbe: the kernel probe a `warden hook` process makes once.
func BenchmarkProbe(b *testing.B) {
	for b.Loop() {
		sandbox.Probe()
	}
}
