package host_test

import (
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/host/claude"
	"github.com/warden-run/warden/host/codex"
	"github.com/warden-run/warden/host/gemini"
	"github.com/warden-run/warden/host/opencode"
)

// TestOutcomes: each adapter reports a call's outcome only where its host
// tells, and names the host's id for the call where it gives one.
func TestOutcomes(t *testing.T) {
	for _, c := range []struct {
		name    string
		host    hook.Host
		in      string
		outcome string
		toolUse string
	}{
		{"claude success", claude.Adapter{}, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_use_id":"tu-1","tool_response":{"stdout":"ok"}}`, warden.OutcomeOK, "tu-1"},
		{"claude failure", claude.Adapter{}, `{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"go test"},"tool_use_id":"tu-2","error":"Exit code 1"}`, warden.OutcomeFail, "tu-2"},
		{"claude pre names the call", claude.Adapter{}, `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_use_id":"tu-3"}`, "", "tu-3"},
		{"codex exit code field", codex.Adapter{}, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_use_id":"c-1","tool_response":{"exit_code":2,"output":"FAIL"}}`, warden.OutcomeFail, "c-1"},
		{"codex exit code text", codex.Adapter{}, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_response":"Exit code: 0\nWall time: 1s\nok"}`, warden.OutcomeOK, ""},
		{"codex says nothing", codex.Adapter{}, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_response":"ok"}`, "", ""},
		{"gemini error", gemini.Adapter{}, `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{"path":"x"},"tool_response":{"llmContent":"","error":{"message":"no such file"}}}`, warden.OutcomeFail, ""},
		{"gemini shell exit", gemini.Adapter{}, `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"go test"},"tool_response":{"llmContent":"Command: go test\nOutput: FAIL\nExit Code: 1"}}`, warden.OutcomeFail, ""},
		{"gemini success", gemini.Adapter{}, `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"go test"},"tool_response":{"llmContent":"Command: go test\nOutput: ok"}}`, warden.OutcomeOK, ""},
		{"opencode does not tell", opencode.Adapter{}, `{"event":"tool.execute.after","session_id":"s","tool":"bash","call_id":"oc-1","args":{"command":"go test"},"output":"FAIL"}`, "", "oc-1"},
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

// TestCodexOutcomeNotFooledByOutput: Codex writes its exit line before the
// output; an output line that says otherwise leaves the outcome unknown.
func TestCodexOutcomeNotFooledByOutput(t *testing.T) {
	for resp, want := range map[string]string{
		`"Exit code: 1\nWall time: 0.1 seconds\nOutput:\nExit code: 0\n"`: "",
		`"Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n"`:           warden.OutcomeOK,
	} {
		ev, err := codex.Adapter{}.Decode([]byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_response":` + resp + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Outcome != want {
			t.Errorf("codex outcome of %s = %q, want %q", resp, ev.Outcome, want)
		}
	}
}
