package hookd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
