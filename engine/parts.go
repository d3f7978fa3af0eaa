package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/shell"
)

func globText(pattern, s string) bool { return glob.Text(pattern, s) }

// pathKeys are the argument names paths are read from (POLICY.md).
var pathKeys = []string{"path", "file_path", "filePath", "filename", "notebook_path", "absolute_path", "dir_path"}

// patchKeys are the argument names patch bodies are read from.
var patchKeys = []string{"input", "patch", "patchText", "patch_text", "diff"}

// writeKinds are the kinds whose paths are written.
func writeKind(kind string) bool {
	switch kind {
	case "write", "edit", "delete", "other", "shell":
		return true
	}
	return false
}

// parts splits the call into parts and decides each.
func (e *Engine) parts(st *state) {
	c := &st.call
	n := 0
	if st.kind == "shell" {
		n += e.shellParts(st)
	}
	if !hasPathArgs(c.Args) {
		if n == 0 {
			p := part{subject: warden.SubjectCall, destr: st.destructive}
			e.evalPart(st, &p)
		}
		return
	}
	write := writeKind(st.kind)
	for _, k := range pathKeys {
		if v, ok := c.Args[k]; ok {
			switch v := v.(type) {
			case string:
				e.pathPart(st, v, write, "", "", nil)
				n++
			case nil:
			default:
				st.check("args", item{effect: warden.Deny, code: warden.CodePolicyError, subject: k, extra: "must be a string"})
			}
		}
	}
	if v, ok := c.Args["paths"]; ok {
		list, _ := v.([]any)
		if _, isStr := v.(string); isStr {
			e.pathPart(st, v.(string), write, "", "", nil)
			n++
		}
		for _, x := range list {
			if s, ok := x.(string); ok {
				e.pathPart(st, s, write, "", "", nil)
				n++
			} else {
				st.check("args", item{effect: warden.Deny, code: warden.CodePolicyError, subject: "paths", extra: "must be a list of strings"})
			}
		}
	}
	for _, k := range patchKeys {
		if s, ok := c.Args[k].(string); ok {
			for _, p := range patchPaths(s) {
				e.pathPart(st, p, true, "", "patch", nil)
				n++
			}
		}
	}
	if n == 0 {
		p := part{subject: warden.SubjectCall, destr: st.destructive}
		e.evalPart(st, &p)
	}
}

// shellParts analyses the command of a shell call; it returns the number
// of parts it decided.
func (e *Engine) shellParts(st *state) int {
	c := &st.call
	v, ok := c.Args["command"]
	if !ok {
		v, ok = c.Args["cmd"]
	}
	a := shell.Get()
	defer shell.Put(a)
	switch v := v.(type) {
	case string:
		a.Analyze(v)
	case []any:
		argv := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				st.check("command", item{effect: warden.Deny, code: warden.CodeUnparsable, extra: "the command array holds a value that is not a string"})
				return 1
			}
			argv = append(argv, s)
		}
		if len(argv) >= 2 && filepath.Base(argv[0]) == "apply_patch" {
			for _, p := range patchPaths(argv[1]) {
				e.pathPart(st, p, true, "", "patch", nil)
			}
		}
		a.AnalyzeArgv(argv)
	default:
		if !ok {
			st.check("command", item{effect: warden.Deny, code: warden.CodeUnparsable, extra: "the call has no command (expected a command or cmd argument)"})
		} else {
			st.check("command", item{effect: warden.Deny, code: warden.CodeUnparsable, extra: "the command must be a string or an array of strings"})
		}
		return 1
	}
	if a.Err != nil {
		st.check("parse", item{effect: warden.Deny, code: warden.CodeUnparsable, extra: a.Err.Error()})
		return 1
	}
	for i := range a.Commands {
		p := part{subject: warden.SubjectCommand, an: a, cmd: i, destr: true, dynamic: a.Commands[i].Dynamic}
		e.evalPart(st, &p)
	}
	// Folders the line changes into: relative writes may land there.
	var cds []string
	for _, cmd := range a.Commands {
		if (cmd.Prog == "cd" || cmd.Prog == "pushd") && len(cmd.Args) > 1 {
			cds = append(cds, cmd.Args[len(cmd.Args)-1])
		}
	}
	// A command a rule denies settles the call: its writes would only
	// change which reason is given, so they are not resolved (no I/O).
	if st.best.effect == warden.Deny && st.best.code == warden.CodeRuleDeny && len(a.Writes) > 0 {
		if st.tr != nil {
			st.tr.Checks = append(st.tr.Checks, Check{Name: "writes", Effect: warden.Deny, Code: warden.CodeRuleDeny,
				Detail: "rule " + st.best.rule.id + " already denies the command; the writes are shown but do not count"})
			e.traceOnly(st, func() { e.writeParts(st, a, cds) })
		}
		return len(a.Commands)
	}
	e.writeParts(st, a, cds)
	return len(a.Commands) + len(a.Writes)
}

// writeParts decides the paths a shell line writes.
func (e *Engine) writeParts(st *state, a *shell.Analysis, cds []string) {
	for _, w := range a.Writes {
		vk := "write"
		if w.Delete {
			vk = "delete"
		}
		e.pathPart(st, w.Path, true, vk, w.Op, cds)
	}
}

// traceOnly runs f for the trace alone: the parts it evaluates are recorded
// (marked as not counting) but leave the decision as it was.
func (e *Engine) traceOnly(st *state, f func()) {
	saved := *st
	n := len(st.tr.Parts)
	f()
	tr := st.tr
	*st = saved
	for i := n; i < len(tr.Parts); i++ {
		tr.Parts[i].Uncounted = true
	}
}

// pathPart resolves a path and decides it; with cd folders, a relative path
// is also decided as seen from each of them.
func (e *Engine) pathPart(st *state, raw string, write bool, vkind, op string, cds []string) {
	p := part{op: op, subject: warden.SubjectPath, raw: raw, write: write, vkind: vkind, destr: write || st.destructive}
	if vkind != "" {
		p.destr = true
	}
	if shell.IsDyn(raw) || raw == "" {
		p.dynamic = true
		p.raw = shell.Display(raw)
		e.evalPart(st, &p)
		return
	}
	base := e.cwd(&st.call)
	p.abs, p.rel, p.inside = e.resolve(raw, base)
	p.clean = e.cleanPath(raw, base)
	e.evalPart(st, &p)
	if filepath.IsAbs(raw) || strings.HasPrefix(raw, "~") {
		return
	}
	for _, d := range cds {
		q := part{op: op, subject: warden.SubjectPath, raw: raw, write: write, vkind: vkind, destr: true}
		if shell.IsDyn(d) || strings.HasPrefix(d, "-") {
			q.dynamic = true
			e.evalPart(st, &q)
			continue
		}
		dir, _, _ := e.resolve(d, base)
		q.abs, q.rel, q.inside = e.resolve(raw, dir)
		q.clean = e.cleanPath(raw, dir)
		e.evalPart(st, &q)
	}
}

// cwd returns the folder relative paths of the call resolve against.
func (e *Engine) cwd(c *warden.ToolCall) string {
	if c.Cwd == "" {
		return e.rootRaw
	}
	if filepath.IsAbs(c.Cwd) {
		return filepath.Clean(c.Cwd)
	}
	return filepath.Join(e.rootRaw, c.Cwd)
}

// resolve makes a path absolute and clean (backslashes, "~", ".", "..",
// symlinks) and relative to the workspace root.
func (e *Engine) resolve(raw, base string) (abs, rel string, inside bool) {
	abs = e.evalPath(e.cleanPath(raw, base))
	rel, inside = e.relTo(abs)
	return abs, rel, inside
}

// evalPath resolves the symlinks of an absolute clean path. Below the
// workspace root (resolved once at compile time) it looks only at the
// components under the root, and stops at the first that does not exist:
// nothing below it can be a link yet.
func (e *Engine) evalPath(clean string) string { return e.evalPathHops(clean, 0) }

// evalPathHops is evalPath with a count of the links followed so far, so
// that a link loop ends.
func (e *Engine) evalPathHops(clean string, hops int) string {
	rel, inside := e.relTo(clean)
	if !inside {
		r, _ := evalPrefix(clean)
		return r
	}
	if rel == "." {
		return e.root
	}
	cur, rest := e.root, rel
	for rest != "" {
		seg, more, _ := strings.Cut(rest, "/")
		next := cur + "/" + seg
		fi, err := os.Lstat(next)
		if err != nil {
			if more == "" {
				return next
			}
			return next + "/" + more
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			hops++
			if hops > 40 {
				// A link loop: the system refuses it too; keep the path.
				return filepath.Join(next, more)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return next
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			// The target may be anywhere and may not exist yet (a
			// dangling link is how a write creates its target).
			r, _ := evalPrefix(filepath.Clean(target))
			if more == "" {
				return r
			}
			return e.evalPathHops(filepath.Join(r, more), hops)
		}
		cur, rest = next, more
	}
	return cur
}

func (e *Engine) relTo(abs string) (string, bool) {
	for _, root := range []string{e.root, e.rootRaw} {
		if abs == root {
			return ".", true
		}
		if under(abs, root) {
			return abs[len(root)+1:], true
		}
	}
	return abs, false
}

// cleanPath makes a path absolute and clean ("~", backslashes, ".", "..")
// without resolving symlinks.
func (e *Engine) cleanPath(raw, base string) string {
	p := strings.ReplaceAll(raw, "\\", "/")
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = e.home + p[1:]
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// rawAbs is the path as written made absolute, without resolving symlinks.
func (p *part) rawAbs() string {
	if p.clean == "" {
		return p.abs
	}
	return p.clean
}

func (p *part) display() string {
	switch p.subject {
	case warden.SubjectCommand:
		return commandText(&p.an.Commands[p.cmd])
	case warden.SubjectPath:
		if p.dynamic {
			return p.raw
		}
		if p.inside {
			return p.rel
		}
		return p.abs
	}
	return ""
}

// commandText is the normalised text of a simple command: words with
// quoting removed, joined by spaces, the program by its base name.
func commandText(c *shell.Command) string {
	var b strings.Builder
	b.WriteString(shell.Display(c.Prog))
	for _, w := range c.Args[1:] {
		b.WriteByte(' ')
		w = shell.Display(w)
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`;&|<>(){}*?[]#~") {
			b.WriteString(shellQuote(w))
		} else {
			b.WriteString(w)
		}
	}
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// partValue is the part's value for traces and grants.
func (e *Engine) partValue(st *state, p *part) string {
	if p.subject == warden.SubjectCall {
		data, err := json.Marshal(st.call.Args)
		if err != nil {
			return "{}"
		}
		return string(data)
	}
	return p.display()
}

// needsIntent reports whether a part needs an active intent.
func (st *state) needsIntent(p *part) bool {
	in := st.e.pol.Intents
	if in == nil || len(in.Require) == 0 {
		return false
	}
	for _, k := range in.Require {
		if k == st.kind || p.vkind != "" && k == p.vkind {
			return true
		}
		if p.vkind == "delete" && k == "write" {
			return true
		}
	}
	return false
}

// scope checks a write against the active intent.
func (e *Engine) scope(st *state, p *part) item {
	id := st.call.IntentID
	is := e.intents
	switch {
	case id == "":
		return item{set: true, effect: warden.Deny, code: warden.CodeMissingIntent, subject: st.call.Tool}
	case is == nil:
		return item{}
	case is.err != nil:
		return item{set: true, effect: warden.Deny, code: warden.CodeIntentNotFound, subject: id, extra: is.err.Error()}
	}
	in, ok := is.byID[id]
	if !ok {
		return item{set: true, effect: warden.Deny, code: warden.CodeIntentNotFound, subject: id}
	}
	if !in.owns(p.abs, p.rel, p.inside) {
		return item{set: true, effect: e.pol.Intents.OutOfScope, code: warden.CodeScopeViolation, subject: p.display(), extra: id}
	}
	return item{}
}

// grantFor returns the id of a grant that covers part p, or "".
func (e *Engine) grantFor(st *state, p *part) string {
	c := &st.call
	var value string
	computed := false
	for i := range st.s.Grants {
		g := &st.s.Grants[i]
		if g.Tool != c.Tool || g.Role != c.Role || g.Session != "" && g.Session != c.Session || g.Subject != p.subject {
			continue
		}
		if g.UsesLeft == 0 {
			continue
		}
		if g.Pattern != "" {
			if e.grantPattern(st, g, p) {
				return g.ID
			}
			continue
		}
		if !computed {
			value, computed = e.partValue(st, p), true
		}
		if g.Value == value {
			return g.ID
		}
	}
	return ""
}

// grantPattern matches a widened grant: a command pattern for commands, a
// path glob for paths, a text glob on the canonical arguments for calls.
func (e *Engine) grantPattern(st *state, g *warden.Grant, p *part) bool {
	switch p.subject {
	case warden.SubjectCommand:
		pat, err := shell.CompilePattern(g.Pattern)
		return err == nil && pat.Match(p.an, p.cmd, true)
	case warden.SubjectPath:
		pg, err := e.compilePath(g.Pattern)
		return err == nil && pg.match(p.abs, p.rel, p.inside)
	}
	return globText(g.Pattern, e.partValue(st, p))
}

// patchPaths returns the file paths named in a patch body: the apply_patch
// envelope (*** Add/Update/Delete File:, *** Move to:) and unified diff
// headers (--- a/x, +++ b/x).
func patchPaths(body string) []string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, pre := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if s, ok := strings.CutPrefix(line, pre); ok {
				out = append(out, strings.TrimSpace(s))
			}
		}
		for _, pre := range []string{"--- ", "+++ "} {
			if s, ok := strings.CutPrefix(line, pre); ok {
				s = strings.TrimSpace(s)
				if i := strings.IndexByte(s, '\t'); i >= 0 {
					s = s[:i]
				}
				if s == "/dev/null" || s == "" {
					continue
				}
				if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
					s = s[2:]
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// under reports whether path p is dir or inside it, without building
// dir + "/".
func under(p, dir string) bool {
	return p == dir || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// hasPathArgs reports whether any argument is one that paths or patches are
// read from (pathKeys, "paths", patchKeys). Ranging over a call's few
// arguments costs less than hashing each of the 13 names.
func hasPathArgs(args map[string]any) bool {
	for k := range args {
		switch k {
		case "path", "file_path", "filePath", "filename", "notebook_path", "absolute_path", "dir_path",
			"paths", "input", "patch", "patchText", "patch_text", "diff":
			return true
		}
	}
	return false
}
