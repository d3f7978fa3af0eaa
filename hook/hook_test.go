package hook

import (
	"testing"
	"time"
)

func TestCallDeadline(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, Deadline},
		{[]string{"--wait", "2m"}, Deadline + 2*time.Minute},
		{[]string{"--timeout=3s", "-wait=1s"}, 4 * time.Second},
		{[]string{"--timeout", "bogus"}, Deadline},
		{[]string{"--role", "timeout"}, Deadline},
	} {
		if got := CallDeadline(tc.args); got != tc.want {
			t.Errorf("CallDeadline(%q) = %s, want %s", tc.args, got, tc.want)
		}
	}
}

func TestEventName(t *testing.T) {
	if got := EventName([]byte(`{"hook_event_name":"PreToolUse"}`)); got != "PreToolUse" {
		t.Errorf("claude: %q", got)
	}
	if got := EventName([]byte(`{"event":"tool.execute.before"}`)); got != "tool.execute.before" {
		t.Errorf("opencode: %q", got)
	}
	if got := EventName([]byte(`not json`)); got != "" {
		t.Errorf("garbage: %q", got)
	}
}

// TestTimeoutEnv: WARDEN_HOOK_TIMEOUT sets the default deadline of a hook
// call; a flag still wins, and a value that is no positive duration leaves
// the built-in deadline.
func TestTimeoutEnv(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		want time.Duration
	}{
		{"", nil, Deadline},
		{"45s", nil, 45 * time.Second},
		{"45s", []string{"--role", "builder"}, 45 * time.Second},
		{"45s", []string{"--timeout", "3s"}, 3 * time.Second},
		{"45s", []string{"--timeout", "3s", "--wait", "2s"}, 5 * time.Second},
		{"soon", nil, Deadline},
		{"-5s", nil, Deadline},
		{"0", nil, Deadline},
	} {
		t.Setenv(TimeoutEnv, tc.env)
		if got := CallDeadline(tc.args); got != tc.want {
			t.Errorf("%s=%q, args %q: deadline %s, want %s", TimeoutEnv, tc.env, tc.args, got, tc.want)
		}
	}
}
