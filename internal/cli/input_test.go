package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

const codingPolicy = "../../examples/coding/warden.yaml"

// runCLI runs warden with stdin and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// TestCheckInputErrors: bad input is BAD_INPUT, not a policy error; input
// over the limit is said as such, the same in check and hook; --text
// prints text on errors too.
func TestCheckInputErrors(t *testing.T) {
	t.Parallel()
	tooBig := `{"tool":"Bash","args":{"command":"` + strings.Repeat("x", 32<<20) + `"}}`
	for _, tc := range []struct {
		name, stdin, want string
	}{
		{"empty", "", "the input is empty"},
		{"not JSON", "{", "not a JSON object"},
		{"over the limit", tooBig, "over warden's limit of 32 MiB"},
	} {
		out, stderr, code := runCLI(t, tc.stdin, "check", "--policy", codingPolicy)
		var d struct{ Decision, Code, Reason, Suggestion string }
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Errorf("%s: no JSON on stdout: %q", tc.name, out)
			continue
		}
		if code != ExitError || d.Decision != "deny" || d.Code != "BAD_INPUT" || !strings.Contains(d.Reason, tc.want) ||
			strings.Contains(d.Suggestion, "Fix the warden policy") || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d %+v (stderr %q)", tc.name, code, d, stderr)
		}
		out, _, code = runCLI(t, tc.stdin, "check", "--policy", codingPolicy, "--text")
		if code != ExitError || !strings.HasPrefix(out, "## BLOCKED: BAD_INPUT") || !strings.Contains(out, tc.want) {
			t.Errorf("%s with --text: exit %d %q", tc.name, code, out)
		}
	}
	// hook says the same of input over the limit.
	code, m, _ := runHookCmd(t, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"`+strings.Repeat("x", 32<<20)+`"}}`, "claude")
	if d, r := permission(m); d != "deny" || code != ExitDeny || !strings.Contains(r, "over warden's limit of 32 MiB") || !strings.Contains(r, "BAD_INPUT") {
		t.Errorf("hook over the limit: exit %d %s %q", code, d, r)
	}
	// A broken policy with --text: text, not JSON.
	out, _, code := runCLI(t, `{"tool":"Bash","args":{"command":"ls"}}`, "check", "--policy", "/nonexistent/warden.yaml", "--text")
	if code != ExitError || !strings.HasPrefix(out, "## BLOCKED: POLICY_ERROR") {
		t.Errorf("broken policy with --text: exit %d %q", code, out)
	}
}
