package claude

import "testing"

func TestClaudeInteractive(t *testing.T) {
	for _, tc := range []struct {
		entry, attended string
		want            bool
	}{
		{"cli", "1", true},
		{"", "", true},
		{"sdk-cli", "0", false},
		{"sdk-ts", "", false},
		{"cli", "0", false},
	} {
		t.Setenv("CLAUDE_CODE_ENTRYPOINT", tc.entry)
		t.Setenv("CLAUDE_CODE_SESSION_ATTENDED", tc.attended)
		if got := (Adapter{}).Interactive(); got != tc.want {
			t.Errorf("CLAUDE_CODE_ENTRYPOINT=%q CLAUDE_CODE_SESSION_ATTENDED=%q: %v, want %v", tc.entry, tc.attended, got, tc.want)
		}
	}
}
