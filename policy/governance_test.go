package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/policy"
)

// writePolicy writes files and a policy into a new folder and lints it.
func writePolicy(t *testing.T, src string, files map[string]string) (string, *policy.Policy, []policy.Finding) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, findings, err := policy.Lint(file)
	if err != nil {
		t.Fatal(err)
	}
	return dir, p, findings
}

// TestLevelFor: a depth gets its own level, a depth between two levels
// the one above it, a depth past the last the last one, and a depth above
// every level listed (none at 0) the built-in text (nil).
func TestLevelFor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		levels string
		want   map[int]int // depth -> level depth; -1: nil
	}{
		{"    0: {sections: [rules, hierarchy, first]}\n    1: {sections: [rules]}\n    2: {sections: []}\n",
			map[int]int{0: 0, 1: 1, 2: 2, 3: 2, 9: 2}},
		{"    1: {state: [phase]}\n", map[int]int{0: -1, 1: 1, 2: 1}},
		{"    2: {state: []}\n    0: {state: [phase]}\n", map[int]int{0: 0, 1: 0, 2: 2, 5: 2}},
	}
	for _, c := range cases {
		_, p, findings := writePolicy(t, "version: 1\ngovernance:\n  levels:\n"+c.levels, nil)
		for _, f := range findings {
			t.Errorf("%s: %s", c.levels, f)
		}
		for depth, want := range c.want {
			got := p.LevelFor(depth)
			switch {
			case want < 0 && got != nil:
				t.Errorf("%s: depth %d got level %d, want the built-in text", c.levels, depth, got.Depth)
			case want >= 0 && (got == nil || got.Depth != want):
				t.Errorf("%s: depth %d got %v, want level %d", c.levels, depth, got, want)
			}
		}
	}
	var none *policy.Policy
	if none.LevelFor(0) != nil {
		t.Error("a nil policy has a level")
	}
}

// TestLevelDefaults: a level without sections gets every section; without
// state it reads phase, anchors, intent and session but not history;
// `state: []` reads nothing; no level reads what the built-in text shows.
func TestLevelDefaults(t *testing.T) {
	t.Parallel()
	_, p, findings := writePolicy(t, "version: 1\ngovernance:\n  levels:\n    0:\n    1: {sections: [first], state: []}\n    2: {state: history}\n", nil)
	for _, f := range findings {
		t.Error(f)
	}
	l0, l1, l2 := p.LevelFor(0), p.LevelFor(1), p.LevelFor(2)
	for _, s := range policy.LevelSections {
		if !l0.Has(s) || l1.Has(s) != (s == "first") {
			t.Errorf("section %s: level 0 %v, level 1 %v", s, l0.Has(s), l1.Has(s))
		}
	}
	for _, k := range policy.LevelState {
		var none *policy.Level
		if l0.Reads(k) != (k != "history") || none.Reads(k) != (k != "history") || l1.Reads(k) || l2.Reads(k) != (k == "history") {
			t.Errorf("state %s: level 0 %v, level 1 %v, level 2 %v, none %v", k, l0.Reads(k), l1.Reads(k), l2.Reads(k), none.Reads(k))
		}
	}
}

// TestLevelLint: every mistake in governance.levels is an error at its
// file, line and field, and the policy does not load.
func TestLevelLint(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		src   string
		line  int
		parts []string
	}{
		{"a level that is no depth", "    main: {state: [phase]}\n", 5, []string{"governance.levels.main", `unknown level "main"`, "delegation depth"}},
		{"a negative depth", "    -1: {state: [phase]}\n", 5, []string{"governance.levels.-1", "depth -1 is negative"}},
		{"a depth twice", "    1: {state: [phase]}\n    01: {state: []}\n", 6, []string{"depth 1 is listed twice (first at line 5)"}},
		{"an unknown key in a level", "    0:\n      reads: [phase]\n", 6, []string{"governance.levels.0.reads", `unknown key "reads"`, "sections, state, files"}},
		{"an unknown section", "    0: {sections: [rules, tools]}\n", 5, []string{"governance.levels.0.sections[1]", `unknown "tools"`, "rules, hierarchy, first"}},
		{"an unknown state key", "    1:\n      state: [phase, todos]\n", 6, []string{"governance.levels.1.state[1]", `unknown "todos"`, "phase, anchors, intent, history, session"}},
		{"a file that does not exist", "    0:\n      files: [docs/plan.md, docs/gone.md]\n", 6, []string{"governance.levels.0.files[1]", "docs/gone.md does not exist"}},
		{"a folder", "    0: {files: [docs]}\n", 5, []string{"governance.levels.0.files[0]", "docs is a folder"}},
		{"a private file", "    0: {files: [.env]}\n", 5, []string{"governance.levels.0.files[0]", ".env is private"}},
		{"a private file in other case", "    0: {files: [docs/.ENV]}\n", 5, []string{"governance.levels.0.files[0]", "docs/.ENV is private"}},
		{"a file outside the workspace", "    0: {files: [" + filepath.Join(outside, "secret.md") + "]}\n", 5, []string{"is outside the workspace"}},
		{"a link out of the workspace", "    0: {files: [docs/link.md]}\n", 5, []string{"docs/link.md is outside the workspace"}},
		{"levels not a mapping", "    - 0\n", 5, []string{"governance.levels", "must be a mapping from a delegation depth"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Lines 1 to 4 are version, private, governance and levels.
			src := "private: [\"**/.env\"]\ngovernance:\n  levels:\n" + c.src
			dir := t.TempDir()
			for name, text := range map[string]string{"docs/plan.md": "plan", ".env": "KEY=1", "docs/.ENV": "KEY=2"} {
				p := filepath.Join(dir, name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "docs/link.md")); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "warden.yaml")
			if err := os.WriteFile(file, []byte("version: 1\n"+src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, findings, err := policy.Lint(file)
			if err != nil {
				t.Fatal(err)
			}
			var hit *policy.Finding
			for i, f := range findings {
				if f.Severity == policy.SevError && strings.Contains(f.String(), c.parts[0]) {
					hit = &findings[i]
				}
			}
			if hit == nil {
				t.Fatalf("no error with %q: %v", c.parts[0], findings)
			}
			s := hit.String()
			if !strings.HasPrefix(s, file+":") || hit.Pos.Line != c.line {
				t.Errorf("error at %s, want %s line %d", hit.Pos, file, c.line)
			}
			for _, p := range c.parts {
				if !strings.Contains(s, p) {
					t.Errorf("error %q lacks %q", s, p)
				}
			}
			if _, err := policy.Load(file); err == nil {
				t.Error("the policy loads")
			}
		})
	}
}

// TestLevelFiles: a level's file is kept with its absolute path; a large
// one is a warning, not an error.
func TestLevelFiles(t *testing.T) {
	t.Parallel()
	dir, p, findings := writePolicy(t, "version: 1\ngovernance:\n  levels:\n    0: {files: [docs/plan.md, big.txt]}\n",
		map[string]string{"docs/plan.md": "the plan", "big.txt": strings.Repeat("x", policy.LevelFileMax+10)})
	var warned bool
	for _, f := range findings {
		if f.Severity == policy.SevError {
			t.Error(f)
		}
		warned = warned || strings.Contains(f.Message, "big.txt is")
	}
	if !warned {
		t.Errorf("no warning about big.txt: %v", findings)
	}
	l := p.LevelFor(0)
	if len(l.Files) != 2 || l.Files[0].Name != "docs/plan.md" || l.Files[0].Path != filepath.Join(dir, "docs/plan.md") {
		t.Errorf("files: %+v", l.Files)
	}
}
