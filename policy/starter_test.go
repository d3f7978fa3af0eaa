package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

// TestStarter: the starter policy for each language (and none) lints
// without findings, and every test case it carries holds; a language it
// knows adds its rule and a test of it; StarterLanguages reads the
// project's marker files.
func TestStarter(t *testing.T) {
	for _, langs := range [][]string{nil, {"go"}, {"node"}, {"python"}, {"rust"}, {"go", "node", "python", "rust"}, {"cobol"}} {
		file := filepath.Join(t.TempDir(), "warden.yaml")
		text := policy.Starter(langs)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		p, findings, err := policy.Lint(file)
		if err != nil || len(findings) > 0 {
			t.Fatalf("%v: lint: %v %v", langs, err, findings)
		}
		eng, err := engine.Compile(p, workspace.New())
		if err != nil {
			t.Fatalf("%v: compile: %v", langs, err)
		}
		for _, c := range p.Tests {
			d := eng.Decide(c.Call, nil).Decision
			if d.Decision != c.Expect || c.Code != "" && d.Code != c.Code || c.Rule != "" && d.Rule != c.Rule {
				t.Errorf("%v: %s: %s %s (%s), want %s %s (%s)", langs, c.Name, d.Decision, d.Code, d.Rule, c.Expect, c.Code, c.Rule)
			}
		}
		for _, l := range langs {
			if known := l != "cobol"; strings.Contains(text, "id: allow-"+l) != known || strings.Contains(text, "name: "+l+" tests run") != known {
				t.Errorf("%v: language %s in the policy: rule %v, test %v", langs, l, strings.Contains(text, "id: allow-"+l), strings.Contains(text, "name: "+l+" tests run"))
			}
		}
	}
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "pyproject.toml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := policy.StarterLanguages(dir); strings.Join(got, ",") != "go,python" {
		t.Errorf("StarterLanguages = %v, want go,python", got)
	}
	if got := policy.StarterLanguages(t.TempDir()); len(got) != 0 {
		t.Errorf("StarterLanguages of an empty folder = %v", got)
	}
}
