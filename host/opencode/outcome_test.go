package opencode_test

import (
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/host/opencode"
)

// TestOutcome: the plugin's tool.execute.after gives a call's outcome for
// a subagent (task, from its text, as seed 000 classifies it) and a shell
// command (its exit code); every other tool's stays unknown.
func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"task failed", `{"event":"tool.execute.after","session_id":"s","tool":"task","output":"task_id: ses_1\n\n<task_result>\nThe migration FAILED: the table is locked.\n</task_result>"}`, warden.OutcomeFail},
		{"task error", `{"event":"tool.execute.after","session_id":"s","tool":"task","output":"Error: could not open config.yaml"}`, warden.OutcomeFail},
		{"task done", `{"event":"tool.execute.after","session_id":"s","tool":"task","output":"task_id: ses_1\n\n<task_result>\nAdded the endpoint and its test.\n</task_result>"}`, warden.OutcomeOK},
		{"task empty", `{"event":"tool.execute.after","session_id":"s","tool":"task","output":"  "}`, ""},
		{"bash exit 0", `{"event":"tool.execute.after","session_id":"s","tool":"bash","output":"ok","exit":0}`, warden.OutcomeOK},
		{"bash exit 2", `{"event":"tool.execute.after","session_id":"s","tool":"bash","output":"no such file","exit":2}`, warden.OutcomeFail},
		{"bash without exit", `{"event":"tool.execute.after","session_id":"s","tool":"bash","output":"error everywhere"}`, ""},
		{"write", `{"event":"tool.execute.after","session_id":"s","tool":"write","output":"Wrote file successfully."}`, ""},
		{"edit that mentions an error", `{"event":"tool.execute.after","session_id":"s","tool":"edit","output":"fixed the error handling"}`, ""},
	} {
		ev, err := opencode.Adapter{}.Decode([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ev.Kind != hook.PostTool || ev.Outcome != c.want {
			t.Errorf("%s: kind %v outcome %q, want %q", c.name, ev.Kind, ev.Outcome, c.want)
		}
	}
}
