package engine

import (
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/shell"
)

// maxWalk bounds how many files a folder check looks at.
const maxWalk = 5000

// Protected paths hold against their folders: removing, moving or copying
// over a folder reaches every path inside it. These checks find the
// protected (or private) path such a call reaches.

// inside returns a protected or private path inside the folder abs (not
// abs itself), "" when there is none, and tooLarge when the folder holds
// more files than the check looks at.
func (e *Engine) inside(abs string) (hit string, tooLarge bool) {
	fi, err := e.ws.Stat(abs)
	if err != nil || !fi.IsDir() {
		return "", false
	}
	ascii := e.protectedASCII && isASCII(abs)
	for _, pa := range e.protectedAbs {
		if !strings.EqualFold(pa, abs) && underFoldA(pa, abs, ascii) {
			return pa, false
		}
	}
	if !e.globsCouldMatchUnder(abs) {
		return "", false
	}
	n := 0
	walkDir(e.ws, abs, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == abs {
			return nil
		}
		n++
		if n > maxWalk {
			tooLarge = true
			return filepath.SkipAll
		}
		if e.guarded(path) {
			hit = path
			return filepath.SkipAll
		}
		return nil
	})
	return hit, tooLarge
}

// guarded reports whether an absolute, resolved path is protected or
// private.
func (e *Engine) guarded(abs string) bool {
	rel, in := e.relTo(abs)
	if e.ownAbs(abs) {
		return true
	}
	for _, gs := range [][]pathGlob{e.protected, e.private} {
		for _, g := range gs {
			if g.match(abs, rel, in) {
				return true
			}
		}
	}
	return false
}

// ownAbs reports whether an absolute path is one of warden's own files
// (the policy, the store folder, the intents file) or inside one.
func (e *Engine) ownAbs(abs string) bool {
	ascii := e.protectedASCII && isASCII(abs)
	for _, pa := range e.protectedAbs {
		if underFoldA(abs, pa, ascii) {
			return true
		}
	}
	return ownName(abs) || hostRunName(abs)
}

// ownName reports whether a path is, or is inside, a file or folder named
// as a policy (warden.yaml, warden.yml, warden.json) or a store folder
// (.warden), in any folder: the hooks find the policy nearest the folder
// a call is made from (policy.Find), so a policy an agent writes into
// src/ governs its calls once it works in src/, and one it removes from a
// package hands that package's calls to a wider policy.
func ownName(abs string) bool {
	for abs != "" {
		i := strings.LastIndexByte(abs, '/')
		name := abs[i+1:]
		if strings.EqualFold(name, policy.StoreDir) {
			return true
		}
		for _, n := range policy.FileNames {
			if strings.EqualFold(name, n) {
				return true
			}
		}
		if i < 0 {
			break
		}
		abs = abs[:i]
	}
	return false
}

// globsCouldMatchUnder reports whether any protected or private pattern
// could match a path inside the folder abs: one that matches at any depth,
// or whose fixed leading folders lead into abs or out of it.
func (e *Engine) globsCouldMatchUnder(abs string) bool {
	return e.couldMatchUnder(abs, e.protected) || e.couldMatchUnder(abs, e.private)
}

// couldMatchUnder reports whether one of globs could match at or below
// the folder abs, by the globs' text alone.
func (e *Engine) couldMatchUnder(abs string, globs []pathGlob) bool {
	for _, g := range globs {
		src := g.g.String()
		lit := literalPrefix(src)
		if lit == "" {
			return true
		}
		if !g.abs {
			lit = e.root + "/" + lit
		} else {
			lit = "/" + strings.TrimPrefix(lit, "/")
		}
		if under(lit, abs) || under(abs, lit) {
			return true
		}
	}
	return false
}

// literalPrefix returns the leading folders of a pattern before its first
// glob character; "" when the pattern matches at any depth.
func literalPrefix(p string) string {
	if !strings.Contains(strings.TrimSuffix(p, "/"), "/") {
		return "" // no slash: matches at any depth
	}
	i := strings.IndexAny(p, "*?[")
	if i < 0 {
		return strings.TrimSuffix(p, "/")
	}
	j := strings.LastIndexByte(p[:i], '/')
	if j <= 0 {
		return ""
	}
	return p[:j]
}

// folderCheck denies a delete or move of a folder that holds a protected or
// private path, naming that path; a folder too large to look through asks.
func (e *Engine) folderCheck(st *state, p *part) {
	if p.dynamic || p.abs == "" {
		return
	}
	hit, tooLarge := e.inside(p.abs)
	switch {
	case hit != "":
		st.own = st.own || e.ownAbs(hit)
		st.check("folder", item{effect: warden.Deny, code: warden.CodeProtectedPath, subject: e.show(hit) + " (inside " + p.display() + ")"})
	case tooLarge:
		st.check("folder", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: p.display(),
			extra: p.display() + " holds more files than warden looks through, so it cannot tell whether a protected path is among them"})
	}
}

// show returns a path as a person should see it: relative to the
// workspace root when inside it.
func (e *Engine) show(abs string) string {
	if rel, ok := e.relTo(abs); ok {
		return rel
	}
	return abs
}

// copyCheck checks where a copy or move puts its sources: into the
// destination folder under each source's name when the destination is a
// folder, and every file of a source folder below that.
func (e *Engine) copyCheck(st *state, w shell.Write) {
	if shell.IsDyn(w.Path) {
		return
	}
	base := st.cwd()
	dest, _, _ := e.resolve(w.Path, base)
	fi, err := e.ws.Stat(dest)
	destDir := err == nil && fi.IsDir()
	for _, s := range w.Sources {
		if shell.IsDyn(s) {
			continue
		}
		src, _, _ := e.resolve(s, base)
		target := dest
		if destDir && !strings.HasSuffix(s, "/.") && !(strings.HasSuffix(s, "/") && strings.HasPrefix(w.Op, "rsync")) {
			target = filepath.Join(dest, filepath.Base(src))
		}
		if target != dest {
			e.pathPart(st, target, true, "write", w.Op, nil)
		}
		if text, name, ok := e.linkText(s, base); ok {
			// The source is a link: cp -r, -a, -d and -P copy it as a
			// link (its text unchanged), and mv moves it, to the new
			// place, from where its text may lead elsewhere.
			at := dest
			if destDir {
				at = filepath.Join(dest, name)
			}
			e.linkLeads(st, at, text, s)
		}
		sfi, err := e.ws.Stat(src)
		if err != nil || !sfi.IsDir() {
			continue
		}
		n := 0
		walkDir(e.ws, src, func(path string, d fs.DirEntry, err error) error {
			if err != nil || path == src {
				return nil
			}
			n++
			if n > maxWalk {
				st.check("folder", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: s,
					extra: s + " holds more files than warden looks through, so it cannot tell where they all land"})
				return filepath.SkipAll
			}
			rel, _ := filepath.Rel(src, path)
			t := filepath.Join(target, rel)
			if e.guarded(t) || e.guarded(e.evalPath(t)) {
				st.own = st.own || e.ownAbs(t)
				st.check("folder", item{effect: warden.Deny, code: warden.CodeProtectedPath, subject: e.show(t) + " (copied from " + e.show(path) + ")"})
				return filepath.SkipAll
			}
			if d.Type()&fs.ModeSymlink != 0 {
				if text, err := e.ws.Readlink(path); err == nil && e.linkLeads(st, t, text, e.show(path)) {
					return filepath.SkipAll
				}
			}
			return nil
		})
	}
}

// linkText returns the text of the link a path names itself (its last
// component not followed) and that component, when it is a symbolic
// link; a path ending in "/" or "/." names what the link leads to.
func (e *Engine) linkText(raw, base string) (text, name string, ok bool) {
	if strings.HasSuffix(raw, "/") || strings.HasSuffix(raw, "/.") {
		return "", "", false
	}
	p := e.joinPath(raw, base)
	name = filepath.Base(p)
	if name == "." || name == ".." || name == "/" {
		return "", "", false
	}
	at := filepath.Join(e.evalPath(filepath.Dir(p)), name)
	fi, err := e.ws.Lstat(at)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", "", false
	}
	text, err = e.ws.Readlink(at)
	return text, name, err == nil
}

// linkLeads checks a link a copy or move makes at the path at (absolute),
// with the text of the link it copies: a relative text leads from at's
// folder, which may be another place than the original's (a copy of
// src/hooks, a link to ../.git/hooks, leads into .git wherever it lands
// one folder below the root). What is written through the new link is
// written where it leads, so a protected or private path there is denied,
// as ln -s to it is. It reports a hit.
func (e *Engine) linkLeads(st *state, at, text, from string) bool {
	lead := text
	if !filepath.IsAbs(text) {
		lead = filepath.Dir(at) + "/" + text
	}
	abs := e.evalPath(lead)
	if !e.guarded(abs) && !e.guarded(filepath.Clean(lead)) {
		return false
	}
	st.own = st.own || e.ownAbs(abs)
	st.check("folder", item{effect: warden.Deny, code: warden.CodeProtectedPath, subject: e.show(abs) + " (where the link " + e.show(at) + ", copied from " + from + ", leads)"})
	return true
}

// privateInside returns a private path inside the folder abs, "" when there
// is none, and tooLarge when the folder holds more files than the check
// looks at. With skipHidden, entries whose name starts with a dot are left
// out, as the program reading the folder leaves them out. With follow, a
// symbolic link inside is followed (grep -R, rg -L, diff -r, tar -h and
// cp -rL read through it): a link to a private file, or to a folder
// holding one, is a hit.
func (e *Engine) privateInside(abs string, skipHidden bool, filter func(string, bool) bool, match func(string) bool, follow bool, ign *gitIgnore) (hit string, tooLarge bool) {
	if len(e.private) == 0 {
		return "", false
	}
	n := 0
	depth := 8 // links are not followed
	if follow {
		depth = 0
	}
	return e.privateWalk(abs, "", skipHidden, filter, match, &n, depth, ign)
}

// privateWalk is privateInside for the folder abs, reached as the path
// prefix below the folder read (for match); n counts the entries looked at
// and depth the links followed.
func (e *Engine) privateWalk(abs, prefix string, skipHidden bool, filter func(string, bool) bool, match func(string) bool, n *int, depth int, ign *gitIgnore) (hit string, tooLarge bool) {
	fi, err := e.ws.Stat(abs)
	if err != nil || !fi.IsDir() {
		return "", false
	}
	could := e.globsCouldMatchUnder(abs)
	if !could && depth >= 8 {
		return "", false // no private path below, and no link followed
	}
	walkDir(e.ws, abs, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == abs {
			return nil
		}
		if skipHidden && strings.HasPrefix(d.Name(), ".") || filter != nil && !filter(d.Name(), d.IsDir()) ||
			ign != nil && d.IsDir() && ign.ignored(path, true) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel := prefix
		if r, err := filepath.Rel(abs, path); err == nil {
			rel = filepath.ToSlash(filepath.Join(prefix, r))
		}
		*n++
		if *n > maxWalk {
			tooLarge = true
			return filepath.SkipAll
		}
		if d.Type()&fs.ModeSymlink != 0 && depth < 8 {
			if target, err := evalSymlinks(e.ws, path); err == nil {
				trel, tin := e.relTo(target)
				if match == nil || match(rel) {
					for _, g := range e.private {
						if g.match(target, trel, tin) {
							hit = target
							return filepath.SkipAll
						}
					}
				}
				if h, large := e.privateWalk(target, rel, skipHidden, filter, match, n, depth+1, ign); h != "" || large {
					hit, tooLarge = h, large
					return filepath.SkipAll
				}
			}
		}
		if !could || match != nil && !match(rel) {
			return nil // not read; a folder's files are still looked at
		}
		prel, in := e.relTo(path)
		for _, g := range e.private {
			if g.match(path, prel, in) {
				if ign != nil && ign.ignored(path, d.IsDir()) {
					return nil // git leaves it out
				}
				hit = path
				return filepath.SkipAll
			}
		}
		return nil
	})
	return hit, tooLarge
}

// treeReadCheck denies a read of a whole folder (grep -r, cp -r, tar -c)
// that holds a private path, naming that path; a folder too large to look
// through asks.
func (e *Engine) treeReadCheck(st *state, p *part, r shell.Write) {
	var ign *gitIgnore
	if r.GitIgnores && !st.ignoresWritten && e.rootGit {
		ign = newGitIgnore(e.ws, e.root)
	}
	hit, tooLarge := e.privateInside(p.abs, r.SkipHidden, r.Filter, r.Match, r.Follow, ign)
	switch {
	case hit != "":
		st.check("read", item{effect: warden.Deny, code: warden.CodeProtectedPath, subject: e.show(hit) + " (inside " + p.display() + ")", extra: "read"})
	case tooLarge:
		st.check("read", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: p.display(),
			extra: p.display() + " holds more files than warden looks through, so it cannot tell whether a private path is among them"})
	}
}

// searchTools are the hosts' content search tools. Each searches a folder
// whole, the working folder when no path is given, hidden files included
// (Claude Code's Grep runs ripgrep with --hidden): a private file inside
// is read.
// Roo Code's and Cline's search_files shows the lines that match with
// their context, and Codex's grep_files names the files whose contents
// match (a pattern at a time, enough to spell out a secret).
var searchTools = map[string]bool{"Grep": true, "grep": true, "search_file_content": true, "grep_search": true,
	"search_files": true, "grep_files": true}

// searchToolPart checks the folder a search tool searches for private
// files, and reports whether the call is a search tool's.
func (e *Engine) searchToolPart(st *state) bool {
	c := &st.call
	if !st.search {
		return false
	}
	dir := "."
	for _, k := range []string{"path", "dir_path"} {
		if v, ok := c.Args[k].(string); ok && v != "" {
			dir = v
		}
	}
	if home := tildeUser(e.ws, dir); home != "" {
		e.readPart(st, shell.Write{Path: home, Op: c.Tool, Tree: true}, nil)
	}
	if varPath(dir) {
		e.readPart(st, shell.Write{Path: shell.Dyn + dir, Op: c.Tool}, nil)
	}
	e.readPart(st, shell.Write{Path: dir, Op: c.Tool, Tree: true}, nil)
	return true
}

// includePart checks the paths and globs of Gemini CLI's read_many_files
// (include: the files it reads, each a path or a glob below the working
// folder): a private file among them is read. A glob is checked as each
// file it matches now, and one with "**" as the folder before it read
// whole; one with braces, which warden does not expand, asks.
func (e *Engine) includePart(st *state) {
	c := &st.call
	if c.Tool != "read_many_files" {
		return
	}
	v, ok := c.Args["include"]
	if !ok || v == nil {
		return
	}
	list, ok := v.([]any)
	if !ok {
		if s, isStr := v.(string); isStr {
			list = []any{s}
		} else {
			badArg(st, "include", v, "a list of strings")
			return
		}
	}
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			badArg(st, "include", x, "a list of strings")
			continue
		}
		switch {
		case strings.Contains(s, "{"):
			e.readPart(st, shell.Write{Path: shell.Dyn + s, Op: c.Tool}, nil)
		case strings.ContainsAny(s, "*?["):
			for _, m := range e.globMatches(st, s) {
				e.readPart(st, shell.Write{Path: m, Op: c.Tool}, nil)
			}
			if root, match := starStar(s); match != nil {
				e.readPart(st, shell.Write{Path: root, Op: c.Tool, Tree: true, Match: match}, nil)
			}
		default:
			e.readPart(st, shell.Write{Path: s, Op: c.Tool}, nil)
		}
	}
}
