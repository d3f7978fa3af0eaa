package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// npm reads its own options anywhere before "--", after a script's name
// too: `npm run build --script-shell=/tmp/x` ran /tmp/x under an allowed
// "npm run *" (the table handed every word after the script's name to the
// script). The words npm does hand to a script (npm test .env, npm run
// build -- .env) are read by a program warden does not know, as any
// other's. The real npm shows each finding first.
func TestRedteam7NpmScriptOptions(t *testing.T) {
	t.Parallel()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"t","version":"1.0.0","scripts":{"build":"echo built","test":"echo tested"}}`), 0o644)
	marker := filepath.Join(dir, "pwned")
	shellScript := filepath.Join(dir, "x.sh")
	os.WriteFile(shellScript, []byte("#!/bin/sh\necho ran > "+marker+"\n"), 0o755)
	runs := func(args ...string) (bool, string) {
		os.Remove(marker)
		cmd := exec.Command(npm, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_cache="+filepath.Join(dir, ".npm"))
		out, _ := cmd.CombinedOutput()
		_, err := os.Stat(marker)
		return err == nil, string(out)
	}
	if ran, out := runs("run", "build", "--script-shell="+shellScript); !ran {
		t.Fatalf("npm run build --script-shell did not run the shell given, so the case proves nothing:\n%s", out)
	}
	if ran, out := runs("run", "build", "--", "--script-shell="+shellScript); ran || !strings.Contains(out, "built --script-shell") {
		t.Fatalf("npm run build -- --script-shell: want the word handed to the script:\n%s", out)
	}
	if _, out := runs("test", ".env"); !strings.Contains(out, "tested .env") {
		t.Fatalf("npm test .env: want .env handed to the script:\n%s", out)
	}
	checkSoundPolicy(t, `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
private: ["**/.env"]
rules:
  - id: npm
    effect: allow
    tool: shell
    command: ["npm run *", "npm test *", "npm start *"]
`, []soundCase{
		// Findings.
		{"npm run --script-shell after the script", sh("npm run build --script-shell=/tmp/x"), "notAllow"},
		{"npm run --node-options after the script", sh("npm run build --node-options=--require=/tmp/x.js"), "notAllow"},
		{"npm run --userconfig after the script", sh("npm run-script build --userconfig=/tmp/rc"), "notAllow"},
		{"npm run an unknown configuration after the script", sh("npm run build --frobnicate=1"), "notAllow"},
		{"npm test hands .env to the script", sh("npm test .env"), "deny"},
		{"npm test -- hands .env to the script", sh("npm test -- .env"), "deny"},
		{"npm start -- hands .env to the script", sh("npm start -- src/.env"), "deny"},
		// Handled before.
		{"handled: npm run build .env", sh("npm run build .env"), "deny"},
		// Allowed.
		{"npm run build", sh("npm run build"), "allow"},
		{"npm run build --silent", sh("npm run build --silent"), "allow"},
		{"npm run build -- options for the script", sh("npm run build -- --watch --script-shell=x"), "allow"},
		{"npm test -- a name", sh("npm test -- -t name"), "allow"},
		{"npm test", sh("npm test"), "allow"},
	})
}

// pytest writes its cache into the root folder, which without an ini file
// above is the folder it runs in: cd .git/hooks && pytest wrote
// .git/hooks/.pytest_cache.
func TestRedteam7PytestCache(t *testing.T) {
	t.Parallel()
	checkSoundPolicy(t, `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
protected: [".git/**"]
rules:
  - id: tests
    effect: allow
    tool: shell
    command: ["pytest *", "python -m pytest *"]
`, []soundCase{
		{"pytest in .git/hooks", sh("cd .git/hooks && pytest"), "deny"},
		{"python -m pytest in .git/hooks", sh("cd .git/hooks && python -m pytest -q"), "deny"},
		{"pytest", sh("pytest -q"), "allow"},
		{"pytest in a folder", sh("cd src && pytest"), "allow"},
	})
}
