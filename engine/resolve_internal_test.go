package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

func testEngine(t testing.TB) *Engine {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte("version: 1\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "src", "deep"), 0o755)
	os.Symlink("..", filepath.Join(dir, "src", "up"))
	os.Symlink("/etc", filepath.Join(dir, "src", "etc"))
	os.Symlink("loop", filepath.Join(dir, "src", "loop"))
	p, err := policy.Load(filepath.Join(dir, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := Compile(p, workspace.Live())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestResolve(t *testing.T) {
	e := testEngine(t)
	home, _ := os.UserHomeDir()
	for _, c := range []struct {
		raw, rel string
		inside   bool
	}{
		{"a.txt", "a.txt", true},
		{"./src/../a.txt", "a.txt", true},
		{`src\..\.env`, `src\..\.env`, true}, // a backslash is part of the name
		{"src/up/.env", ".env", true},
		{"src/up/src/up/x", "x", true},
		{"src/deep/../../b", "b", true},
		{"../outside", "", false},
		{"src/etc/passwd", "", false},
		{"~/x", "", strings.HasPrefix(home, e.root)},
		{"src/loop/x", "src/loop/x", true},
		{".", ".", true},
	} {
		abs, rel, inside := e.resolve(c.raw, e.rootRaw)
		if inside != c.inside || c.inside && rel != c.rel {
			t.Errorf("resolve(%q) = %q %q %v, want %q %v", c.raw, abs, rel, inside, c.rel, c.inside)
		}
	}
}

// FuzzResolve checks the path normaliser's invariants: the result is
// absolute and clean, a path inside the workspace has a relative form
// without "..", and the relative form joins back to the absolute one.
func FuzzResolve(f *testing.F) {
	e := testEngine(f)
	for _, s := range []string{"a", "../x", `src\..\..\y`, "~/z", "src/up/up/..", "/etc/../etc/passwd", "src/loop/a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if strings.ContainsRune(raw, 0) {
			return
		}
		abs, rel, inside := e.resolve(raw, e.rootRaw)
		if !filepath.IsAbs(abs) || filepath.Clean(abs) != abs {
			t.Fatalf("%q: not absolute and clean: %q", raw, abs)
		}
		if inside {
			if rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, "/../") || filepath.IsAbs(rel) {
				t.Fatalf("%q: inside but rel %q", raw, rel)
			}
			if rel != "." && filepath.Join(e.root, rel) != abs && filepath.Join(e.rootRaw, rel) != abs {
				t.Fatalf("%q: rel %q does not join back to %q", raw, rel, abs)
			}
		}
		if a2, r2, i2 := e.resolve(raw, e.rootRaw); a2 != abs || r2 != rel || i2 != inside {
			t.Fatalf("%q: not deterministic", raw)
		}
	})
}
