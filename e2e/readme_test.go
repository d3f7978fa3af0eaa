package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestReadmeBlocks runs the README's blocks about sessions, approvals and
// governing a host exactly as written, from the folder the README's first
// block runs in (a copy of the repository's examples), with the built
// warden on PATH, and checks what they show.
func TestReadmeBlocks(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(self))
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	find := func(first string) string {
		for _, b := range blocks {
			if strings.HasPrefix(b[1], first) {
				return b[1]
			}
		}
		t.Fatalf("README has no block starting with %q", first)
		return ""
	}
	work := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join(root, "examples"), work).CombinedOutput(); err != nil {
		t.Fatalf("copy examples: %v %s", err, out)
	}
	home := filepath.Join(work, "home")
	mustMkdir(t, home)
	sock, err := os.MkdirTemp("", "whd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	env := []string{"PATH=" + filepath.Dir(wardenBin) + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home,
		"TMPDIR=" + work, "GOPATH=" + filepath.Join(home, "go"), "GOCACHE=" + filepath.Join(home, "cache"), "GOFLAGS=-modcacherw",
		"WARDEN_HOOKD_SOCKET=" + filepath.Join(sock, "hookd.sock"), "LANG=C.UTF-8"}
	run := func(block string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "-c", block)
		cmd.Dir, cmd.Env = work, env
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	t.Cleanup(func() { exec.Command(wardenBin, "hookd", "stop", "--socket", filepath.Join(sock, "hookd.sock")).Run() })

	out := run(find("cd examples/coding"))
	for _, want := range []string{"APPROVAL REQUIRED: RULE_ASK", "approved a-", "Rule: grant:g-", "ALLOWED  grant:g-",
		"rejected a-", "APPROVAL_REJECTED", "Their message: Open a pull request instead.", "by rule grant:g-",
		"WARDEN REMINDER", "revoked g-", "approvals: 0 dropped"} {
		if !strings.Contains(out, want) {
			t.Errorf("the sessions block does not show %q:\n%s", want, out)
		}
	}
	if hasAny(out, "no warden.yaml", "unknown", "Usage:", "flag provided but not defined") {
		t.Errorf("a command of the sessions block failed:\n%s", out)
	}

	out = run(find(`cd "$(mktemp -d)"`))
	if !strings.Contains(out, "wrote a starter policy") || !strings.Contains(out, "for go") || !strings.Contains(out, "every check passed") {
		t.Errorf("the host block:\n%s", out)
	}
}
