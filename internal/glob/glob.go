// Package glob implements warden's two glob dialects: gitignore-style path
// globs (`**`, `*` does not cross `/`, dot files match, a pattern without a
// slash matches at any depth, a match on a folder covers what is inside it)
// and text globs (`*` matches any run of characters, `?` one character).
// Matching allocates nothing.
package glob

import (
	"fmt"
	"path"
	"strings"
)

// Path is a compiled gitignore-style path glob. The zero value matches
// nothing.
type Path struct {
	src  string
	segs []string // "**" is the any-depth segment
	lit  []bool   // segment has no wildcard
}

// CompilePath compiles a path glob. A leading "!" is not part of the
// dialect: callers strip it and treat the pattern as an exclusion.
func CompilePath(pattern string) (Path, error) {
	p := strings.ReplaceAll(pattern, "\\", "/")
	if p == "" || p == "/" {
		return Path{}, fmt.Errorf("empty path pattern")
	}
	p = strings.TrimSuffix(p, "/")
	anchored := strings.HasPrefix(p, "/")
	p = strings.TrimPrefix(p, "/")
	p = strings.TrimPrefix(p, "./")
	if !anchored && !strings.Contains(p, "/") {
		p = "**/" + p
	}
	g := Path{src: pattern}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." {
			continue
		}
		if s == ".." {
			return Path{}, fmt.Errorf("path pattern %q: \"..\" is not allowed in a pattern", pattern)
		}
		if s == "**" {
			if n := len(g.segs); n > 0 && g.segs[n-1] == "**" {
				continue
			}
			g.segs = append(g.segs, s)
			g.lit = append(g.lit, false)
			continue
		}
		if strings.Contains(s, "**") {
			return Path{}, fmt.Errorf("path pattern %q: \"**\" must be a whole path segment", pattern)
		}
		if _, err := path.Match(s, ""); err != nil {
			return Path{}, fmt.Errorf("path pattern %q: bad segment %q: %v", pattern, s, err)
		}
		g.segs = append(g.segs, s)
		g.lit = append(g.lit, !strings.ContainsAny(s, "*?[\\"))
	}
	if len(g.segs) == 0 {
		return Path{}, fmt.Errorf("empty path pattern")
	}
	return g, nil
}

// MustPath is CompilePath for patterns known to be valid; it panics
// otherwise (a programmer error).
func MustPath(pattern string) Path {
	g, err := CompilePath(pattern)
	if err != nil {
		panic(err)
	}
	return g
}

// String returns the source pattern.
func (g Path) String() string { return g.src }

// Match reports whether rel, a clean slash-separated path relative to the
// workspace root (no leading "/", no "." or ".." segments), or one of its
// parent folders, matches the pattern.
func (g Path) Match(rel string) bool {
	if len(g.segs) == 0 {
		return false
	}
	return g.match(0, rel, false)
}

// MatchExact reports whether rel itself matches the pattern, as git
// matches an ignore pattern: a parent folder's match does not count, but
// a trailing "**" matches everything below.
func (g Path) MatchExact(rel string) bool {
	if len(g.segs) == 0 {
		return false
	}
	return g.match(0, rel, true)
}

// match matches segs[i:] against the path rest. A fully consumed pattern
// matches whatever rest remains (the folder covers its contents), unless
// exact.
func (g Path) match(i int, rest string, exact bool) bool {
	for ; i < len(g.segs); i++ {
		if g.segs[i] == "**" {
			if i == len(g.segs)-1 {
				return !exact || rest != ""
			}
			// Try the remaining pattern at every segment boundary.
			r := rest
			for {
				if g.match(i+1, r, exact) {
					return true
				}
				k := strings.IndexByte(r, '/')
				if k < 0 {
					return false
				}
				r = r[k+1:]
			}
		}
		if rest == "" {
			return false
		}
		seg, next := rest, ""
		if k := strings.IndexByte(rest, '/'); k >= 0 {
			seg, next = rest[:k], rest[k+1:]
		}
		if g.lit[i] {
			if seg != g.segs[i] {
				return false
			}
		} else if ok, _ := path.Match(g.segs[i], seg); !ok {
			return false
		}
		rest = next
	}
	return !exact || rest == ""
}

// Text matches s against a text glob: `*` matches any run of characters
// (including none), `?` exactly one byte, every other byte itself.
func Text(pattern, s string) bool {
	// Iterative wildcard matching with one backtrack point (linear time).
	px, sx := 0, 0
	star, mark := -1, 0
	for sx < len(s) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				star, mark = px, sx
				px++
				continue
			case '?':
				px++
				sx++
				continue
			default:
				if c == s[sx] {
					px++
					sx++
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		px = star + 1
		mark++
		sx = mark
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// HasMeta reports whether a text glob has wildcards.
func HasMeta(pattern string) bool { return strings.ContainsAny(pattern, "*?") }
