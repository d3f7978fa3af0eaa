package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/policy"
)

func runInitCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"init"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// fakeBins puts executables of these names in a folder of their own and
// makes it the PATH; it returns the folder.
func fakeBins(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := exectest.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	return dir
}

// noHookClient hides any installed warden-hook and puts a warden on PATH:
// the default hook command is then `/ABS/warden hook HOST`. It returns
// that warden's path.
func noHookClient(t *testing.T) string { return filepath.Join(fakeBins(t, "warden"), "warden") }

func readJSON(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

// hookCommands returns the hook commands configured for event.
func hookCommands(m map[string]any, event string) []string {
	hooks, _ := m["hooks"].(map[string]any)
	entries, _ := hooks[event].([]any)
	var out []string
	for _, e := range entries {
		hs, _ := e.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			out = append(out, h.(map[string]any)["command"].(string))
		}
	}
	return out
}

func TestInitClaudeMergesBacksUpAndIsIdempotent(t *testing.T) {
	w := noHookClient(t)
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	orig := `{"model": "opus", "permissions": {"allow": ["Bash(npm test)"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./mine.sh"}]}]}}`
	os.WriteFile(settings, []byte(orig), 0o644)

	code, out, errs := runInitCmd(t, "claude", "--dir", dir)
	if code != ExitOK {
		t.Fatalf("init: %d %s %s", code, out, errs)
	}
	m := readJSON(t, settings)
	if m["model"] != "opus" || m["permissions"] == nil {
		t.Errorf("user settings lost: %v", m)
	}
	if got := hookCommands(m, "PreToolUse"); len(got) != 2 || got[0] != "./mine.sh" || got[1] != w+" hook claude" {
		t.Errorf("PreToolUse hooks %v", got)
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "SubagentStart", "SubagentStop", "PreCompact", "Stop", "SessionEnd"} {
		if got := hookCommands(m, ev); len(got) != 1 || got[0] != w+" hook claude" {
			t.Errorf("%s hooks %v", ev, got)
		}
	}
	if bak, err := os.ReadFile(settings + ".warden-backup"); err != nil || string(bak) != orig {
		t.Errorf("backup: %v %q", err, bak)
	}
	// The user's keys keep their order.
	data, _ := os.ReadFile(settings)
	if i, j := bytes.Index(data, []byte(`"model"`)), bytes.Index(data, []byte(`"permissions"`)); i < 0 || i > j {
		t.Errorf("key order changed:\n%s", data)
	}
	// A starter policy was written, and it loads.
	if _, err := policy.Load(filepath.Join(dir, "warden.yaml")); err != nil {
		t.Errorf("starter policy does not load: %v", err)
	}

	// Second run: nothing changes, no new backup.
	code, out, _ = runInitCmd(t, "claude", "--dir", dir)
	if code != ExitOK || !strings.Contains(out, "nothing changed") {
		t.Errorf("second init: %d %s", code, out)
	}
	again, _ := os.ReadFile(settings)
	if !bytes.Equal(again, data) {
		t.Errorf("second init changed the file")
	}
	baks, _ := filepath.Glob(settings + ".warden-backup*")
	if len(baks) != 1 {
		t.Errorf("backups: %v", baks)
	}
}

func TestInitRefusesBrokenSettings(t *testing.T) {
	noHookClient(t)
	dir := t.TempDir()
	settings := filepath.Join(dir, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte(`{"hooks": [1,2]}`), 0o644)
	code, _, errs := runInitCmd(t, "gemini", "--dir", dir)
	if code != ExitError || !strings.Contains(errs, settings) || !strings.Contains(errs, "will not overwrite") {
		t.Errorf("broken hooks: %d %s", code, errs)
	}
	os.WriteFile(settings, []byte(`{"a": 1,,}`), 0o644)
	code, _, errs = runInitCmd(t, "gemini", "--dir", dir)
	if code != ExitError || !strings.Contains(errs, "not valid JSON") {
		t.Errorf("broken JSON: %d %s", code, errs)
	}
	if data, _ := os.ReadFile(settings); string(data) != `{"a": 1,,}` {
		t.Errorf("broken file was touched: %s", data)
	}
}

func TestInitOtherHosts(t *testing.T) {
	w := noHookClient(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte("version: 1\n"), 0o644)
	for _, host := range []string{"codex", "gemini", "opencode"} {
		if code, out, errs := runInitCmd(t, host, "--dir", dir, "--bin", w); code != ExitOK {
			t.Fatalf("init %s: %d %s %s", host, code, out, errs)
		}
	}
	if got := hookCommands(readJSON(t, filepath.Join(dir, ".codex", "hooks.json")), "PreToolUse"); len(got) != 1 || got[0] != w+" hook codex" {
		t.Errorf("codex PreToolUse %v", got)
	}
	gm := readJSON(t, filepath.Join(dir, ".gemini", "settings.json"))
	if got := hookCommands(gm, "BeforeTool"); len(got) != 1 || got[0] != w+" hook gemini" {
		t.Errorf("gemini BeforeTool %v", got)
	}
	plugin, err := os.ReadFile(filepath.Join(dir, ".opencode", "plugin", "warden.js"))
	if err != nil || !strings.Contains(string(plugin), `"`+w+`"`) {
		t.Errorf("opencode plugin: %v", err)
	}
	// The existing policy is kept.
	if data, _ := os.ReadFile(filepath.Join(dir, "warden.yaml")); string(data) != "version: 1\n" {
		t.Errorf("existing policy overwritten")
	}
	// A changed plugin is backed up, then replaced.
	pf := filepath.Join(dir, ".opencode", "plugin", "warden.js")
	os.WriteFile(pf, []byte("// mine"), 0o644)
	runInitCmd(t, "opencode", "--dir", dir)
	if bak, _ := os.ReadFile(pf + ".warden-backup"); string(bak) != "// mine" {
		t.Errorf("plugin backup %q", bak)
	}
	if code, _, errs := runInitCmd(t, "vim", "--dir", dir); code != ExitError || !strings.Contains(errs, "unknown host") {
		t.Errorf("unknown host: %d %s", code, errs)
	}
}

func TestInitCodexWaitReplacesTheHook(t *testing.T) {
	w := noHookClient(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte("version: 1\n"), 0o644)
	runInitCmd(t, "codex", "--dir", dir)
	if code, out, errs := runInitCmd(t, "codex", "--dir", dir, "--wait", "1m"); code != ExitOK {
		t.Fatalf("init --wait: %d %s %s", code, out, errs)
	}
	m := readJSON(t, filepath.Join(dir, ".codex", "hooks.json"))
	if got := hookCommands(m, "PreToolUse"); len(got) != 1 || got[0] != w+" hook codex --wait 1m0s" {
		t.Errorf("PreToolUse hooks after --wait: %v", got)
	}
}

// TestInitPrefersWardenHook: with warden-hook installed, init wires the
// fast client; --bin names either binary.
func TestInitPrefersWardenHook(t *testing.T) {
	bin := fakeBins(t, "warden-hook", "warden")
	dir := t.TempDir()
	if code, out, errs := runInitCmd(t, "claude", "--dir", dir); code != ExitOK || strings.Contains(out, "install warden-hook") {
		t.Fatalf("init: %d %s %s", code, out, errs)
	}
	if got := hookCommands(readJSON(t, filepath.Join(dir, ".claude", "settings.json")), "PreToolUse"); len(got) != 1 || got[0] != bin+"/warden-hook claude" {
		t.Errorf("PreToolUse hooks %q, want %s/warden-hook claude", got, bin)
	}
	runInitCmd(t, "gemini", "--dir", dir, "--bin", "warden")
	if got := hookCommands(readJSON(t, filepath.Join(dir, ".gemini", "settings.json")), "BeforeTool"); len(got) != 1 || got[0] != bin+"/warden hook gemini" {
		t.Errorf("BeforeTool hooks %q", got)
	}
	// Without warden-hook, init says how to get the fast path.
	fakeBins(t, "warden")
	if _, out, _ := runInitCmd(t, "codex", "--dir", t.TempDir()); !strings.Contains(out, "install warden-hook") {
		t.Errorf("init without warden-hook does not say how to get it:\n%s", out)
	}
}

// TestInitNeedsABinary: init wires an absolute path, and fails when it
// finds no binary to wire (a go run build is gone after the run) or the
// one named does not exist.
func TestInitNeedsABinary(t *testing.T) {
	fakeBins(t)
	dir := t.TempDir()
	code, _, errs := runInitCmd(t, "claude", "--dir", dir)
	if code != ExitError || !strings.Contains(errs, "found no warden-hook or warden binary") || !strings.Contains(errs, "--bin PATH") {
		t.Errorf("init without a binary: %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".claude", "settings.json")); err == nil {
		t.Error("init without a binary wrote the settings")
	}
	code, _, errs = runInitCmd(t, "claude", "--dir", dir, "--bin", "/nowhere/warden-hook")
	if code != ExitError || !strings.Contains(errs, "/nowhere/warden-hook") {
		t.Errorf("init --bin missing: %d %s", code, errs)
	}
}

// TestInitRemove: --remove takes warden's hooks out and keeps the user's
// settings and hooks; a file warden made alone goes away.
func TestInitRemove(t *testing.T) {
	noHookClient(t)
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	orig := `{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./mine.sh"}]}]}}`
	os.WriteFile(settings, []byte(orig), 0o644)
	runInitCmd(t, "claude", "--dir", dir)
	runInitCmd(t, "gemini", "--dir", dir)
	runInitCmd(t, "opencode", "--dir", dir)
	if code, out, errs := runInitCmd(t, "claude", "--dir", dir, "--remove"); code != ExitOK || !strings.Contains(out, "kept") {
		t.Fatalf("remove: %d %s %s", code, out, errs)
	}
	m := readJSON(t, settings)
	if m["model"] != "opus" {
		t.Errorf("settings lost: %v", m)
	}
	hooks, _ := m["hooks"].(map[string]any)
	if got := hookCommands(m, "PreToolUse"); len(got) != 1 || got[0] != "./mine.sh" || len(hooks) != 1 {
		t.Errorf("hooks after remove: %v", hooks)
	}
	for _, host := range []string{"gemini", "opencode"} {
		if code, out, errs := runInitCmd(t, host, "--dir", dir, "--remove"); code != ExitOK || !strings.Contains(out, "removed") {
			t.Errorf("remove %s: %d %s %s", host, code, out, errs)
		}
	}
	for _, f := range []string{".gemini/settings.json", ".opencode/plugin/warden.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s left behind", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "warden.yaml")); err != nil {
		t.Errorf("the policy was removed: %v", err)
	}
	if code, out, _ := runInitCmd(t, "codex", "--dir", dir, "--remove"); code != ExitOK || !strings.Contains(out, "nothing changed") {
		t.Errorf("remove where nothing is wired: %d %s", code, out)
	}
}

// TestInitRole: --role wires the top-level agent's role, and must be a
// role of the policy.
func TestInitRole(t *testing.T) {
	w := noHookClient(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte("version: 1\nroles:\n  builder:\n    tools: [read, shell]\n"), 0o644)
	if code, out, errs := runInitCmd(t, "claude", "--dir", dir, "--role", "builder"); code != ExitOK {
		t.Fatalf("init --role: %d %s %s", code, out, errs)
	}
	if got := hookCommands(readJSON(t, filepath.Join(dir, ".claude", "settings.json")), "SessionStart"); len(got) != 1 || got[0] != w+" hook claude --role builder" {
		t.Errorf("SessionStart hooks %q", got)
	}
	if code, _, errs := runInitCmd(t, "claude", "--dir", dir, "--role", "nobody"); code != ExitError || !strings.Contains(errs, "no such role") {
		t.Errorf("init --role nobody: %d %s", code, errs)
	}
}

// TestInitSwitchesClientInPlace: a project wired with `warden hook claude`
// and wired again with warden-hook runs warden once per event, not twice;
// warden's hook leaves an event warden no longer uses (Gemini CLI's
// PreCompress), while the user's own hooks stay.
func TestInitSwitchesClientInPlace(t *testing.T) {
	w := noHookClient(t)
	bins := fakeBins(t, "warden", "warden-hook")
	spaced := filepath.Join(t.TempDir(), "my w")
	os.MkdirAll(spaced, 0o755)
	exectest.WriteFile(filepath.Join(spaced, "warden"), []byte("#!/bin/sh\n"), 0o755)
	dir := t.TempDir()
	runInitCmd(t, "claude", "--dir", dir, "--bin", bins+"/warden")
	if code, out, errs := runInitCmd(t, "claude", "--dir", dir, "--bin", bins+"/warden-hook"); code != ExitOK {
		t.Fatalf("init: %d %s %s", code, out, errs)
	}
	m := readJSON(t, filepath.Join(dir, ".claude", "settings.json"))
	for _, ev := range []string{"PreToolUse", "SessionStart", "PostToolUse"} {
		if got := hookCommands(m, ev); len(got) != 1 || got[0] != bins+"/warden-hook claude" {
			t.Errorf("%s hooks %q, want warden-hook alone", ev, got)
		}
	}
	// And back, with a quoted path.
	runInitCmd(t, "claude", "--dir", dir, "--bin", spaced+"/warden")
	if got := hookCommands(readJSON(t, filepath.Join(dir, ".claude", "settings.json")), "PreToolUse"); len(got) != 1 || got[0] != "'"+spaced+"/warden' hook claude" {
		t.Errorf("PreToolUse hooks %q", got)
	}

	// An older Gemini CLI wiring with PreCompress, next to a user's hook.
	gem := filepath.Join(dir, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(gem), 0o755)
	os.WriteFile(gem, []byte(`{"hooks": {"PreCompress": [{"matcher": "*", "hooks": [
		{"type": "command", "command": "warden hook gemini"}, {"type": "command", "command": "./notify.sh"}]}]}}`), 0o644)
	if code, out, errs := runInitCmd(t, "gemini", "--dir", dir, "--bin", w); code != ExitOK || !strings.Contains(out, "PreCompress (removed") {
		t.Fatalf("init gemini: %d %s %s", code, out, errs)
	}
	gm := readJSON(t, gem)
	if got := hookCommands(gm, "PreCompress"); len(got) != 1 || got[0] != "./notify.sh" {
		t.Errorf("PreCompress hooks %q, want the user's alone", got)
	}
	if got := hookCommands(gm, "BeforeTool"); len(got) != 1 || got[0] != w+" hook gemini" {
		t.Errorf("BeforeTool hooks %q", got)
	}
}

// TestStarterPolicy: the starter policy for each language (and none)
// loads, lints without findings and passes its own tests; init picks the
// languages from the project's files.
func TestStarterPolicy(t *testing.T) {
	t.Parallel()
	for _, langs := range [][]string{nil, {"go"}, {"node"}, {"python"}, {"rust"}, {"go", "node", "python", "rust"}} {
		dir := t.TempDir()
		file := filepath.Join(dir, "warden.yaml")
		os.WriteFile(file, []byte(StarterPolicy(langs)), 0o644)
		var out, errb bytes.Buffer
		if code := Run(context.Background(), []string{"test", "--policy", file}, strings.NewReader(""), &out, &errb); code != ExitOK {
			t.Errorf("%v: warden test: %d\n%s%s", langs, code, out.String(), errb.String())
		}
		out.Reset()
		errb.Reset()
		if code := Run(context.Background(), []string{"lint", "--policy", file}, strings.NewReader(""), &out, &errb); code != ExitOK || !strings.Contains(out.String()+errb.String(), "0 errors, 0 warnings") {
			t.Errorf("%v: warden lint: %d\n%s%s", langs, code, out.String(), errb.String())
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte("{}\n"), 0o644)
	if got := detectLanguages(dir); strings.Join(got, ",") != "go,node" {
		t.Errorf("detectLanguages = %v", got)
	}
}

// TestInitEverydayCommands: a fresh init in a Go and in a Node project
// writes a policy that lets the everyday read, build and test commands
// through, keeps secrets and pushes in check, and passes `warden test`.
func TestInitEverydayCommands(t *testing.T) {
	noHookClient(t)
	for lang, tc := range map[string]struct {
		marker, content string
		allowed         []string
	}{
		"go": {"go.mod", "module example.com/x\n", []string{"go build ./...", "go test ./...", "go vet ./...",
			"gofmt -l .", "go mod tidy", "go run ./cmd/x"}},
		"node": {"package.json", `{"scripts": {"test": "node test.js"}}` + "\n", []string{"npm test", "npm run build",
			"npm ci", "npx tsc --noEmit", "node index.js"}},
	} {
		t.Run(lang, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, tc.marker), []byte(tc.content), 0o644)
			if code, out, errs := runInitCmd(t, "claude", "--dir", dir); code != ExitOK || !strings.Contains(out, "for "+lang) {
				t.Fatalf("init: %d %s %s", code, out, errs)
			}
			policyFile := filepath.Join(dir, "warden.yaml")
			check := func(call string) int {
				var out, errb bytes.Buffer
				return Run(context.Background(), []string{"check", "--policy", policyFile}, strings.NewReader(call), &out, &errb)
			}
			everyday := append(tc.allowed, "git status", "git diff HEAD", "ls -la", "cat README.md", "grep -rn TODO .",
				"git add -A && git commit -m wip")
			for _, c := range everyday {
				js, _ := json.Marshal(map[string]any{"tool": "Bash", "args": map[string]any{"command": c}})
				if code := check(string(js)); code != ExitOK {
					t.Errorf("%s: exit %d, want allow", c, code)
				}
			}
			for c, want := range map[string]int{"git push origin main": ExitAsk, "npm publish": ExitAsk, "cat .env": ExitDeny, "rm -rf src": ExitDeny} {
				js, _ := json.Marshal(map[string]any{"tool": "Bash", "args": map[string]any{"command": c}})
				if code := check(string(js)); code != want {
					t.Errorf("%s: exit %d, want %d", c, code, want)
				}
			}
			if code := check(`{"tool":"Read","args":{"file_path":".env"}}`); code != ExitDeny {
				t.Errorf("Read .env: exit %d, want deny", code)
			}
			var out, errb bytes.Buffer
			if code := Run(context.Background(), []string{"test", "--policy", policyFile}, strings.NewReader(""), &out, &errb); code != ExitOK {
				t.Errorf("warden test: %d\n%s%s", code, out.String(), errb.String())
			}
		})
	}
}

// TestInitGeminiUntrusted: in a folder Gemini CLI does not trust (it
// would ignore the project's settings, warden's hooks included), `warden
// init gemini` writes the hooks but exits non-zero and says how to trust
// the folder; once trusted, init succeeds.
func TestInitGeminiUntrusted(t *testing.T) {
	noHookClient(t)
	home := t.TempDir()
	t.Setenv("GEMINI_CLI_TRUST_WORKSPACE", "")
	t.Setenv("GEMINI_CLI_HOME", home)
	dir := t.TempDir()
	code, _, errs := runInitCmd(t, "gemini", "--dir", dir)
	if code != ExitError || !strings.Contains(errs, "will not run them yet") || !strings.Contains(errs, "TRUST_FOLDER") {
		t.Fatalf("untrusted: exit %d, %s", code, errs)
	}
	if got := hookCommands(readJSON(t, filepath.Join(dir, ".gemini", "settings.json")), "BeforeTool"); len(got) != 1 {
		t.Errorf("the hooks were not written: %v", got)
	}
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(`{"`+dir+`": "TRUST_FOLDER"}`), 0o644)
	if code, out, errs := runInitCmd(t, "gemini", "--dir", dir); code != ExitOK {
		t.Errorf("trusted: exit %d, %s %s", code, out, errs)
	}
}
