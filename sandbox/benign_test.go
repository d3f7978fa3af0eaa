//go:build linux

package sandbox_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestBenign runs everyday work confined, as root and as nobody, and
// checks that it did its work: builds, tests, temp files, new files at
// the root, a commit, the allowed port, and stdin, stdout and the exit
// status passed through.
func TestBenign(t *testing.T) {
	needKernel(t)
	t.Parallel()
	users := map[string]int{"user": os.Geteuid()}
	if os.Geteuid() == 0 {
		users = map[string]int{"root": 0}
		if _, err := exec.LookPath("setpriv"); err == nil {
			users["nobody"] = nobody
		} else {
			t.Log("setpriv is not installed: the benign set runs as root only")
		}
	}
	forEachUser(t, users, func(t *testing.T, uid int) {
		// The Go build cache: root's own, made writable by the policy
		// (sandbox.writable, as a user would share it); for another user,
		// one under /tmp that stays between runs (the first run compiles
		// the standard library).
		cache := filepath.Join(os.TempDir(), "warden-sandbox-test-gocache-"+strconv.Itoa(uid))
		var writable []string
		if uid == 0 {
			if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
				cache = strings.TrimSpace(string(out))
				writable = append(writable, cache)
			}
		}
		os.MkdirAll(cache, 0o755)
		os.Chown(cache, uid, uid)
		f := newFixture(t, uid, writable...)
		f.env = append(f.env, "GOCACHE_DIR="+cache)
		benign(t, f)
	})
}

func benign(t *testing.T, f *fixture) {
	files := map[string]string{
		"gomod/go.mod":       "module example.com/tiny\n\ngo 1.21\n",
		"gomod/main.go":      "package main\n\nimport \"fmt\"\n\nfunc Add(a, b int) int { return a + b }\n\nfunc main() { fmt.Println(\"sum\", Add(2, 3)) }\n",
		"gomod/main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"bad sum\")\n\t}\n}\n",
		"py/test_calc.py":    "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(2 + 3, 5)\n\n\nif __name__ == '__main__':\n    unittest.main()\n",
		"js/package.json":    `{"name": "tiny", "version": "1.0.0", "scripts": {"test": "node test.js"}}` + "\n",
		"js/test.js":         "const assert = require('assert');\nassert.strictEqual(2 + 3, 5);\nrequire('fs').writeFileSync('test-ran.txt', 'ok');\nconsole.log('js tests passed');\n",
	}
	for name, content := range files {
		write(t, filepath.Join(f.ws, name), content, 0o644)
		if f.uid != 0 {
			for p := filepath.Join(f.ws, name); p != f.ws; p = filepath.Dir(p) {
				os.Lchown(p, f.uid, f.uid)
			}
		}
	}
	pyTest := "python3 -m unittest -q test_calc"
	if exec.Command("python3", "-c", "import pytest").Run() == nil {
		pyTest = "python3 -m pytest -q"
	}
	cases := []struct {
		name, script string
		check        func(t *testing.T, out string)
	}{
		{"go build and test", `cd gomod && export GOCACHE="$GOCACHE_DIR" GOPATH="$T/gopath" GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off && go build -o app . && ./app && go test -count=1 ./...`,
			func(t *testing.T, out string) {
				if !strings.Contains(out, "sum 5") || !strings.Contains(out, "ok") {
					t.Errorf("go build/test output:\n%s", out)
				}
				if _, err := os.Stat(filepath.Join(f.ws, "gomod", "app")); err != nil {
					t.Errorf("no binary built: %v", err)
				}
			}},
		{"python tests", "cd py && " + pyTest, func(t *testing.T, out string) {}},
		{"npm test", `cd js && npm test`, func(t *testing.T, out string) {
			if !strings.Contains(out, "js tests passed") {
				t.Errorf("npm test output:\n%s", out)
			}
			if b, err := os.ReadFile(filepath.Join(f.ws, "js", "test-ran.txt")); err != nil || string(b) != "ok" {
				t.Errorf("the test's file: %q, %v", b, err)
			}
		}},
		{"temp files", `d=$(mktemp -d) && echo tmp-ok > "$d/f" && cat "$d/f" && echo tmp-ok > /tmp/warden-benign-$$ && cat /tmp/warden-benign-$$ && rm /tmp/warden-benign-$$ && rm -r "$d"`,
			func(t *testing.T, out string) {
				if strings.Count(out, "tmp-ok") != 2 {
					t.Errorf("temp output:\n%s", out)
				}
			}},
		{"new files and folders at the root", `mkdir -p newdir/deep && echo one > newdir/deep/f && echo two > newfile.txt && mv newfile.txt renamed.txt && ln -s renamed.txt link && rm -r newdir/deep && echo three > src/main.txt`,
			func(t *testing.T, out string) {
				if b, err := os.ReadFile(filepath.Join(f.ws, "renamed.txt")); err != nil || string(b) != "two\n" {
					t.Errorf("renamed.txt: %q, %v", b, err)
				}
				if _, err := os.Stat(filepath.Join(f.ws, "newdir")); err != nil {
					t.Error(err)
				}
				if b, _ := os.ReadFile(filepath.Join(f.ws, "src", "main.txt")); string(b) != "three\n" {
					t.Errorf("src/main.txt = %q", b)
				}
			}},
		{"git add and commit", `echo change >> src/main.txt && git add src/main.txt && git commit -qm benign-commit && git log --oneline -1 && git status --short`,
			func(t *testing.T, out string) {
				cmd := exec.Command("git", "-c", "safe.directory=*", "log", "--format=%s", "-1")
				cmd.Dir = f.ws
				b, err := cmd.Output()
				if err != nil || strings.TrimSpace(string(b)) != "benign-commit" {
					t.Errorf("last commit = %q, %v; output:\n%s", b, err, out)
				}
			}},
		{"allowed port", `exec 3<>/dev/tcp/127.0.0.1/$ALLOW_PORT && cat <&3`,
			func(t *testing.T, out string) {
				if !strings.Contains(out, "hello") {
					t.Errorf("allowed port output:\n%s", out)
				}
			}},
		{"read the workspace", `cat src/main.txt config/app.yaml warden.yaml >/dev/null && ls -a .git/hooks >/dev/null && echo read-ok`,
			func(t *testing.T, out string) {
				if !strings.Contains(out, "read-ok") {
					t.Errorf("output:\n%s", out)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			allowBefore := f.allow.count.Load()
			out, code := f.run(t, c.script)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			c.check(t, out)
			if c.name == "allowed port" && f.allow.count.Load() == allowBefore {
				t.Error("the allowed port got no connection")
			}
		})
	}
	t.Run("stdin, stdout and exit status", func(t *testing.T) {
		cmd := f.command(f.bin, "sandbox", "--cwd", f.ws, "--", "sh", "-c", "tr a-z A-Z; echo err >&2; exit 7")
		cmd.Stdin = strings.NewReader("piped input\n")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if cmd.ProcessState == nil {
			t.Fatal(err)
		}
		if code := cmd.ProcessState.ExitCode(); code != 7 || stdout.String() != "PIPED INPUT\n" || stderr.String() != "err\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
		}
	})
	t.Run("killed by a signal", func(t *testing.T) {
		out, code := f.run(t, `kill -TERM $$`)
		if code != 128+15 {
			t.Errorf("exit %d, want 143:\n%s", code, out)
		}
	})
	t.Run("signal forwarded", func(t *testing.T) {
		cmd := f.command(f.bin, "sandbox", "--cwd", f.ws, "--", "bash", "-c", `trap 'echo got-term; exit 3' TERM; echo ready; while :; do sleep 0.1; done`)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(stdout)
		if line, err := r.ReadString('\n'); err != nil || line != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("first line %q, %v", line, err)
		}
		// warden (the parent, outside the sandbox) gets the signal and
		// passes it on.
		cmd.Process.Signal(syscall.SIGTERM)
		rest, _ := io.ReadAll(r)
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 3 || string(rest) != "got-term\n" {
			t.Errorf("exit %d, output %q", code, rest)
		}
	})
	t.Run("program not found", func(t *testing.T) {
		cmd := f.command(f.bin, "sandbox", "--cwd", f.ws, "--", "no-such-program-xyz")
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 127 || !strings.Contains(string(out), "no-such-program-xyz: command not found") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
}
