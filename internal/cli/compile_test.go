package cli_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

// TestCompileCommand runs warden compile on the plain-language coding example (examples/compile/coding)
// against recorded answers, then check, explain and test on the result.
func TestCompileCommand(t *testing.T) {
	// Not parallel: it sets an environment variable.
	dir := t.TempDir()
	for _, name := range []string{"warden.yaml", "RULES.md"} {
		data, err := os.ReadFile(filepath.Join("../../examples/compile/coding", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	pol, rules := filepath.Join(dir, "warden.yaml"), filepath.Join(dir, "RULES.md")
	files, _ := filepath.Glob("../../examples/compile/coding/answers/*.json")
	sort.Strings(files)
	var turns []scripted.Turn
	for _, f := range files {
		data, _ := os.ReadFile(f)
		turns = append(turns, scripted.Turn{Text: string(data)})
	}
	srv, err := scripted.Start(append(turns, turns...)...) // two runs
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const key = "sk-cli-secret-42"
	t.Setenv("WARDEN_TEST_KEY", key)
	before, _ := os.ReadFile(pol)

	args := []string{"compile", rules, "--policy", pol, "--base-url", srv.URL + "/v1", "--model", "recorded", "--api-key-env", "WARDEN_TEST_KEY"}
	out, errOut, code := run(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"+  - id: no-force-push", "+    source: Never force-push.", "4 rules: 4 compiled, 0 kept, 0 failed; 4 model calls", "not written: run again with --write"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"[1/4] ", "model call 4:", "done: 4 of 4 rules compiled"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("progress lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(out+errOut, key) {
		t.Error("the API key was printed")
	}
	if now, _ := os.ReadFile(pol); string(now) != string(before) {
		t.Fatal("the policy was written without --write")
	}
	if _, _, code := run(t, "", "compile", "--check", "--policy", pol, rules); code != 1 {
		t.Errorf("check before writing: exit %d, want 1", code)
	}

	out, errOut, code = run(t, "", append(args, "--write")...)
	if code != 0 || !strings.Contains(out, "wrote "+pol) {
		t.Fatalf("--write: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, errOut, code := run(t, "", "compile", "--check", "--policy", pol); code != 0 || !strings.Contains(out, "match their sources") {
		t.Errorf("check: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = run(t, `{"tool":"Bash","args":{"command":"git push -f origin main"}}`, "explain", "--policy", pol)
	if code != 2 || !strings.Contains(out, "by rule no-force-push") || !strings.Contains(out, "source: Never force-push.") {
		t.Errorf("explain: exit %d\n%s", code, out)
	}
	out, _, code = run(t, "", "test", "--policy", pol)
	if code != 0 || !strings.Contains(out, "passed, 0 failed") {
		t.Errorf("test: exit %d\n%s", code, out)
	}
	// A second compile keeps everything and asks nothing.
	out, _, code = run(t, "", args...)
	if code != 0 || !strings.Contains(out, "no change to") || !strings.Contains(out, "0 model calls") {
		t.Errorf("second compile: exit %d\n%s", code, out)
	}
	// RULES.md changes: the check fails and says so.
	os.WriteFile(rules, []byte("- Never force-push.\n"), 0o644)
	if _, errOut, code := run(t, "", "compile", "--check", "--policy", pol); code != 1 || !strings.Contains(errOut, "changed since the last compile") {
		t.Errorf("check after a change: exit %d\n%s", code, errOut)
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"compile", "--policy", coding}, "name the plain-language rules file"},
		{[]string{"compile", "a.md", "b.md", "--policy", coding}, "one rules file, not 2"},
		{[]string{"compile", "nope.md", "--policy", coding, "--base-url", "http://127.0.0.1:1/v1"}, "set both --base-url and --model"},
		{[]string{"compile", "nope.md", "--policy", coding, "--base-url", "http://127.0.0.1:1/v1", "--model", "m"}, "nope.md"},
		{[]string{"compile", "--check", "--policy", coding}, "has no compiled: section"},
	}
	for _, c := range cases {
		_, errOut, code := run(t, "", c.args...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}
