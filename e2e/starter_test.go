package e2e

import (
	"strings"
	"testing"
)

// TestStarterPolicyEveryday: `warden init claude` alone in a fresh Go and
// in a fresh Node project writes a starter policy under which Claude Code
// (-p) runs the everyday read, build and test commands, while a secret
// stays unread; `warden test` passes on it.
func TestStarterPolicyEveryday(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lang     string
		files    map[string]string
		everyday []string
	}{
		{"go", map[string]string{"go.mod": "module example.com/x\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {}\n",
			"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n"},
			[]string{"go build ./...", "go vet ./...", "go test ./...", "git status", "ls -la", "cat main.go"}},
		{"node", map[string]string{"package.json": `{"name": "x", "scripts": {"test": "node test.js"}}` + "\n",
			"test.js": "console.log('ok')\n"},
			[]string{"npm test", "node test.js", "git status", "ls -la", "cat package.json"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			bin := requireHost(t, claudeSpec)
			e := newEnv(t)
			e.useHookd()
			for f, c := range tc.files {
				e.write(f, c)
			}
			e.write(".env", "API_TOKEN=very-secret-value\n")
			if tc.lang == "go" {
				// The build cache this test was built with, as a user's
				// own (outside the sandbox's writable folders: the
				// confined go commands read it and write nothing there),
				// rather than a new one in the test's home, where go
				// compiled the standard library afresh (24 CPU-seconds here).
				e.vars = append(e.vars, "GOCACHE="+goEnv(t, "GOCACHE"))
			}
			if _, err := e.shellCmd("git init -q"); err != nil {
				t.Fatal(err)
			}
			if out, err := e.warden("init", "claude", "--bin", wardenHookBin); err != nil || !strings.Contains(out, "for "+tc.lang) {
				t.Fatalf("warden init: %v\n%s", err, out)
			}
			res := e.runCalls(headlessHosts[0], bin, append(tc.everyday, "cat .env")...)
			for i, c := range tc.everyday {
				if hasAny(res[i].Text, "BLOCKED", "APPROVAL REQUIRED", "DENIED") {
					t.Errorf("%s was not let through: %s", c, res[i].Text)
				}
			}
			last := res[len(res)-1].Text
			if strings.Contains(last, "very-secret-value") || !strings.Contains(last, "PROTECTED_PATH") {
				t.Errorf("cat .env: %s", last)
			}
			if out, err := e.warden("test"); err != nil || !strings.Contains(out, " 0 failed") {
				t.Errorf("warden test: %v\n%s", err, out)
			}
		})
	}
}
