package engine

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/shell"
)

// writesIgnoreFile reports whether a line's writes may change what git
// leaves out when it runs: a .gitignore or git's exclude file, a copy or
// move (of a folder that may hold one), or a path computed at run time.
func writesIgnoreFile(ws []shell.Write) bool {
	return mayWrite(ws, ignoreNames, false) != ""
}

var ignoreNames = map[string]bool{".gitignore": true, "exclude": true, ".git": true, "info": true}

// mayWrite says how a line's writes may put in place a file named in
// names (by its base name, or with anyPart by any component of its path,
// without regard to case): a computed write, a copy or move, a folder
// changed whole, or a write of such a name. "" when they cannot.
func mayWrite(ws []shell.Write, names map[string]bool, anyPart bool) string {
	for _, w := range ws {
		switch {
		case shell.IsDyn(w.Path):
			return "writes files computed at run time"
		case len(w.Sources) > 0:
			return "copies or moves files"
		case w.TreeWrite:
			return "changes a folder whole"
		}
		parts := []string{filepath.Base(w.Path)}
		if anyPart {
			parts = strings.Split(filepath.ToSlash(w.Path), "/")
		}
		for _, part := range parts {
			if names[strings.ToLower(part)] {
				return "writes " + w.Path
			}
		}
	}
	return ""
}

// gitIgnore tells which files of the workspace's repository git leaves out
// when it reads a folder of its work tree whole (git add DIR, git add -A,
// git grep --untracked): an untracked file that its ignore files name. A
// private file git leaves out is not read (`git add -A` with `.env` in
// .gitignore stages nothing secret).
//
// It answers "ignored" only when sure: it reads .git/info/exclude and the
// .gitignore files from the top of the work tree down (not the user's
// global excludes file, which only ignores more), matches patterns as
// git(1) does (the last pattern that names a path decides, a folder left
// out leaves out all it holds, a pattern ending in "/" names folders only),
// and a file the index names (tracked, which git adds whatever the ignore
// files say) is never ignored. A pattern warden's globs read otherwise than
// git (backslash escapes, "[!...]", "**" inside a name) is dropped when it
// ignores and makes every answer "not ignored" when it re-includes
// ("!..."), and so does an index format whose names cannot be searched
// (version 4, prefix-compressed).
type gitIgnore struct {
	ws    Workspace
	root  string                  // the top of the work tree
	rules map[string][]ignoreRule // by folder (relative, "" the top)
	index []byte                  // the index file, nil when there is none
	bad   bool                    // the ignore files cannot be read as git reads them
}

type ignoreRule struct {
	g       glob.Path
	neg     bool
	dirOnly bool
}

// newGitIgnore reads the repository at root, the workspace's own (its
// .git a folder); nil when there is none, or it cannot be read as git
// would.
func newGitIgnore(ws Workspace, root string) *gitIgnore {
	gitDir := filepath.Join(root, ".git")
	if fi, err := ws.Lstat(gitDir); err != nil || !fi.IsDir() {
		return nil
	}
	gi := &gitIgnore{ws: ws, root: root, rules: map[string][]ignoreRule{}}
	idx, err := readIndex(ws, filepath.Join(gitDir, "index"))
	if err != nil {
		return nil
	}
	gi.index = idx
	// .git/info/exclude comes first: the .gitignore files override it.
	gi.rules["\x00exclude"] = gi.parse(filepath.Join(gitDir, "info", "exclude"))
	if gi.bad {
		return nil
	}
	return gi
}

// parse reads one ignore file's patterns.
func (gi *gitIgnore) parse(file string) []ignoreRule {
	data, err := gi.ws.ReadFile(file)
	if err != nil {
		if !isNotExist(err) {
			gi.bad = true
		}
		return nil
	}
	var out []ignoreRule
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		r := ignoreRule{}
		if line[0] == '!' {
			r.neg, line = true, line[1:]
		}
		line = strings.TrimRight(line, " ")
		// glob reads a backslash as a separator and "[!a]" otherwise than
		// git; "**" inside a name does not compile.
		odd := strings.ContainsAny(line, "\\[")
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		g, err := glob.CompilePath(line)
		if odd || err != nil || line == "" {
			if r.neg {
				gi.bad = true
			}
			continue
		}
		r.g = g
		out = append(out, r)
	}
	return out
}

// folderRules returns the patterns of the .gitignore in the folder rel.
func (gi *gitIgnore) folderRules(rel string) []ignoreRule {
	if r, ok := gi.rules[rel]; ok {
		return r
	}
	r := gi.parse(filepath.Join(gi.root, filepath.FromSlash(rel), ".gitignore"))
	gi.rules[rel] = r
	return r
}

// ignored reports whether git leaves out the file or folder abs.
func (gi *gitIgnore) ignored(abs string, dir bool) bool {
	if gi == nil || gi.bad {
		return false
	}
	rel, err := filepath.Rel(gi.root, abs)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	rel = filepath.ToSlash(rel)
	parts := strings.Split(rel, "/")
	for k := 1; k <= len(parts); k++ {
		isDir := k < len(parts) || dir
		if gi.decide(parts[:k], isDir) {
			if gi.bad {
				return false
			}
			// Tracked files are added whatever the ignore files say:
			// a folder with a tracked file inside is looked through.
			path := strings.Join(parts[:k], "/")
			if gi.tracked(path, isDir) || k < len(parts) && gi.tracked(rel, dir) {
				return false
			}
			return true
		}
		if gi.bad {
			return false
		}
	}
	return false
}

// decide is git's answer for one path (as components) whose parent
// folders it does not leave out: the last pattern that names it, in
// .git/info/exclude, then the .gitignore files from the top down.
func (gi *gitIgnore) decide(parts []string, dir bool) bool {
	ignored := false
	try := func(rules []ignoreRule, rel string) {
		for _, r := range rules {
			if r.dirOnly && !dir {
				continue
			}
			if r.g.MatchExact(rel) {
				ignored = !r.neg
			}
		}
	}
	full := strings.Join(parts, "/")
	try(gi.rules["\x00exclude"], full)
	for i := 0; i < len(parts); i++ {
		folder := strings.Join(parts[:i], "/")
		try(gi.folderRules(folder), strings.Join(parts[i:], "/"))
	}
	return ignored
}

// tracked reports whether the index may name the path (a file), or a
// file inside it (a folder). The search is for the name's bytes: a longer
// name that ends in it counts too, which only makes warden look further.
func (gi *gitIgnore) tracked(rel string, dir bool) bool {
	if gi.index == nil {
		return false
	}
	if dir {
		return bytes.Contains(gi.index, []byte(rel+"/"))
	}
	return bytes.Contains(gi.index, []byte(rel+"\x00"))
}
