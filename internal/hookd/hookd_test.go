package hookd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGeminiInteractiveDetection(t *testing.T) {
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
		if got := IsGeminiProcess(tc.args); got != tc.want {
			t.Errorf("IsGeminiProcess(%q) = %v", tc.args, got)
		}
	}
	// The test binary runs under go test, not Gemini CLI: headless.
	if GeminiInteractive() {
		t.Error("GeminiInteractive() is true outside Gemini CLI")
	}
}

func TestDeadline(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, DefaultTimeout},
		{[]string{"--wait", "2m"}, DefaultTimeout + 2*time.Minute},
		{[]string{"--timeout=3s", "-wait=1s"}, 4 * time.Second},
		{[]string{"--timeout", "bogus"}, DefaultTimeout},
		{[]string{"--role", "timeout"}, DefaultTimeout},
	} {
		if got := Deadline(tc.args); got != tc.want {
			t.Errorf("Deadline(%q) = %s, want %s", tc.args, got, tc.want)
		}
	}
}

// TestServerEnvDropsSecrets: hookd lives long; it gets the environment it
// needs and not the host's API keys.
func TestServerEnvDropsSecrets(t *testing.T) {
	got := strings.Join(serverEnv([]string{"HOME=/h", "PATH=/bin", "ANTHROPIC_API_KEY=sk-ant-x", "WARDEN_HOOKD_SOCKET=/s",
		"XDG_CONFIG_HOME=/c", "GITHUB_TOKEN=ghp_x", "LC_ALL=C"}), " ")
	if got != "HOME=/h PATH=/bin WARDEN_HOOKD_SOCKET=/s XDG_CONFIG_HOME=/c LC_ALL=C" {
		t.Errorf("serverEnv = %s", got)
	}
}

func TestCheckDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sock")
	if err := PrepareDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(dir); err != nil {
		t.Errorf("a fresh 0700 folder: %v", err)
	}
	os.Chmod(dir, 0o755)
	if err := CheckDir(dir); err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Errorf("a 0755 folder: %v", err)
	}
	link := dir + "-link"
	os.Chmod(dir, 0o700)
	os.Symlink(dir, link)
	if err := CheckDir(link); err == nil {
		t.Error("a symlink to the folder was accepted")
	}
}

func TestSocketPath(t *testing.T) {
	t.Setenv(SocketEnv, "")
	run := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", run)
	if got := SocketPath(); got != filepath.Join(run, "warden", "hookd.sock") {
		t.Errorf("with XDG_RUNTIME_DIR: %s", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	if got := SocketPath(); !strings.HasPrefix(filepath.Base(filepath.Dir(got)), "warden-") {
		t.Errorf("without XDG_RUNTIME_DIR: %s", got)
	}
	t.Setenv(SocketEnv, "/x/y.sock")
	if got := SocketPath(); got != "/x/y.sock" {
		t.Errorf("with %s: %s", SocketEnv, got)
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
		if got := ClaudeInteractive(); got != tc.want {
			t.Errorf("CLAUDE_CODE_ENTRYPOINT=%q CLAUDE_CODE_SESSION_ATTENDED=%q: %v, want %v", tc.entry, tc.attended, got, tc.want)
		}
	}
}
