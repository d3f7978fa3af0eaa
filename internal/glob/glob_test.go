package glob_test

import (
	"testing"

	"github.com/warden-run/warden/internal/glob"
)

func TestPath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pat, path string
		want      bool
	}{
		{"**/.env", ".env", true},
		{"**/.env", "a/b/.env", true},
		{"**/.env", "a/.envrc", false},
		{".env", "sub/.env", true}, // no slash: any depth
		{".git/**", ".git/config", true},
		{".git/**", "x/.git/config", false},
		{".git", ".git/objects/ab", true}, // folder covers contents
		{"src/**", "src/a/b.go", true},
		{"src/**", "srcx/a.go", false},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/a/b.go", false},
		{"src/**/*.pem", "src/k.pem", true},
		{"src/**/*.pem", "src/a/b/k.pem", true},
		{"*.pem", "deep/in/k.pem", true},
		{"/top.txt", "top.txt", true},
		{"/top.txt", "a/top.txt", false},
		{"src/", "src/x", true},
		{"a/?.txt", "a/b.txt", true},
		{"a/[bc].txt", "a/c.txt", true},
		{"a/[bc].txt", "a/d.txt", false},
		{"src\\**", "src/x", true},
		{"**", "anything/at/all", true},
		{"docs/**/*.md", "docs/x.md", true},
	}
	for _, c := range cases {
		g, err := glob.CompilePath(c.pat)
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		if got := g.Match(c.path); got != c.want {
			t.Errorf("Path(%q).Match(%q) = %v, want %v", c.pat, c.path, got, c.want)
		}
	}
}

func TestPathErrors(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", "/", "../x", "a**b", "a/[x"} {
		if _, err := glob.CompilePath(p); err == nil {
			t.Errorf("CompilePath(%q): want error", p)
		}
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true},
		{"rm", "rm", true},
		{"rm", "rmx", false},
		{"test:*", "test:unit", true},
		{"mcp__github__*", "mcp__github__create_issue", true},
		{"mcp__github__*", "mcp__gitlab__x", false},
		{"Spam*", "Spam", true},
		{"Spam*", "Inbox", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"?", "x", true},
		{"?", "", false},
	}
	for _, c := range cases {
		if got := glob.Text(c.pat, c.s); got != c.want {
			t.Errorf("Text(%q, %q) = %v, want %v", c.pat, c.s, got, c.want)
		}
	}
}

func FuzzPath(f *testing.F) {
	f.Add("src/**/*.go", "src/a/b.go")
	f.Add("**/.env", ".env")
	f.Fuzz(func(t *testing.T, pat, p string) {
		g, err := glob.CompilePath(pat)
		if err != nil {
			return
		}
		g.Match(p) // must not panic or hang
		if !g.Match(p) && g.Match(p) {
			t.Fatal("not deterministic")
		}
	})
}

// MatchExact is Match without the folder covering what is inside it: git's
// reading of an ignore pattern.
func TestMatchExact(t *testing.T) {
	for _, c := range []struct {
		pat, rel    string
		match, want bool
	}{
		{".env", ".env", true, true},
		{".env", "src/.env", true, true},
		{"build", "build/x", true, false},
		{"/build", "build", true, true},
		{"src/*.go", "src/a.go", true, true},
		{"src/*.go", "src/a.go/x", true, false},
		{"build/**", "build", true, false},
		{"build/**", "build/a/b", true, true},
		{"**", "a/b", true, true},
		{"a/**/b", "a/x/y/b", true, true},
		{"a/**/b", "a/x/y/b/c", true, false},
	} {
		g := glob.MustPath(c.pat)
		if got := g.Match(c.rel); got != c.match {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pat, c.rel, got, c.match)
		}
		if got := g.MatchExact(c.rel); got != c.want {
			t.Errorf("MatchExact(%q, %q) = %v, want %v", c.pat, c.rel, got, c.want)
		}
	}
}
