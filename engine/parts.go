package engine

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/warden-run/warden/internal/fold"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/shell"
	"github.com/warden-run/warden/shell/progs"
	"golang.org/x/text/unicode/norm"
)

func globText(pattern, s string) bool { return glob.Text(pattern, s) }

// The argument names warden reads paths from (docs/policy.md, "Paths"):
// this is the one list; hasPathArgs and the checks below use it.
var (
	// pathKeys each hold one path (a string).
	pathKeys = []string{"path", "file_path", "filePath", "filename", "notebook_path", "absolute_path", "dir_path", "scriptPath"}
	// pathListKey holds a path or a list of paths.
	pathListKey = "paths"
	// moveKeys are a move's source (removed) and destination (written).
	moveKeys = [...]string{"source", "destination"}
	// patchKeys hold patch bodies, whose headers name the files.
	patchKeys = []string{"input", "patch", "patchText", "patch_text", "diff"}
	// nestedKeys hold lists of files (Roo Code's args.file[].path,
	// files[].path).
	nestedKeys = [...]string{"args", "files", "file"}
)

// pathArgs is every name of the lists above, for hasPathArgs; pathArgHint
// has, for each name, the bit of its last byte in the word of its length,
// so that most other argument names (command, content, description's
// length and last byte are shared, command's are not) cost no map lookup.
var pathArgs, pathArgHint = func() (map[string]bool, [32]uint32) {
	m := map[string]bool{pathListKey: true}
	for _, ks := range [][]string{pathKeys, moveKeys[:], patchKeys, nestedKeys[:]} {
		for _, k := range ks {
			m[k] = true
		}
	}
	var h [32]uint32
	for k := range m {
		h[len(k)&31] |= 1 << (k[len(k)-1] & 31)
	}
	return m, h
}()

// badArg denies a call whose path argument k is not of the type want: the
// host or the model sent a malformed call (BAD_INPUT, recoverable: the
// same call with the argument as a string can be decided).
func badArg(st *state, k string, v any, want string) {
	st.check("args", item{effect: warden.Deny, code: warden.CodeBadInput, subject: k, extra: want, note: jsonType(v)})
}

// jsonType names the JSON type of a decoded argument.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "true or false"
	case float64, json.Number, int, int64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a value of another type"
}

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
	if a, b, ok := st.scanArgs(); ok {
		st.check("args", item{effect: warden.Deny, code: warden.CodeBadInput, subject: fmt.Sprintf("%q and %q", a, b), extra: twinKeys})
	}
	n := 0
	if st.kind == "shell" {
		n += e.shellParts(st)
		// The other names of a shell tool's working folder (Codex's and
		// OpenCode's workdir, Gemini CLI's directory; dir_path is a path
		// argument): the command runs and lists there (ls with no path
		// reads it), as after cd DIR.
		for _, k := range workdirKeys {
			if k == workdirKeys[0] && !st.argKeys().workdir {
				break // none: the common case, without a lookup of each
			}
			if v, ok := c.Args[k].(string); ok && v != "" && !slices.Contains(pathKeys, k) {
				e.readPart(st, shell.Write{Path: v, Op: "working folder"}, nil)
			}
		}
	}
	e.includePart(st)
	n += e.uriPart(st)
	if st.kind != "shell" {
		e.looseArgs(st)
	}
	if st.kind == "other" {
		e.looseValues(st)
	}
	if !st.argKeys().path {
		if e.searchToolPart(st) {
			return
		}
		if n == 0 {
			e.callPart(st)
		}
		return
	}
	write := writeKind(st.kind)
	alt := e.altDirs(st, "")
	// A move names its source and its destination (MCP filesystem
	// move_file): the source is removed, the destination written.
	for _, k := range moveKeys {
		if v, ok := c.Args[k]; ok && (write || st.kind == "other") {
			vk := "write"
			if k == "source" {
				vk = "delete"
			}
			switch v := v.(type) {
			case string:
				e.pathPart(st, v, true, vk, "move "+k, alt)
				n++
			case nil:
			default:
				badArg(st, k, v, "a string")
			}
		}
	}
	for _, k := range pathKeys {
		v, ok := c.Args[k]
		if !ok {
			continue
		}
		switch v := v.(type) {
		case string:
			if st.kind == "shell" && isWorkdirKey(k) {
				// A shell tool's working folder (Gemini CLI's dir_path):
				// where its command runs, not a file it writes.
				e.readPart(st, shell.Write{Path: v, Op: "working folder"}, nil)
			} else {
				e.pathPart(st, v, write, "", "", e.altDirs(st, k))
			}
			n++
		case nil:
		default:
			badArg(st, k, v, "a string")
		}
	}
	e.searchToolPart(st)
	if v, ok := c.Args[pathListKey]; ok {
		switch v := v.(type) {
		case string:
			e.pathPart(st, v, write, "", "", alt)
			n++
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					e.pathPart(st, s, write, "", "", alt)
					n++
				} else {
					badArg(st, pathListKey, x, "a string or a list of strings")
				}
			}
		case nil:
		default:
			badArg(st, pathListKey, v, "a string or a list of strings")
		}
	}
	for _, k := range patchKeys {
		if s, ok := c.Args[k].(string); ok {
			for _, f := range shell.PatchFiles(s) {
				e.pathPart(st, f.Path, true, f.Kind, "patch", alt)
				n++
			}
		}
	}
	for _, k := range nestedKeys {
		if v, ok := c.Args[k]; ok {
			nestedPaths(v, 0, func(p string) {
				e.pathPart(st, p, write, "", "", alt)
				n++
			})
		}
	}
	if n == 0 {
		e.callPart(st)
	}
}

// looseArgs checks the string arguments of a call whose names say they
// hold a path but which warden does not read as one (an MCP server's
// target_file, output_path, file, backup_dir): the tool may read or write
// what they name. As a word given to a program warden has no table for,
// each is checked against the private and the protected paths, and
// nothing else: mcp__notes__save {target_file: .git/config} is denied.
func (e *Engine) looseArgs(st *state) {
	for k, v := range st.call.Args {
		if s, ok := v.(string); ok && looseArg(k, s) {
			e.readPart(st, shell.Write{Path: s, Op: "argument " + k, Private: true, Maybe: true}, nil)
		}
	}
}

// looseArg reports a top-level string argument looseArgs checks.
func looseArg(k, s string) bool {
	return s != "" && len(s) <= 4096 && !strings.ContainsAny(s, "\n\x00") && !(pathArgs[k] && !slices.Contains(nestedKeys[:], k)) &&
		!isWorkdirKey(k) && pathLikeKey(k)
}

// Bounds of looseValues: past them the call asks.
const (
	looseDepth   = 8
	looseStrings = 2000
)

// looseValues checks the arguments of a tool warden knows nothing of (kind
// other: an MCP server's tool), at any depth: a string that could be a
// path (one word: no space, tab or line break) is checked against the
// private and the protected paths, whatever its argument's name, unless
// the name says it holds something else (content, pattern, query, url,
// ...). The tool's schema is the server's: mcp__fs__write {name:
// .git/hooks/pre-commit} and mcp__x__edit {edits: [{path: .git/config}]}
// are denied. A file URI is checked as the path it names. A call with
// more strings, or deeper, than warden looks through asks.
func (e *Engine) looseValues(st *state) {
	n := 0
	deep := false
	var walk func(k string, v any, depth int)
	walk = func(k string, v any, depth int) {
		if depth > looseDepth || n > looseStrings {
			deep = true
			return
		}
		switch v := v.(type) {
		case string:
			n++
			if v == "" || len(v) > 4096 || strings.ContainsAny(v, " \t\r\n\x00") || notPathKey(k) ||
				depth == 0 && (pathArgs[k] || looseArg(k, v)) {
				// Not a path; or a top-level argument read as a path
				// (pathPart) or checked by looseArgs already.
				return
			}
			if len(v) > 5 && strings.EqualFold(v[:5], "file:") {
				if u, err := url.Parse(v); err == nil && u.Path != "" {
					v = u.Path
				}
			}
			e.readPart(st, shell.Write{Path: v, Op: "argument " + k, Private: true, Maybe: true}, nil)
		case map[string]any:
			for kk, x := range v {
				walk(kk, x, depth+1)
			}
		case []any:
			for _, x := range v {
				walk(k, x, depth+1)
			}
		}
	}
	for k, v := range st.call.Args {
		walk(k, v, 0)
	}
	if deep {
		st.check("args", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: st.call.Tool,
			extra: fmt.Sprintf("the call's arguments hold more than %d strings or lie deeper than %d levels, more than warden looks through for paths", looseStrings, looseDepth)})
	}
}

// notPathKey reports an argument name that says it holds something other
// than a path (content, pattern, query, url, ...).
func notPathKey(k string) bool {
	for w := range keyWords(k) {
		for _, not := range notPathWords {
			if strings.Contains(w, not) {
				return true
			}
		}
	}
	return false
}

var notPathWords = [...]string{"content", "pattern", "glob", "query", "regex", "text", "url", "uri", "type", "mode", "format", "encoding"}

// pathLikeKey reports an argument name that says it holds a path: one of
// its words (split at "_", "-", "." and before an upper-case letter)
// starts or ends with a word for a path (target_file, outputPath,
// backup_dir, filename, subdir), and none is a word for something else
// (content, pattern, query, url, type, mode, ...). OpenCode's oldString
// holds no path although "dst" is in it.
func pathLikeKey(k string) bool {
	path := false
	if notPathKey(k) {
		return false
	}
	for w := range keyWords(k) {
		for _, stem := range [...]string{"path", "file", "dir", "folder", "target", "dest", "dst", "src", "source", "output", "location"} {
			if strings.HasPrefix(w, stem) || strings.HasSuffix(w, stem) {
				path = true
			}
		}
	}
	return path
}

// keyWords yields the lower-cased words of an argument name.
func keyWords(k string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := 0
		for i := 0; i <= len(k); i++ {
			end := i == len(k) || k[i] == '_' || k[i] == '-' || k[i] == '.' || i > start && 'A' <= k[i] && k[i] <= 'Z' && !('A' <= k[i-1] && k[i-1] <= 'Z')
			if !end {
				continue
			}
			if i > start && !yield(strings.ToLower(k[start:i])) {
				return
			}
			start = i
			if i < len(k) && (k[i] == '_' || k[i] == '-' || k[i] == '.') {
				start = i + 1
			}
		}
	}
}

// uriPart checks a file URI in a call's uri argument (Codex's
// read_mcp_resource {server, uri}: an MCP server's resource may be a file,
// file:///home/me/.ssh/id_rsa) as the path it names; it returns the number
// of parts it decided. A file URI on another host, or one that does not
// parse, is a path warden cannot read.
func (e *Engine) uriPart(st *state) int {
	s, ok := st.call.Args["uri"].(string)
	if !ok || len(s) < 5 || !strings.EqualFold(s[:5], "file:") {
		return 0
	}
	write := writeKind(st.kind)
	u, err := url.Parse(s)
	if err != nil || u.Host != "" && !strings.EqualFold(u.Host, "localhost") || u.Path == "" {
		e.pathPart(st, shell.Dyn+s, write, "", "", nil)
		return 1
	}
	e.pathPart(st, u.Path, write, "", "", nil)
	return 1
}

// callPart decides a call as a whole. A write, edit or delete call whose
// files warden cannot identify is never allowed by the default or by a
// rule that does not name its tool: it asks at most (UNKNOWN_TARGET).
func (e *Engine) callPart(st *state) {
	p := part{subject: warden.SubjectCall, destr: st.destructive}
	switch st.kind {
	case "write", "edit", "delete":
		p.unknownTarget = true
	}
	e.evalPart(st, &p)
}

// nestedPaths finds path arguments inside lists and objects of a call's
// arguments, two levels deep.
func nestedPaths(v any, depth int, fn func(string)) {
	if depth > 2 {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range pathKeys {
			if s, ok := v[k].(string); ok {
				fn(s)
			}
		}
		for _, x := range v {
			switch x.(type) {
			case map[string]any, []any:
				nestedPaths(x, depth+1, fn)
			}
		}
	case []any:
		for _, x := range v {
			nestedPaths(x, depth+1, fn)
		}
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
	if !ok {
		// Codex's write_stdin: text typed into a running process's
		// terminal (engine/terminal.go).
		if v, ok = c.Args["chars"]; ok {
			if s, isText := v.(string); isText {
				text, why := terminalInput(s)
				if why != "" {
					st.check("chars", item{effect: warden.Deny, code: warden.CodeUnparsable, extra: why})
					return 1
				}
				v = text
			}
		}
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
	// Codex's exec_command may name the shell program that runs the
	// command: only a system shell is the one the analysis assumes.
	if sh, ok := c.Args["shell"].(string); ok && sh != "" {
		switch sh {
		case "bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/bin/zsh", "/bin/dash", "/usr/bin/bash", "/usr/bin/zsh", "/usr/bin/sh":
		default:
			st.check("shell", item{effect: warden.Ask, code: warden.CodeUnparsable, extra: "the command is run by the shell program " + sh + ", which warden does not know"})
		}
	}
	gitChecked := false
	var configChecked []string
	for i := range a.Commands {
		p := part{subject: warden.SubjectCommand, an: a, cmd: i, destr: true, dynamic: a.Commands[i].Dynamic}
		e.evalPart(st, &p)
		if c := &a.Commands[i]; c.Prog == "warden" || c.Prog == "warden-hook" {
			e.wardenCommand(st, c)
		}
		if c := &a.Commands[i]; c.RunsGit && !gitChecked {
			gitChecked = true
			e.gitHere(st, st.cwd())
			if a.GitCd != "" {
				e.gitAfterCd(st, a)
			}
		}
		if c := &a.Commands[i]; progConfigs[c.Prog].bad != nil && !slices.Contains(configChecked, c.Prog) {
			configChecked = append(configChecked, c.Prog)
			e.configHere(st, c, a.Dirs)
		}
	}
	// Folders the line changes into: relative paths may be resolved there.
	cds := a.Dirs
	st.ignoresWritten = writesIgnoreFile(a.Writes)
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
	e.dirParts(st, cds)
	for _, r := range a.Reads {
		e.readPart(st, r, cds)
		if len(a.Globs) > 0 && a.IsGlob(r.Path) {
			for _, m := range e.globMatches(st, r.Path) {
				e.readPart(st, shell.Write{Path: m, Op: r.Op, Private: r.Private}, nil)
			}
			if root, match := starStar(r.Path); match != nil {
				e.readPart(st, shell.Write{Path: root, Op: r.Op, Private: r.Private, Tree: true, Match: match}, cds)
			}
		}
	}
	return len(a.Commands) + len(a.Writes)
}

// gitHere asks for a git command run in a working folder (the call's
// cwd, or the shell tool's) where git finds a repository other than the
// workspace root's: a folder that is itself a repository's folder (HEAD,
// objects/ and refs/, as git recognises a bare repository), or one below
// the root with a .git of its own. Its configuration can run any program
// (core.sshCommand for git fetch, core.fsmonitor for git status), and an
// agent can write it with file tools where it may edit files. As the
// shell analysis does for git -C DIR and cd DIR && git.
func (e *Engine) gitHere(st *state, cwd string) {
	if cwd == e.rootRaw && e.rootGit {
		return
	}
	dir := e.evalPath(cwd)
	if dir == e.root && e.rootGit {
		// The workspace's own repository (the common case, and no I/O):
		// git run in the root is what the policy's rules are for.
		return
	}
	// As git looks: in each folder from dir up, a .git first, then the
	// folder itself as a repository's folder.
	for d := dir; ; d = filepath.Dir(d) {
		rel, inside := e.relTo(d)
		if !inside {
			return // outside the workspace: not a repository an agent wrote
		}
		repo := ""
		gp := &e.rootGitPaths // the root's, built once
		if d != e.root {
			gp = gitPaths(d)
		}
		if _, err := e.ws.Lstat(gp[0]); err == nil {
			repo = gp[0]
		} else if gitDirShape(e.ws, gp) {
			repo = d
		}
		if repo != "" && !e.ownRepo(repo) && !e.ownRepo(d) {
			st.check("git", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: rel,
				extra: "git runs in " + e.show(dir) + ", where it uses the repository " + e.show(repo) + ", whose configuration could run programs"})
			return
		}
		if d == e.root || repo != "" {
			return
		}
	}
}

// ownRepo reports the workspace root's own repository folder.
func (e *Engine) ownRepo(repo string) bool { return repo == e.ownGit }

// gitPaths are the paths git looks at in the folder d: its .git, and the
// HEAD, objects and refs of a repository's own folder.
func gitPaths(d string) *[4]string {
	return &[4]string{d + "/.git", filepath.Join(d, "HEAD"), filepath.Join(d, "objects"), filepath.Join(d, "refs")}
}

// gitDirShape reports a folder git takes for a repository's own folder
// when it starts there (its gitPaths): a HEAD file, and objects/ and
// refs/ folders.
func gitDirShape(ws Workspace, gp *[4]string) bool {
	if fi, err := ws.Stat(gp[1]); err != nil || fi.IsDir() {
		return false
	}
	for _, sub := range gp[2:] {
		if fi, err := ws.Stat(sub); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// wardenReadOnly are the warden subcommands that change nothing.
var wardenReadOnly = map[string]bool{"check": true, "explain": true, "lint": true, "test": true, "version": true,
	"doctor": true, "audit": true, "help": true, "-h": true, "--help": true, "--version": true}

// wardenCommand denies an agent's call of warden itself that would change
// warden's state: answering its own approvals, adding grants, resuming a
// halt, purging the audit, rewiring the hooks. Like warden's own files,
// this holds in every mode.
func (e *Engine) wardenCommand(st *state, c *shell.Command) {
	sub := ""
	for _, w := range c.Args[1:] {
		if shell.IsDyn(w) {
			sub = "(computed)"
			break
		}
		if !strings.HasPrefix(w, "-") || wardenReadOnly[w] {
			sub = w
			break
		}
	}
	if wardenReadOnly[sub] || c.Prog == "warden-hook" && sub == "" {
		return
	}
	st.own = true
	st.check("warden", item{effect: warden.Deny, code: warden.CodeProtectedPath, subject: "warden's own state (warden " + sub + ")"})
}

// dirParts checks the folders a line works in (cd DIR, make -C DIR, go -C
// DIR, env -C DIR) as a shell tool's working folder is checked: the
// commands after them read and run what is there, and a build tool runs
// the recipes it finds (cd ~/other && make deploy runs another project's
// Makefile). A folder is resolved as written from the call's folder and
// after the folders before it on the line: outside either way, it takes
// workspace.outside (a private one is denied); outside one way only (cd
// src && cd .., where a cd that fails or runs in a subshell leaves the
// second in the call's parent), and a folder computed at run time, ask.
func (e *Engine) dirParts(st *state, cds []string) {
	if len(cds) == 0 {
		return
	}
	base := st.cwd()
	cur := base
	for _, d := range cds {
		if shell.IsDyn(d) || strings.HasPrefix(d, "-") {
			st.check("folder", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: shell.Display(d),
				extra: "the line changes into a folder computed at run time (" + shell.Display(d) + "), so warden cannot tell where its commands run"})
			continue
		}
		_, _, in := e.resolve(d, base)
		abs, _, inCur := e.resolve(d, cur)
		cur = abs
		switch {
		case !in && !inCur || filepath.IsAbs(d) || strings.HasPrefix(d, "~"):
			e.readPart(st, shell.Write{Path: d, Op: "working folder"}, nil)
		case !in || !inCur:
			if e.pol.Workspace.Outside != warden.Allow {
				st.check("folder", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: d,
					extra: "the line changes into " + d + ", which is outside the workspace unless the folders before it on the line were entered"})
			}
		}
	}
}

// readPart checks a path a shell line reads: a private path is denied, and
// a path outside the workspace takes workspace.outside, as it does for the
// Read tool, unless an allow rule for reads names it. A read found only by
// looking at the words of a program warden has no table for is checked
// against the private paths alone. Reads need no allow rule of their own:
// the command that reads is a part already.
func (e *Engine) readPart(st *state, r shell.Write, cds []string) {
	if !shell.IsDyn(r.Path) && strings.IndexByte(r.Path, 0) >= 0 {
		st.check("args", item{effect: warden.Deny, code: warden.CodeBadInput, subject: strings.ReplaceAll(r.Path, "\x00", `\0`), extra: nulPath})
		return
	}
	if !shell.IsDyn(r.Path) {
		for _, v := range spellings(r.Path) {
			w := r
			w.Path = v
			e.readSpelt(st, w, cds)
		}
	}
	e.readSpelt(st, r, cds)
}

// readSpelt is readPart for one spelling of the path.
func (e *Engine) readSpelt(st *state, r shell.Write, cds []string) {
	if procPath(r.Path) {
		r.Path = shell.Dyn + r.Path
	}
	if shell.IsDyn(r.Path) || r.Path == "" {
		if len(e.private) > 0 && !r.Private {
			st.check("read", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: shell.Display(r.Path),
				extra: "the line reads a path computed at run time (" + shell.Display(r.Path) + "), which may be a private path"})
		}
		return
	}
	base := st.cwd()
	dirs := append([]string{base}, cds...)
	if r.Top {
		// From the top of the work tree: the workspace's own repository
		// (git elsewhere is never allowed by a rule, gitHere).
		dirs = append(dirs, e.rootRaw)
	}
	if r.Repo != progs.RepoNone {
		e.repoReadCheck(st, r, dirs)
		return
	}
	for i, d := range dirs {
		if i > 0 {
			if shell.IsDyn(d) || filepath.IsAbs(r.Path) || strings.HasPrefix(r.Path, "~") {
				continue
			}
			d, _, _ = e.resolve(d, base)
		}
		p := part{op: r.Op, subject: warden.SubjectPath, raw: r.Path, vkind: "read"}
		p.abs, p.rel, p.inside = e.resolve(r.Path, d)
		p.clean = e.cleanPath(r.Path, d)
		if e.isPrivate(&p) {
			st.check("read", item{effect: warden.Deny, code: warden.CodeProtectedPath, subject: p.display(), extra: "read"})
			continue
		}
		if r.Tree {
			e.treeReadCheck(st, &p, r)
		}
		// A program warden does not know may write what it is given.
		if r.Maybe && e.isProtected(&p) {
			if e.isOwn(&p) {
				st.own = true
			}
			st.check("argument", item{effect: warden.Deny, code: warden.CodeProtectedPath, subject: p.display()})
			continue
		}
		if r.Private || p.inside || e.pol.Workspace.Outside == warden.Allow {
			continue
		}
		if e.readAllowed(st, &p) {
			continue
		}
		st.check("read", item{effect: e.pol.Workspace.Outside, code: warden.CodeOutsideWorkspace, subject: p.display()})
	}
}

// readAllowed reports whether an allow rule with paths names a path the
// shell reads outside the workspace (a rule for the read kind, or for the
// call's tool).
func (e *Engine) readAllowed(st *state, p *part) bool {
	for _, r := range e.nonCommand {
		if r.effect == warden.Allow && r.hasPath && e.ruleMatchesPat(st, r, p, nil) {
			return true
		}
	}
	return false
}

// isPrivate reports whether a path is one no agent may read.
func (e *Engine) isPrivate(p *part) bool {
	if len(e.private) == 0 {
		return false
	}
	ra := p.rawAbs()
	rrel, rinside := p.rel, p.inside
	if ra != p.abs {
		rrel, rinside = e.relTo(ra)
	}
	for _, g := range e.private {
		if g.match(p.abs, p.rel, p.inside) || ra != p.abs && g.match(ra, rrel, rinside) {
			return true
		}
	}
	// A folder whose every file is private (~/.ssh for ~/.ssh/**) is
	// private itself: reading it (grep -r, cp -r, tar) reads them.
	childAbs, childRel := p.abs+"/_", p.rel+"/_"
	for _, g := range e.private {
		if g.match(childAbs, childRel, p.inside) {
			return true
		}
	}
	return false
}

// writeParts decides the paths a shell line writes.
func (e *Engine) writeParts(st *state, a *shell.Analysis, cds []string) {
	for _, w := range a.Writes {
		vk := "write"
		if w.Delete {
			vk = "delete"
		}
		e.pathPart(st, w.Path, true, vk, w.Op, cds)
		if w.TreeWrite && !shell.IsDyn(w.Path) {
			// chmod -R DIR: every path inside is written.
			p := part{op: w.Op, subject: warden.SubjectPath, raw: w.Path, write: true, vkind: vk}
			p.abs, p.rel, p.inside = e.resolve(w.Path, st.cwd())
			e.folderCheck(st, &p)
		}
		if len(w.Sources) > 0 {
			e.copyCheck(st, w)
		}
		if len(a.Globs) > 0 && a.IsGlob(w.Path) {
			for _, m := range e.globMatches(st, w.Path) {
				e.pathPart(st, m, true, vk, w.Op, nil)
			}
		}
	}
}

// globMatches returns the files a glob word matches now, as bash would
// replace it (a superset: dot files match too). Each is checked as a path
// of its own beside the word itself.
func (e *Engine) globMatches(st *state, raw string) []string {
	pat := e.joinPath(raw, st.cwd())
	ms, err := globPaths(e.ws, pat)
	if err != nil || len(ms) > 256 {
		return []string{shell.Dyn + raw} // too many to check one by one: computed
	}
	return ms
}

// starStar reads a glob with "**" as zsh (and bash with globstar) reads
// it: "**/" matches any number of folders, so cat pkg/**/.* reads
// pkg/a/b/.env, which filepath.Glob (** as *) does not reach. It returns
// the folder before the first glob character and the match of the paths
// below it, or nil when the glob has no "**".
func starStar(glob string) (string, func(string) bool) {
	if !strings.Contains(glob, "**") {
		return "", nil
	}
	i := strings.IndexAny(glob, "*?[")
	root, pat := ".", glob
	if j := strings.LastIndexByte(glob[:i], '/'); j >= 0 {
		root, pat = glob[:j], glob[j+1:]
		if root == "" {
			root = "/"
		}
	}
	var b strings.Builder
	b.WriteString("^")
	for k := 0; k < len(pat); k++ {
		switch c := pat[k]; {
		case strings.HasPrefix(pat[k:], "**/"):
			b.WriteString("(?:.*/)?")
			k += 2
		case strings.HasPrefix(pat[k:], "**"):
			b.WriteString(".*")
			k++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(pat[k+1:], ']')
			if end < 0 {
				b.WriteString(regexp.QuoteMeta("["))
				continue
			}
			class := pat[k+1 : k+1+end]
			if class != "" && class[0] == '!' {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			k += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(pat[k : k+1]))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return root, func(string) bool { return true }
	}
	return root, re.MatchString
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
	for _, v := range spellings(raw) {
		e.pathSpelt(st, v, write, vkind, op, cds)
	}
	e.pathSpelt(st, raw, write, vkind, op, cds)
}

// pathSpelt is pathPart for one spelling of the path.
func (e *Engine) pathSpelt(st *state, raw string, write bool, vkind, op string, cds []string) {
	p := part{op: op, subject: warden.SubjectPath, raw: raw, write: write, vkind: vkind, destr: write || st.destructive}
	if vkind != "" {
		p.destr = true
	}
	if !shell.IsDyn(raw) && strings.IndexByte(raw, 0) >= 0 {
		// The kernel takes no such path; a tool may cut it at the NUL
		// (.env\x00.md is .env to a C program) or refuse it.
		st.check("args", item{effect: warden.Deny, code: warden.CodeBadInput, subject: strings.ReplaceAll(raw, "\x00", `\0`), extra: nulPath})
		return
	}
	if st.kind != "shell" && !shell.IsDyn(raw) {
		// A file tool's path as a tool that expands it may read it
		// (Python's os.path.expanduser and expandvars): ~user is that
		// user's home, checked beside the path as written, and $VAR is
		// whatever the variable holds.
		if home := tildeUser(e.ws, raw); home != "" {
			e.pathPart(st, home, write, vkind, op, nil)
		}
		if varPath(raw) {
			e.pathPart(st, shell.Dyn+raw, write, vkind, op, nil)
		}
	}
	if shell.IsDyn(raw) || raw == "" || procPath(raw) {
		p.dynamic = true
		p.raw = shell.Display(raw)
		e.evalPart(st, &p)
		return
	}
	base := st.cwd()
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

// spellings returns the other spellings of a path that name the same
// file on macOS, each checked beside the path as written: without the code
// points HFS+ ignores in file names (zero-width joiners and marks,
// direction marks, the byte order mark: .g\u200cit is .git there, as
// git's own check for CVE-2014-9390 knows), and in both Unicode normal
// forms (APFS and HFS+ take an é composed or decomposed as one name).
// An ASCII path has none.
func spellings(p string) []string {
	ascii := true
	for i := 0; i < len(p); i++ {
		if p[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return nil
	}
	folded := strings.Map(func(r rune) rune {
		switch {
		case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
			return -1
		}
		return r
	}, p)
	var out []string
	for _, v := range [...]string{folded, norm.NFC.String(folded), norm.NFD.String(folded)} {
		if v != p && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// tildeUser returns a path that starts with ~NAME (another user's home, as
// the shell and Python's os.path.expanduser read it) with that home in
// its place; "" for any other path, or a user the system does not know.
func tildeUser(ws Workspace, p string) string {
	if !strings.HasPrefix(p, "~") || p == "~" || strings.HasPrefix(p, "~/") {
		return ""
	}
	name, rest, _ := strings.Cut(p[1:], "/")
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return ""
		}
	}
	home, err := ws.UserHome(name)
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, rest)
}

// varPath reports a path with a component that starts with a variable
// ($HOME/.ssh, ${XDG_CONFIG_HOME}/x): a tool that expands variables reads
// whatever the variable holds.
func varPath(p string) bool {
	for i := strings.IndexByte(p, '$'); i >= 0; {
		if (i == 0 || p[i-1] == '/') && i+1 < len(p) {
			if c := p[i+1]; c == '{' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
				return true
			}
		}
		j := strings.IndexByte(p[i+1:], '$')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// procPath reports a path under /proc, or one of the links into it under
// /dev (/dev/fd/N, /dev/stdin, /dev/stdout, /dev/stderr): /proc/self/cwd,
// /proc/PID/root and /dev/fd/N lead where the process that opens them has
// its folder and files, which warden cannot know (resolved in warden's own
// process they name warden's files), so such a path is computed.
func procPath(p string) bool {
	if p == "/proc" || strings.HasPrefix(p, "/proc/") || p == "/dev/fd" || strings.HasPrefix(p, "/dev/fd/") {
		return true
	}
	switch p {
	case "/dev/stdin", "/dev/stdout", "/dev/stderr":
		return true
	}
	return false
}

// cwd returns the folder relative paths of the call resolve against: the
// call's cwd, and within it the working folder a shell tool was given
// (workdir in OpenCode and Codex, directory in Gemini CLI). Only a shell
// tool's working folder moves it: a file tool resolves its paths from the
// host's folder whatever else its arguments hold (a workdir the host
// ignores must not move where warden looks; see altDirs).
//
// The folder is joined, not cleaned: a ".." after a symbolic link leads
// where the link's target's parent is, as chdir takes it (src/hooks/..
// is .git when src/hooks links to .git/hooks), and resolve follows it so;
// the path as written (cleanPath) is the folder cleaned as text, as
// Node's path.resolve takes it. Both are checked.
func (e *Engine) cwd(c *warden.ToolCall) string {
	return e.cwdKeys(c, e.pol.KindOf(c.Tool), anyWorkdirKey(c.Args))
}

// cwdKeys is cwd for a call of the tool kind whose arguments have
// (workdir) or have not a key of workdirKeys.
func (e *Engine) cwdKeys(c *warden.ToolCall, kind string, workdir bool) string {
	base := e.rootRaw
	if c.Cwd != "" {
		if filepath.IsAbs(c.Cwd) {
			base = c.Cwd
		} else {
			base = e.rootRaw + "/" + c.Cwd
		}
	}
	if kind != "shell" || !workdir {
		return base
	}
	for _, k := range workdirKeys {
		if d, ok := c.Args[k].(string); ok && d != "" {
			d = e.expandHome(d)
			if filepath.IsAbs(d) {
				return d
			}
			return base + "/" + d
		}
	}
	return base
}

// altDirs are the working folders a call that is not a shell call names
// (workdir, directory, cwd, working_directory, dir_path) other than the
// argument except: the host's file tools do not read them, but a tool
// warden does not know might. A relative path of the call is decided
// from the call's folder and from each of these.
func (e *Engine) altDirs(st *state, except string) []string {
	if st.kind == "shell" {
		return nil
	}
	var out []string
	for _, k := range workdirKeys {
		if k == except {
			continue
		}
		if d, ok := st.call.Args[k].(string); ok && d != "" {
			out = append(out, d)
		}
	}
	return out
}

// workdirKeys are the argument names of a shell tool's working folder.
var workdirKeys = [...]string{"workdir", "directory", "cwd", "working_directory", "dir_path"}

// anyWorkdirKey reports whether args has one of workdirKeys, looking at
// its few keys rather than for each of workdirKeys.
func anyWorkdirKey(args map[string]any) bool {
	if len(args) >= len(workdirKeys) {
		return true // look for each
	}
	for k := range args {
		if isWorkdirKey(k) {
			return true
		}
	}
	return false
}

// argKeys says what the call's argument names hold, read in one pass.
type argKeys struct {
	path    bool // a path argument (hasPathArgs)
	workdir bool // one of workdirKeys
}

// scanArgs is caseTwins of the call's arguments, which reads their names
// for argKeys in the same pass.
func (st *state) scanArgs() (string, string, bool) {
	v := st.call.Args
	st.keysRead = true
	var few [8]string
	n := 0
	var seen map[string]string
	for k, x := range v {
		st.keys.path = st.keys.path || isPathArg(k)
		st.keys.workdir = st.keys.workdir || isWorkdirKey(k)
		if a, b, ok := caseTwins(x); ok {
			st.keysRead = false // not every name was read
			return a, b, true
		}
		if !hasLetter(k) {
			continue
		}
		if len(v) <= len(few) {
			for _, other := range few[:n] {
				if strings.EqualFold(k, other) {
					st.keysRead = false
					return min(k, other), max(k, other), true
				}
			}
			few[n] = k
			n++
			continue
		}
		if seen == nil {
			seen = make(map[string]string, len(v))
		}
		f := fold.Key(k)
		if other, ok := seen[f]; ok {
			st.keysRead = false
			return min(k, other), max(k, other), true
		}
		seen[f] = k
	}
	return "", "", false
}

// argKeys reads the call's argument names once.
func (st *state) argKeys() argKeys {
	if !st.keysRead {
		st.keysRead, st.keys = true, argKeys{}
		for k := range st.call.Args {
			st.keys.path = st.keys.path || isPathArg(k)
			st.keys.workdir = st.keys.workdir || isWorkdirKey(k)
		}
	}
	return st.keys
}

func isWorkdirKey(k string) bool {
	for _, w := range workdirKeys {
		if k == w {
			return true
		}
	}
	return false
}

// expandHome replaces a leading "~" or "~/" with the home folder.
func (e *Engine) expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return e.home + p[1:]
	}
	return p
}

// resolve makes a path absolute and resolves it as the kernel does:
// components in order, each symbolic link followed before a ".." after it
// (src/hooks/../config is .git/config when src/hooks links to .git/hooks).
// A missing component ends the lookup; the rest is taken as written.
func (e *Engine) resolve(raw, base string) (abs, rel string, inside bool) {
	abs = e.evalPath(e.joinPath(raw, base))
	rel, inside = e.relTo(abs)
	return abs, rel, inside
}

// joinPath makes raw absolute ("~" expanded, relative to base) without
// cleaning it: ".." must be resolved after the links before it.
func (e *Engine) joinPath(raw, base string) string {
	p := e.expandHome(raw)
	if !filepath.IsAbs(p) {
		p = base + "/" + p
	}
	return p
}

// evalPath resolves an absolute path physically.
func (e *Engine) evalPath(p string) string { return e.evalPathHops(p, 0) }

func (e *Engine) evalPathHops(p string, hops int) string {
	// Start from the workspace root (resolved once at compile time) when
	// the path is written below it.
	cur, rest := "/", p
	for _, root := range [...]string{e.rootRaw, e.root} {
		if len(p) > len(root) && p[len(root)] == '/' && strings.HasPrefix(p, root) {
			cur, rest = e.root, p[len(root)+1:]
			break
		} else if p == root {
			return e.root
		}
	}
	missing := false
	for rest != "" {
		seg, more, _ := strings.Cut(rest, "/")
		rest = more
		switch seg {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := cur + "/" + seg
		if cur == "/" {
			next = "/" + seg
		}
		if missing {
			cur = next
			continue
		}
		fi, err := e.ws.Lstat(next)
		if err != nil {
			missing = true
			cur = next
			continue
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		target, err := e.ws.Readlink(next)
		if hops > 40 || err != nil {
			// A link loop: the system refuses it too; keep the path.
			cur = next
			continue
		}
		if !filepath.IsAbs(target) {
			target = cur + "/" + target
		}
		cur = e.evalPathHops(target, hops)
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

// cleanPath makes a path absolute and clean ("~", ".", "..") without
// resolving symlinks: the path as written, checked beside the resolved one.
// A backslash is an ordinary character in a file name here, as it is to
// the kernel.
func (e *Engine) cleanPath(raw, base string) string {
	p := e.expandHome(raw)
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
//
// The assignments before the command are part of it, and a program that is
// not the one PATH finds in the system folders is shown as written
// (./src/ls): a grant for `ls` is not a grant for it.
func commandText(c *shell.Command) string {
	var b strings.Builder
	for _, e := range c.Env {
		e = shell.Display(e)
		name, val, _ := strings.Cut(e, "=")
		b.WriteString(name)
		b.WriteByte('=')
		if val == "" || strings.ContainsAny(val, " \t\n'\"\\$`;&|<>(){}*?[]#~") {
			b.WriteString(shellQuote(val))
		} else {
			b.WriteString(val)
		}
		b.WriteByte(' ')
	}
	if c.System || c.Dynamic {
		b.WriteString(shell.Display(c.Prog))
	} else {
		b.WriteString(c.Args[0])
	}
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

// grantValue is the value a grant for the part holds (Part.GrantValue).
func (e *Engine) grantValue(st *state, p *part) string {
	tp := Part{Value: e.partValue(st, p)}
	if p.subject == warden.SubjectCommand {
		tp.Input = inputLine(&st.call, p.an, p.cmd)
		// As the session layer stores it (a secret kept redacted).
		return warden.RedactPart(tp.GrantValue(), warden.CommandLine(st.call.Args))
	}
	return tp.GrantValue()
}

// inputLine returns a shell call's command line when command i of its
// analysis may read its input from another part of the line: a pipe, a
// redirection, a here-document or here-string, a process substitution or
// a coprocess. What such a command does depends on that input (sh < x.sh,
// cat x.sh | sh, python3 - <<EOF ... EOF), which its normalised text does
// not show: a grant or an approval for it then covers the line as
// written, not every line with the command in it. The first command of a
// line that starts with a pipeline reads nothing from the line (git push
// origin main 2>&1 | tail): "" for it, and for a line without any of
// these.
func inputLine(c *warden.ToolCall, an *shell.Analysis, i int) string {
	v, ok := c.Args["command"]
	if !ok {
		v, ok = c.Args["cmd"]
	}
	if !ok {
		v = c.Args["chars"]
	}
	var line string
	switch v := v.(type) {
	case string:
		line = v
	case []any:
		words := make([]string, 0, len(v))
		for _, w := range v {
			s, _ := w.(string)
			words = append(words, s)
		}
		line = strings.Join(words, " ")
	}
	other := strings.Contains(line, "<") || strings.Contains(line, ">(") || strings.Contains(line, "coproc")
	if !other && !strings.Contains(line, "|") {
		return ""
	}
	if cmd := &an.Commands[i]; !other && i == 0 && cmd.Via == "" && cmd.Pipe >= 0 && cmd.Stage == 0 {
		return ""
	}
	return line
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
		// A grant names the host's tool, or a kind: then it covers the
		// tool of that kind on every host (docs/policy.md, "Grants").
		if g.Tool != c.Tool && !(policy.IsKind(g.Tool) && g.Tool == st.kind) || g.Role != c.Role || g.Session != "" && g.Session != c.Session {
			continue
		}
		if g.UsesLeft == 0 {
			continue
		}
		if g.Subject == warden.SubjectCall && g.Pattern == "*" {
			return g.ID // every call of the tool (grants add TOOL --all)
		}
		if g.Subject != p.subject {
			continue
		}
		if g.Pattern != "" {
			if e.grantPattern(st, g, p) {
				return g.ID
			}
			continue
		}
		if !computed {
			value, computed = e.grantValue(st, p), true
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

// under reports whether path p is dir or inside it, without building
// dir + "/".
func under(p, dir string) bool {
	return p == dir || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// underFold is under for warden's own files, ignoring case: on a file
// system that ignores it (macOS, Windows), WARDEN.yaml is warden.yaml.
func underFold(p, dir string) bool { return underFoldA(p, dir, isASCII(p) && isASCII(dir)) }

// underFoldA is underFold for callers that know whether both paths are
// ASCII (ascii), which spares a scan of each.
func underFoldA(p, dir string, ascii bool) bool {
	if len(p) >= len(dir) && (len(p) == len(dir) || p[len(dir)] == '/') && strings.EqualFold(p[:len(dir)], dir) {
		return true
	}
	// A letter another spelling of which takes more or fewer bytes (the
	// Kelvin sign, the long s: active_intentſ.yaml is active_intents.yaml
	// on APFS) is compared by its folded form.
	if ascii {
		return false
	}
	return under(foldLower(p), foldLower(dir))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// hasPathArgs reports whether any argument is one that paths or patches are
// read from (pathArgs). Ranging over a call's few arguments costs less
// than looking up each of the 19 names, and the hint spares most of them
// the map lookup.
func hasPathArgs(args map[string]any) bool {
	for k := range args {
		if isPathArg(k) {
			return true
		}
	}
	return false
}

// isPathArg reports a path argument's name.
func isPathArg(k string) bool {
	n := len(k)
	return n > 0 && pathArgHint[n&31]&(1<<(k[n-1]&31)) != 0 && pathArgs[k]
}

// twinKeys marks the BAD_INPUT of arguments with two keys that differ only
// in case.
const twinKeys = "one key"

// nulPath marks the BAD_INPUT of a path with a NUL byte in it.
const nulPath = "no NUL"

// caseTwins finds two keys of one object in the arguments, at any depth,
// that are equal but for case ("path" and "Path"). The engine reads an
// argument by its exact name, but a tool may not: Go's encoding/json, for
// one, fills a field from either spelling and keeps the last, so a server
// written with it could write the path warden did not look at.
func caseTwins(v any) (string, string, bool) {
	switch v := v.(type) {
	case map[string]any:
		// Few keys (nearly every call): compared pairwise, with no
		// allocation; more: by their folded form.
		var few [8]string
		n := 0
		var seen map[string]string
		for k, x := range v {
			if a, b, ok := caseTwins(x); ok {
				return a, b, true
			}
			if !hasLetter(k) {
				continue
			}
			if len(v) <= len(few) {
				for _, other := range few[:n] {
					if strings.EqualFold(k, other) {
						return min(k, other), max(k, other), true
					}
				}
				few[n] = k
				n++
				continue
			}
			if seen == nil {
				seen = make(map[string]string, len(v))
			}
			f := fold.Key(k)
			if other, ok := seen[f]; ok {
				return min(k, other), max(k, other), true
			}
			seen[f] = k
		}
	case []any:
		for _, x := range v {
			if a, b, ok := caseTwins(x); ok {
				return a, b, true
			}
		}
	}
	return "", "", false
}

// hasLetter reports a key that case could change: one with a letter, or
// any byte past ASCII.
func hasLetter(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}
