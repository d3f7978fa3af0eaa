package engine

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/shell"
	"github.com/warden-run/warden/shell/progs"
)

// shellParts analyses the command of a shell call; it returns the number
// of parts it decided.
func (e *Engine) shellParts(st *state) int {
	c := &st.call
	v, ok := st.command, st.hasCommand
	if !ok {
		v, ok = c.Args["command"]
	}
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
	if !st.argKeys().env {
		// No env or environment argument: nothing for callEnv to read.
	} else if env, why := callEnv(c.Args); why != "" {
		st.check("env", item{effect: warden.Deny, code: warden.CodeUnparsable, extra: why})
		return 1
	} else if len(env) > 0 {
		a.SetCallEnv(env)
	}
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
	var sh string
	if st.argKeys().shell {
		sh, _ = c.Args["shell"].(string)
	}
	if sh != "" {
		switch sh {
		case "bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/bin/zsh", "/bin/dash", "/usr/bin/bash", "/usr/bin/zsh", "/usr/bin/sh":
		default:
			st.check("shell", item{effect: warden.Ask, code: warden.CodeUnparsable, extra: "the command is run by the shell program " + sh + ", which warden does not know"})
		}
	}
	gitChecked := false
	var configChecked []string
	st.uncalled = e.notShadowing(a.Uncalled())
	if st.uncalled != nil {
		e.definitionPart(st, a)
	}
	for i := range a.Commands {
		if fn := a.Commands[i].Func; fn != "" && st.uncalled[fn] {
			// A body that does not run now: only its denials count.
			c := &a.Commands[i]
			p := part{subject: warden.SubjectCommand, an: a, cmd: i, destr: true, dynamic: c.Dynamic, computed: c.Risk != "" && !c.RiskReads}
			e.uncalledPart(st, fn, func() {
				e.evalPart(st, &p)
				if c.Prog == "warden" || c.Prog == "warden-hook" {
					e.wardenCommand(st, c)
				}
			})
			continue
		}
		// One rule for what warden cannot read (docs/policy.md, "Computed
		// commands"): a command with a risk runs text or writes a target
		// warden cannot read, as a computed program ($X) does, so it is a
		// computed command: no allow rule and no default can allow it.
		cmd := &a.Commands[i]
		// A command whose every word the tables know to only read and
		// print is of kind safe (docs/policy.md, "Known read-only
		// commands"): default.safe decides it when no rule does.
		safe := cmd.Reads && cmd.Risk == "" && !cmd.Dynamic && cmd.System
		var p part
		p.subject, p.an, p.cmd, p.destr, p.dynamic, p.computed = warden.SubjectCommand, a, i, !safe, cmd.Dynamic, cmd.Risk != "" && !cmd.RiskReads
		e.evalPart(st, &p)
		if p.dynamic || p.computed {
			e.computedIntent(st)
		}
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
		if c := &a.Commands[i]; hasProgConfig(c.Prog) && progConfigs[c.Prog].bad != nil && !slices.Contains(configChecked, c.Prog) {
			configChecked = append(configChecked, c.Prog)
			e.configHere(st, c, a.Dirs)
		}
	}
	// Folders the line changes into: relative paths may be resolved there.
	cds := a.Dirs
	if a.CdFirst != "" {
		// cd DIR && ...: every later command runs in DIR (the cds at its
		// end run after the rest), so relative paths are resolved there
		// alone.
		e.dirParts(st, []string{a.CdFirst})
		base := st.cwd()
		defer func() { st.dir = base }()
		if filepath.IsAbs(a.CdFirst) {
			st.dir = a.CdFirst
		} else {
			st.dir = base + "/" + a.CdFirst
		}
		cds = nil
	}
	// A command a rule denies settles the call: its writes would only
	// change which reason is given, so they are not resolved (no I/O),
	// and what they do to git's ignore files is read for a trace only.
	if st.best.effect == warden.Deny && st.best.code == warden.CodeRuleDeny && len(a.Writes) > 0 {
		if st.tr != nil {
			st.ignoresWritten = writesIgnoreFile(a.Writes)
			st.tr.Checks = append(st.tr.Checks, Check{Name: "writes", Effect: warden.Deny, Code: warden.CodeRuleDeny,
				Detail: "rule " + st.best.rule.id + " already denies the command; the writes are shown but do not count"})
			e.traceOnly(st, func() { e.writeParts(st, a, cds) })
		}
		return len(a.Commands)
	}
	st.ignoresWritten = writesIgnoreFile(a.Writes)
	e.writeParts(st, a, cds)
	if a.CdFirst == "" {
		e.dirParts(st, cds)
	}
	for _, r := range a.Reads {
		if r.Func != "" && st.uncalled[r.Func] {
			e.uncalledPart(st, r.Func, func() { e.readPart(st, r, cds) })
			continue
		}
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
			st.check("read", e.confinedRead(st, item{effect: warden.Ask, code: warden.CodeUnparsable, subject: shell.Display(r.Path),
				extra: "the line reads a path computed at run time (" + shell.Display(r.Path) + "), which may be a private path"}))
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

// writeParts decides the paths a shell line writes.
func (e *Engine) writeParts(st *state, a *shell.Analysis, cds []string) {
	for _, w := range a.Writes {
		if w.Func != "" && st.uncalled[w.Func] {
			e.uncalledPart(st, w.Func, func() { e.writePart(st, a, w, cds) })
			continue
		}
		e.writePart(st, a, w, cds)
	}
}

// writePart checks one write of a line.
func (e *Engine) writePart(st *state, a *shell.Analysis, w shell.Write, cds []string) {

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

// computedIntent: a computed command may write anything, so where intents
// are required for writes it needs an active intent, as a write does.
// Which files it writes is unknown, so the intent's scope cannot be
// checked: the command already asks (or is denied).
func (e *Engine) computedIntent(st *state) {
	if st.call.IntentID != "" || !st.needsIntent(&part{subject: warden.SubjectPath, write: true, vkind: "write"}) {
		return
	}
	st.check("intent", item{effect: warden.Deny, code: warden.CodeMissingIntent, subject: st.call.Tool})
}

// callEnv reads a shell call's environment map (env, environment: the
// Responses API's and Codex's local_shell): assignments the command runs
// with, judged as NAME=VALUE written before each command of the line. A
// map that is not one of text values cannot be read.
func callEnv(args map[string]any) (env []string, why string) {
	for _, key := range []string{"env", "environment"} {
		v, ok := args[key]
		if !ok || v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, "the call's " + key + " is not a map of variables to values"
		}
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			s, ok := m[n].(string)
			if !ok {
				return nil, "the value of " + n + " in the call's " + key + " is not text"
			}
			if n == "" || strings.ContainsAny(n, "= \t\n$`'\"") {
				return nil, "the call's " + key + " names a variable " + strconv.Quote(n) + " that a shell cannot assign"
			}
			env = append(env, n+"="+s)
		}
	}
	return env, ""
}
