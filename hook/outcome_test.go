package hook

import (
	"testing"

	"github.com/warden-run/warden"
)

// TestOutcomes: each adapter reports a call's outcome only where its host
// tells, and names the host's id for the call where it gives one.
func TestOutcomes(t *testing.T) {
	for _, c := range []struct {
		name    string
		host    Host
		in      string
		outcome string
		toolUse string
	}{
		{"claude success", Claude, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_use_id":"tu-1","tool_response":{"stdout":"ok"}}`, warden.OutcomeOK, "tu-1"},
		{"claude failure", Claude, `{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"go test"},"tool_use_id":"tu-2","error":"Exit code 1"}`, warden.OutcomeFail, "tu-2"},
		{"claude pre names the call", Claude, `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_use_id":"tu-3"}`, "", "tu-3"},
		{"codex exit code field", Codex, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_use_id":"c-1","tool_response":{"exit_code":2,"output":"FAIL"}}`, warden.OutcomeFail, "c-1"},
		{"codex exit code text", Codex, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_response":"Exit code: 0\nWall time: 1s\nok"}`, warden.OutcomeOK, ""},
		{"codex says nothing", Codex, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_response":"ok"}`, "", ""},
		{"gemini error", Gemini, `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{"path":"x"},"tool_response":{"llmContent":"","error":{"message":"no such file"}}}`, warden.OutcomeFail, ""},
		{"gemini shell exit", Gemini, `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"go test"},"tool_response":{"llmContent":"Command: go test\nOutput: FAIL\nExit Code: 1"}}`, warden.OutcomeFail, ""},
		{"gemini success", Gemini, `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"go test"},"tool_response":{"llmContent":"Command: go test\nOutput: ok"}}`, warden.OutcomeOK, ""},
		{"opencode does not tell", OpenCode, `{"event":"tool.execute.after","session_id":"s","tool":"bash","call_id":"oc-1","args":{"command":"go test"},"output":"FAIL"}`, "", "oc-1"},
	} {
		ev, err := c.host.Decode([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ev.Outcome != c.outcome || ev.ToolUse != c.toolUse {
			t.Errorf("%s: outcome %q tool_use %q, want %q %q", c.name, ev.Outcome, ev.ToolUse, c.outcome, c.toolUse)
		}
	}
}

// TestOutcomeNotFooledByOutput: a command's own output cannot make a
// failed call pass: exit lines that disagree leave the outcome unknown, and
// a signal is a failure.
func TestOutcomeNotFooledByOutput(t *testing.T) {
	for _, c := range []struct {
		text, want string
	}{
		{"Output: Exit Code: 0\nExit Code: 0\nok\nExit Code: 1", ""},
		{"Output: \nExit Code: 0\nExit Code: 2", ""},
		{"Output: \nExit Code: 3\nExit Code: 3", warden.OutcomeFail},
		{"Output: done\nSignal: 9", warden.OutcomeFail},
		{"Output: (empty)", warden.OutcomeOK},
		{"Command was cancelled by user before it could complete.", ""},
	} {
		if got := geminiOutcome(false, c.text); got != c.want {
			t.Errorf("geminiOutcome(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// TestCodexOutcomeNotFooledByOutput: Codex writes its exit line before the
// output; an output line that says otherwise leaves the outcome unknown.
func TestCodexOutcomeNotFooledByOutput(t *testing.T) {
	resp := []byte(`"Exit code: 1\nWall time: 0.1 seconds\nOutput:\nExit code: 0\n"`)
	if got := claudeOutcome("codex", false, resp); got != "" {
		t.Errorf("codex outcome with a disagreeing output line = %q, want unknown", got)
	}
	resp = []byte(`"Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n"`)
	if got := claudeOutcome("codex", false, resp); got != warden.OutcomeOK {
		t.Errorf("codex outcome of a success = %q", got)
	}
}
