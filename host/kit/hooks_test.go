package kit

import (
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string]string{
		"/opt/w/warden-hook claude":               "/opt/w/warden-hook|claude",
		"'/opt/my w/warden' hook claude --role x": "/opt/my w/warden|hook|claude|--role|x",
		`'/a/it'\''s/warden' hook codex`:          "/a/it's/warden|hook|codex",
	} {
		got, err := SplitCommand(in)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("SplitCommand(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := SplitCommand("'open"); err == nil {
		t.Error("unterminated quote accepted")
	}
}

func TestIsWardenHook(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"warden hook claude", true},
		{"/usr/local/bin/warden hook claude --wait 1m", true},
		{"warden-hook claude", true},
		{"'/opt/my w/warden-hook' claude", true},
		{"'/opt/my w/warden' hook claude", true},
		{"warden hook codex", false},
		{"warden-hook codex", false},
		{"./warden-notify.sh claude", false},
		{"echo warden hook claude", false},
		{"warden check", false},
	} {
		if got := IsWardenHook(tc.cmd, "claude"); got != tc.want {
			t.Errorf("IsWardenHook(%q) = %v", tc.cmd, got)
		}
	}
}
