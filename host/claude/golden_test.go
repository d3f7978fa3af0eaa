package claude_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"github.com/warden-run/warden/internal/golden"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/claude"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// A transcript is a text file of sections "-- name --". The inputs are
// "stdin" (what Claude Code sends) and "decision" (a warden.Decision, for
// PreToolUse) or "context" (governance text); the outputs, checked against
// the file and rewritten by -update, are "call" (the decoded tool call) and
// "stdout" (what the hook answers).
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			secs, order := golden.Read(t, file)
			in, err := claude.ParseInput([]byte(secs["stdin"]))
			if err != nil {
				t.Fatalf("stdin: %v", err)
			}
			got := map[string]string{}
			if in.ToolName != "" {
				js, _ := json.MarshalIndent(in.ToolCall(claude.Host), "", "  ")
				got["call"] = string(js)
			}
			var out claude.Output
			switch {
			case secs["decision"] != "":
				var d warden.Decision
				if err := json.Unmarshal([]byte(secs["decision"]), &d); err != nil {
					t.Fatalf("decision: %v", err)
				}
				out = claude.Decide(d, claude.Options{})
			case secs["failure"] != "":
				out = claude.Failure(in.HookEventName, warden.FailClosed(warden.Errorf(warden.CodePolicyError, "%s", strings.TrimSpace(secs["failure"]))))
			default:
				out = claude.Context(in.HookEventName, secs["context"])
			}
			var b bytes.Buffer
			json.Indent(&b, out.Marshal(), "", "  ")
			got["stdout"] = b.String()
			golden.Check(t, file, secs, order, got, *update)
		})
	}
}

func TestParseInputErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "empty"},
		{`[1]`, "not the expected JSON object"},
		{`{"session_id":"s"}`, `"hook_event_name" is missing`},
		{`{"hook_event_name":"PreToolUse","tool_input":{}}`, `PreToolUse without field "tool_name"`},
	} {
		_, err := claude.ParseInput([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseInput(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

// TestDecideNeverAllowsWhatIsNotAllowed checks every effect, including a
// corrupted one, against the permission decision it renders.
func TestDecideNeverAllowsWhatIsNotAllowed(t *testing.T) {
	for _, tc := range []struct {
		effect warden.Effect
		opt    claude.Options
		want   string
	}{
		{warden.Allow, claude.Options{}, "allow"},
		{warden.Allow, claude.Options{NoAllow: true}, ""},
		{warden.Ask, claude.Options{}, "ask"},
		{warden.Ask, claude.Options{NoAsk: true}, "deny"},
		{warden.Deny, claude.Options{NoAllow: true}, "deny"},
		{warden.Effect("bogus"), claude.Options{}, "deny"},
	} {
		d := warden.Decision{Decision: tc.effect, Code: warden.CodeRuleDeny, Reason: "r", Suggestion: "s"}
		out := claude.Decide(d, tc.opt)
		got := ""
		if out.HookSpecificOutput != nil {
			got = out.HookSpecificOutput.PermissionDecision
		}
		if got != tc.want {
			t.Errorf("%s %+v: permissionDecision %q, want %q", tc.effect, tc.opt, got, tc.want)
		}
	}
}

func TestLongReasonIsCut(t *testing.T) {
	d := warden.Decision{Decision: warden.Deny, Code: warden.CodeRuleDeny, Reason: strings.Repeat("é", 3000), Suggestion: "s"}
	r := claude.Decide(d, claude.Options{}).HookSpecificOutput.PermissionDecisionReason
	if len(r) > 2000 || !strings.HasSuffix(r, "[truncated]") || !json.Valid(claude.Decide(d, claude.Options{}).Marshal()) {
		t.Errorf("reason of %d bytes not cut cleanly: ...%s", len(r), r[len(r)-20:])
	}
}
