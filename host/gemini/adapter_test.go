package gemini

import (
	"os"
	"testing"

	"github.com/warden-run/warden"
)

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
		if got := outcome(false, c.text); got != c.want {
			t.Errorf("outcome(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestInteractiveDetection(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if got := ParentPID(os.Getpid()); got != os.Getppid() {
		t.Errorf("ParentPID = %d, want %d", got, os.Getppid())
	}
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"node", "/x/node_modules/@google/gemini-cli/bundle/gemini.js", "-p", "hi"}, true},
		{[]string{"/usr/local/bin/gemini"}, true},
		{[]string{"node", "/x/opencode.js"}, false},
		{[]string{"bash", "-c", "warden hook gemini"}, false},
	} {
		if got := IsProcess(tc.args); got != tc.want {
			t.Errorf("IsProcess(%q) = %v", tc.args, got)
		}
	}
	// The test binary runs under go test, not Gemini CLI: headless.
	if Interactive() {
		t.Error("Interactive() is true outside Gemini CLI")
	}
}
