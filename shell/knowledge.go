package shell

import (
	"strings"

	"github.com/warden-run/warden/shell/progs"
)

// add records a simple command (env are the assignments written before it)
// and everything it runs in turn: the command a wrapper runs, the program
// or shell line an option or variable runs, the paths it writes and reads.
func (a *Analysis) add(env, args []string, depth int, via string, pipe, stage int) {
	if a.nest >= maxNest || len(a.Dirs) >= maxDirs {
		// Each level of a wrapper chain copies and reads the words after
		// it: a chain of thousands costs the square of the line.
		a.tooComplex()
		return
	}
	a.nest++
	defer func() { a.nest-- }()
	if len(args) == 0 {
		a.bare(env, depth, via, pipe, stage)
		return
	}
	if len(a.callEnv) > 0 {
		env = append(a.callEnv[:len(a.callEnv):len(a.callEnv)], env...)
	}
	prog := args[0]
	dynamic := IsDyn(prog)
	// Field by field: a composite literal of Command is built in a
	// temporary and copied.
	var c Command
	c.Args, c.Prog, c.Dynamic, c.Via, c.Pipe, c.Stage, c.Env = args[:len(args):len(args)], prog, dynamic, via, pipe, stage, env
	if dynamic {
		a.Commands = append(a.Commands, c)
		return
	}
	c.Prog = base(prog)
	c.System = systemProg(prog)
	pe := lookupProg(c.Prog)
	info := pe.kinds
	if spec := pe.spec; spec != nil {
		// The flags and operands live in the analysis's buffers: no
		// allocation once they have grown.
		r := a.result()
		defer a.release()
		r.Flags, r.Ops, r.Vals = a.flagBuf[len(a.flagBuf):], a.opBuf[len(a.opBuf):], a.valBuf[len(a.valBuf):]
		spec.Parse(r, c.Args, false)
		if len(c.Args) == 2 && (c.Args[1] == "--version" || c.Args[1] == "--help") {
			// It only prints (or refuses the option): nothing to read.
			r.Risk, r.RiskReads = "", false
			r.Effects, r.Repo, r.Tree = r.Effects[:0], progs.RepoNone, false
		}
		a.flagBuf = grow(a.flagBuf, r.Flags)
		a.opBuf = grow(a.opBuf, r.Ops)
		a.valBuf = grow(a.valBuf, r.Vals)
		c.Known, c.Flags, c.Ops, c.Sub = true, r.Flags[:len(r.Flags):len(r.Flags)], r.Ops[:len(r.Ops):len(r.Ops)], r.Sub
		c.Vals = r.Vals[:len(r.Vals):len(r.Vals)]
		c.Reads = readOnlyCall(&c, r, &pe)
		a.Commands = append(a.Commands, c)
		if len(c.Env) > 0 || r.Risk != "" {
			a.envRisk(&a.Commands[len(a.Commands)-1], spec, r)
		}
		if c.Prog == "git" || r.RunsGit {
			a.Commands[len(a.Commands)-1].RunsGit = true
			a.gitElsewhere(&a.Commands[len(a.Commands)-1], r)
		}
		if len(r.Effects) > 0 || r.Repo != progs.RepoNone {
			a.effects(c.Prog, r, info&(kWrap|kShell) != 0, depth, pipe, stage)
		}
		// Words handed to another program (python x.py ARGS, go run PKG
		// ARGS) may name a private file as surely as cat's operands do.
		a.privateReads(r.Passed)
		if len(r.Runs) > 0 {
			a.add(env, r.Runs, depth, c.Prog+" "+strings.TrimSpace(r.Sub), pipe, stage)
		}
	} else {
		c.Flags, c.Ops = genericWords(c.Prog, c.Args[1:])
		a.Commands = append(a.Commands, c)
		if len(c.Env) > 0 {
			a.envRisk(&a.Commands[len(a.Commands)-1], nil, nil)
		}
		if !free[c.Prog] {
			a.privateReads(c.Args[1:])
		}
	}
	if why := evaluatesNames(c.Prog, c.Args[1:]); why != "" {
		setRisk(&a.Commands[len(a.Commands)-1], why)
		a.evaluatedWords(c.Prog, c.Args[1:], depth)
	}
	if len(a.rebound) > 0 && !c.Dynamic {
		if p, ok := a.rebound[c.Prog]; ok && via != "hash -p" {
			// hash -p P NAME: NAME runs P, with NAME's words.
			words := append([]string{p}, c.Args[1:]...)
			a.add(env, words, depth, "hash -p", pipe, stage)
		}
	}
	if pe.setsVars {
		if name := assignsDangerous(c.Prog, c.Args[1:]); name != "" {
			setRisk(&a.Commands[len(a.Commands)-1], c.Prog+" assigns "+name+", which changes which program later commands run or what they load")
		}
	}
	if (c.Prog == "source" || c.Prog == ".") && len(c.Args) > 1 && IsDyn(c.Args[1]) {
		// source <(cmd), source $F: the shell runs text warden cannot
		// read.
		a.computed("(the file "+c.Prog+" runs, computed at run time: "+Display(c.Args[1])+")", c.Prog)
	}
	if sourcesStdin(c.Prog, c.Args) && pipe >= 0 && stage > 0 {
		a.pipedShell(len(a.Commands)-1, depth, pipe, stage)
	}
	if info == 0 {
		return
	}
	n := len(a.Commands) - 1
	if c.Prog == "set" && setsOption(c.Args[1:], 'k', "keyword") {
		setRisk(&a.Commands[n], "set -k makes every NAME=VALUE word of a later command a variable of its environment (set -k; git diff GIT_EXTERNAL_DIFF=x)")
	}
	if c.Prog == "set" && setsOption(c.Args[1:], 'a', "allexport") {
		setRisk(&a.Commands[n], "set -a puts every later assignment in the environment of the programs run (set -a; TAR_OPTIONS=...; tar ...)")
	}
	if info&kFree != 0 && a.Commands[n].Risk == "" {
		a.Commands[n].Free = true
	}
	if info&kCd != 0 && len(c.Ops) > 1 && c.Prog == "cd" {
		// cd OLD NEW (zsh, ksh) enters $PWD with OLD replaced by NEW:
		// cd rtws other leads to ../other. bash refuses it.
		a.Dirs = append(a.Dirs, "-")
		a.cdOther = true
	} else if info&kCd != 0 && len(c.Ops) > 0 {
		d := c.Ops[len(c.Ops)-1]
		a.Dirs = append(a.Dirs, d)
		if c.Prog == "cd" && len(c.Args) == 2 && !IsDyn(d) && d != "-" && !strings.HasPrefix(d, "~") {
			a.cdPlain++
		} else {
			a.cdOther = true
		}
	} else if info&kCd != 0 {
		a.cdOther = true
		// cd alone goes home; pushd alone swaps with the folder before.
		if c.Prog == "cd" {
			a.Dirs = append(a.Dirs, "~")
		} else {
			a.Dirs = append(a.Dirs, "-")
		}
	}
	if info&kCd != 0 {
		a.cdSeen = true
	}
	if c.Prog == "hash" {
		a.hashRebinds(c.Args[1:])
	}
	if info&kLookup != 0 && len(c.Args) > 1 && !(c.Prog == "shopt" && harmlessShopt(c.Args[1:])) && !(c.Prog == "hash" && lookupHash(c.Args[1:])) {
		setRisk(&a.Commands[n], c.Prog+" can change which program a later command name runs")
	}
	if info&kShell != 0 && pipe >= 0 && stage > 0 && !hasC(c.Args) {
		a.pipedShell(n, depth, pipe, stage)
	}
	if info&(kShell|kWrap|kSpecial) != 0 {
		a.unwrap(c.Prog, c.Args, env, depth, pipe, stage)
		if a.Commands[n].Risk == "" && pureWrapper(c.Prog, c.Args) {
			// It only runs the command in its words, which is judged
			// with all its words: bash -lc 'ls' is judged as ls.
			a.Commands[n].Free = true
		}
	}
	if info&kPatch != 0 && len(c.Args) > 1 {
		a.patch(c.Args[1])
	}
}

// sourcesStdin reports source or . reading its commands from standard
// input (source /dev/stdin): as a shell does, with what it is given on
// it (a pipe, a here-document).
func sourcesStdin(prog string, args []string) bool {
	if prog != "source" && prog != "." || len(args) < 2 {
		return false
	}
	switch args[1] {
	case "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		return true
	}
	return false
}

// patch records the files a patch applied by Codex's apply_patch (or its
// applypatch alias) writes and deletes, read as Codex reads them.
func (a *Analysis) patch(body string) {
	if IsDyn(body) {
		a.addWrite(Write{Path: Dyn + "(the files of a computed patch)", Op: "apply_patch"})
		return
	}
	files := PatchFiles(body)
	if len(files) == 0 {
		a.addWrite(Write{Path: Dyn + "(a patch warden cannot read)", Op: "apply_patch"})
	}
	for _, f := range files {
		a.addWrite(Write{Path: f.Path, Op: "apply_patch", Delete: f.Kind == "delete"})
	}
}

// result returns a cleared Result for one command; commands reached while
// it is in use (a shell line an option runs) get their own. release gives
// it back.
func (a *Analysis) result() *progs.Result {
	if a.nres == len(a.results) {
		a.results = append(a.results, new(progs.Result))
	}
	r := a.results[a.nres]
	a.nres++
	effects, vals := r.Effects[:0], r.Vals[:0]
	*r = progs.Result{Effects: effects, Vals: vals}
	return r
}

func (a *Analysis) release() { a.nres-- }

// grow extends buf by the words appended after its end (in place when they
// fit, as append left them).
func grow[T any](buf, added []T) []T {
	if len(added) == 0 {
		return buf
	}
	spare := buf[len(buf):cap(buf)]
	// The parse may have dropped words at the start (chmod's mode is no
	// operand): added then begins a few elements into the spare room.
	for i := 0; i < len(spare) && i < 8; i++ {
		if &spare[i] == &added[0] && i+len(added) <= len(spare) {
			return buf[:len(buf)+i+len(added)]
		}
	}
	if len(spare) >= len(added) {
		// A slice of its own, perhaps further into the buffer: a fresh
		// buffer of the same size, so that nothing a command keeps is
		// written over. (Doubling here grew it without bound: 20 lines of
		// chmod 777 x made it 16 million long.)
		return make([]T, 0, cap(buf))
	}
	// append moved them to a new array the command keeps; the next
	// command starts a larger buffer.
	return make([]T, 0, 2*cap(buf)+16)
}

// What warden must do for a program besides matching it: one map lookup
// per command.
const (
	kFree    = 1 << iota // a builtin without side effects
	kShell               // a shell: -c strings and piped input
	kWrap                // runs the command in its operands
	kSpecial             // eval, find -exec, su -c
	kCd                  // changes the working folder
	kPatch               // applies the patch in its operand or input
	kLookup              // changes what later command names run (alias, hash -p, enable -f)
)

var progKinds = func() map[string]uint8 {
	m := map[string]uint8{}
	for n := range free {
		m[n] |= kFree
	}
	for n, ok := range shells {
		if ok {
			m[n] |= kShell
		}
	}
	for n := range wrappers {
		m[n] |= kWrap
	}
	for _, n := range []string{"eval", "find", "su", "trap", "alias", "script", "tmux", "hyperfine", "nix-shell", "sg", "expect", "gdb", "perf", "direnv", "zip"} {
		m[n] |= kSpecial
	}
	for n := range runsGiven {
		m[n] |= kSpecial
	}
	// alias is not among them: its value is analysed as the line it
	// stands for (unwrap), a computed one is a computed command.
	for _, n := range []string{"hash", "enable", "shopt"} {
		m[n] |= kLookup
	}
	m["cd"] |= kCd
	m["pushd"] |= kCd
	m["apply_patch"] |= kPatch
	m["applypatch"] |= kPatch
	return m
}()

// Known reports whether warden knows a program's options (it has a table
// for it, or it is a builtin without side effects): an allow rule for a
// program it does not know trusts every option as written.
func Known(prog string) bool { return progs.Lookup(prog) != nil || free[prog] }

// free lists the builtins that change nothing outside the shell: they need
// no allow rule (a deny or ask rule still meets them).
var free = map[string]bool{"type": true, "hash": true, "cd": true, "pushd": true, "popd": true, "true": true, "false": true, ":": true,
	"test": true, "[": true, "set": true, "exit": true, "return": true, "read": true, "shift": true,
	"unset": true, "dirs": true, "break": true, "continue": true}

// base returns the base name of a program path with backslash escapes
// already removed: /usr/bin/rm -> rm.
func base(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 && i < len(p)-1 {
		return p[i+1:]
	}
	return p
}

// systemProg reports whether a program as written is the one PATH finds in
// the system folders.
func systemProg(p string) bool {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return true
	}
	switch p[:i] {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin":
		return true
	}
	return false
}

// lookupEnv are the variables that change which program runs, what it
// loads or where it reads its configuration, for any program.
// integerVars are bash's variables with the integer attribute from the
// start: every assignment to one is evaluated as arithmetic, which runs
// the command substitutions in the value (OPTIND='a[$(cmd)]', read
// OPTIND, for OPTIND in ...).
var integerVars = map[string]bool{"OPTIND": true, "RANDOM": true, "SRANDOM": true, "HISTCMD": true}

var lookupEnv = map[string]bool{"PATH": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
	"LD_BIND_NOW": false, "BASH_ENV": true, "ENV": true, "SHELLOPTS": true, "BASHOPTS": true, "PS4": true,
	"PROMPT_COMMAND": true, "IFS": true, "HOME": true, "XDG_CONFIG_HOME": true, "GCONV_PATH": true,
	"NODE_OPTIONS": true, "NODE_PATH": true, "PYTHONSTARTUP": true, "PYTHONPATH": true, "PYTHONHOME": true,
	"PERL5OPT": true, "PERL5LIB": true, "PERLLIB": true, "RUBYOPT": true, "RUBYLIB": true, "GOFLAGS": true,
	"GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true, "GIT_EDITOR": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true,
	"GIT_ASKPASS": true, "GIT_CONFIG_COUNT": true, "GIT_CONFIG_PARAMETERS": true, "GIT_EXEC_PATH": true,
	"GIT_DIR": true, "GIT_CONFIG": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_TEMPLATE_DIR": true,
	"EDITOR": true, "VISUAL": true, "PAGER": true, "BROWSER": true, "SHELL": true, "SUDO_ASKPASS": true,
	"SSH_ASKPASS": true, "CC": true, "CXX": true, "RUSTC_WRAPPER": true, "RUSTFLAGS": true, "MAKEFLAGS": true,
	"NPM_CONFIG_SCRIPT_SHELL": true, "npm_config_script_shell": true, "JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true,
	"DYLD_INSERT_LIBRARIES": true, "TMPDIR": false,
	// cd and pushd look a relative folder up in CDPATH (bash(1)): CDPATH=~
	// cd .aws enters ~/.aws where warden sees ./.aws.
	"CDPATH": true,
	// GNU programs stop reading options at the first operand (getopt(3)):
	// head src/a.go -n .env then reads .env, which warden reads as -n's
	// value.
	"POSIXLY_CORRECT": true,
	// less, the pager git and man run, reads commands and an input
	// preprocessor from these (less(1): LESS='+!cmd', LESSOPEN='|cmd %s').
	"LESS": true, "LESSOPEN": true, "LESSCLOSE": true, "LESSKEY": true, "LESSKEYIN": true, "LESSEDIT": true,
	"MANPAGER": true,
	// OpenSSL loads the engines and providers its configuration names
	// (shared libraries) in every program that speaks TLS (curl, git,
	// wget); SSLKEYLOGFILE makes them append TLS secrets to a file.
	"OPENSSL_CONF": true, "OPENSSL_MODULES": true, "OPENSSL_ENGINES": true, "SSLKEYLOGFILE": true,
	// gpg (git commit -S) reads its configuration and gpg-agent's
	// (pinentry-program) from GNUPGHOME; python runs the .pth files of
	// PYTHONUSERBASE's site-packages (pytest is python).
	"GNUPGHOME": true, "PYTHONUSERBASE": true, "PYTHONPLATLIBDIR": true}

// safeEnv are variables any program may be given: they change language,
// colours, time zone and the like.
func safeEnv(name string) bool {
	switch name {
	case "LANG", "LANGUAGE", "LC_ALL", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
		"CLICOLOR_FORCE", "CI", "DEBUG", "VERBOSE", "TMPDIR", "USER", "LOGNAME":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// dangerousName reports whether assigning name can change which program a
// later command runs or what it loads.
func dangerousName(name string) bool {
	if lookupEnv[name] || integerVars[name] {
		return true
	}
	for _, p := range []string{"LD_", "GIT_CONFIG_", "GIT_TRACE", "BASH_FUNC_", "DYLD_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// envRisk checks the assignments before a command. A variable the
// program's table names is read as the table says (GIT_EXTERNAL_DIFF runs
// a program, GIT_TRACE writes a file); one that changes lookup or loading
// for any program stops an allow; so does a variable in the program's own
// namespace (GIT_*, npm_config_*) that its table does not list.
func (a *Analysis) envRisk(c *Command, spec *progs.Spec, r *progs.Result) {
	for _, e := range c.Env {
		name, val, _ := strings.Cut(e, "=")
		name = strings.TrimPrefix(name, Dyn)
		name = strings.TrimSuffix(name, "+")
		if spec != nil && spec.ReadEnv(r, name, val) {
			continue
		}
		if tempVars[name] {
			a.tempDir(c, name, val)
			continue
		}
		switch {
		case safeEnv(name):
		case dangerousName(name):
			setRisk(c, "variable "+name+" changes which program runs or what it loads")
		case spec != nil && spec.OwnsEnv(name):
			setRisk(c, "variable "+name+" is a setting of "+c.Prog+" that warden does not know")
		}
	}
	if r != nil && r.Risk != "" && c.Risk == "" {
		c.Risk, c.RiskReads = r.Risk, r.RiskReads
	}
}

// tempVars name a folder programs write files of their own naming in:
// temporary files (sort spills its runs there), the XDG cache, state,
// data and runtime folders (go build's cache under XDG_CACHE_HOME when
// GOCACHE is unset), and Python's bytecode caches (PYTHONPYCACHEPREFIX).
var tempVars = map[string]bool{"TMPDIR": true, "TMP": true, "TEMP": true, "TEMPDIR": true,
	"XDG_CACHE_HOME": true, "XDG_STATE_HOME": true, "XDG_DATA_HOME": true, "XDG_RUNTIME_DIR": true, "PYTHONPYCACHEPREFIX": true}

// tempDir records TMPDIR=DIR (and the others of tempVars) before a command
// as a write into DIR: the program may create files there, under names of
// its own, with content from its input (TMPDIR=.git/hooks sort wrote into
// the hooks folder). The system's temporary folders need no rule; a folder
// computed at run time stops an allow.
func (a *Analysis) tempDir(c *Command, name, val string) {
	switch {
	case IsDyn(val):
		setRisk(c, "variable "+name+" is computed at run time, and the program writes its temporary files there")
	case val == "", val == "/tmp", val == "/var/tmp", strings.HasPrefix(val, "/tmp/"), strings.HasPrefix(val, "/var/tmp/"):
	default:
		a.addWrite(Write{Path: val, Op: name})
	}
}

func setRisk(c *Command, why string) {
	if c.Risk == "" || c.RiskReads {
		c.Risk, c.RiskReads = why, false
	}
}

// bare records a statement made only of assignments (FOO=bar). Assigning a
// harmless name needs no rule; assigning one that changes what later
// commands run (PATH, LD_PRELOAD, ...) is a part no rule can allow.
func (a *Analysis) bare(env []string, depth int, via string, pipe, stage int) {
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		name = strings.TrimSuffix(strings.TrimPrefix(name, Dyn), "+")
		c := Command{Args: []string{e}, Prog: name + "=", Via: via, Pipe: pipe, Stage: stage}
		if dangerousName(name) || strings.HasPrefix(name, "GIT_") {
			c.Risk = "assigning " + name + " changes which program later commands run or what they load"
		} else {
			c.Free = true
		}
		a.Commands = append(a.Commands, c)
	}
}

// effects turns what the program's table found into parts: programs and
// shell lines it runs, paths it writes, removes and reads. wrapper: the
// program runs a command in its operands, or is a shell (progKinds's
// kWrap or kShell).
func (a *Analysis) effects(prog string, r *progs.Result, wrapper bool, depth int, pipe, stage int) {
	wrapper = wrapper || prog == "find"
	var sources []string
	copies := prog == "cp" || prog == "mv" || prog == "install" || prog == "ln" || prog == "rsync" || prog == "scp"
	for _, e := range r.Effects {
		switch e.Arg {
		case progs.Output:
			// A file the program names itself, in the folder it runs in:
			// checked against the protected and private paths.
			a.addRead(Write{Path: e.Val, Op: prog + " " + e.Via, Maybe: true})
		case progs.Read, progs.List, progs.PatFile:
			w := Write{Path: e.Val, Op: prog + " " + e.Via, Top: e.Top}
			if e.Arg == progs.Read && r.Tree && r.Spec != nil && (e.Via == r.Spec.Name || e.Via == "tar") {
				w.Tree, w.SkipHidden, w.Filter, w.Follow, w.GitIgnores = true, r.SkipHidden, r.Filter, r.Follow, r.GitIgnores
			}
			if e.Match != nil {
				w.Tree, w.Match = true, e.Match
			}
			a.addRead(w)
		}
		if copies && e.Via == prog && e.Arg != progs.Plain {
			sources = append(sources, e.Val)
		}
	}
	if r.Repo != progs.RepoNone {
		// git grep searches from the working folder down; the others
		// read the whole repository.
		a.addRead(Write{Path: ".", Op: prog + " " + r.Sub, Repo: r.Repo, RepoOps: r.RepoOps, RepoWhole: r.RepoWhole, RepoDiff: r.RepoDiff,
			Top: r.Sub != "grep"})
	}
	if copies && len(sources) > 0 && !hasTarget(r) {
		// The destination is the last operand; the others are sources.
		sources = sources[:len(sources)-1]
	}
	if prog == "ln" {
		a.linkTargets(r, sources)
	}
	for _, e := range r.Effects {
		op := e.Via
		if !strings.HasPrefix(op, prog) {
			op = prog + " " + e.Via
		}
		switch e.Arg {
		case progs.Write:
			w := Write{Path: e.Val, Op: op, TreeWrite: r.TreeWrite && r.Spec != nil && e.Via == r.Spec.Name}
			if copies && e.Via == prog {
				w.Sources = sources
			}
			a.addWrite(w)
		case progs.Delete:
			a.addWrite(Write{Path: e.Val, Op: op, Delete: true})
		case progs.Dir:
			a.Dirs = append(a.Dirs, e.Val)
			// env -C DIR, sudo -D DIR: what runs next runs there.
			if e.Val != "." && e.Val != "./" {
				a.cdSeen, a.cdOther = true, true
			}
		case progs.Target:
			a.addWrite(Write{Path: e.Val, Op: op, Sources: targetSources(r, prog)})
			for _, s := range sources {
				if !IsDyn(s) && !IsDyn(e.Val) {
					a.addWrite(Write{Path: strings.TrimSuffix(e.Val, "/") + "/" + base(strings.TrimSuffix(s, "/")), Op: op})
				} else {
					a.addWrite(Write{Path: Dyn + e.Val + "/...", Op: op})
				}
			}
		case progs.Exec, progs.Shell:
			if wrapper || e.Via == prog {
				continue // the shell package reads what wrappers run
			}
			via := prog + " " + e.Via
			if IsDyn(e.Val) {
				a.Commands = append(a.Commands, Command{Args: []string{e.Val}, Prog: e.Val, Dynamic: true, Via: via, Pipe: pipe, Stage: stage})
				continue
			}
			a.line(e.Val, depth+1, via)
		}
		if e.Flag == progs.Extract {
			a.addWrite(Write{Path: Dyn + "(files named by the input of " + prog + ")", Op: op})
		}
	}
}

// linkTargets records where the links ln -s makes lead, as the kernel
// resolves them: a relative target from the folder the link is in, not
// from the folder ln runs in. ln -s hooks src/g makes src/g lead to
// src/hooks, which may itself be a link (into .git/hooks): what is later
// written through src/g is written there, so the target is checked as a
// write where it leads (beside the operand as written). The link is the
// destination (ln -s T L), or a name inside it when it is a folder
// (ln -s T DIR, ln -s -t DIR T...); both are checked. ln -r computes the
// link text from the target as given, which the operand itself is.
func (a *Analysis) linkTargets(r *progs.Result, sources []string) {
	symbolic := false
	for _, f := range r.Flags {
		switch f {
		case "-s":
			symbolic = true
		case "-r":
			return
		}
	}
	if !symbolic {
		return
	}
	var dests []string
	for _, e := range r.Effects {
		if e.Arg == progs.Target && e.Via != "ln" {
			dests = append(dests, e.Val) // -t DIR: links inside DIR
		}
	}
	if len(dests) == 0 {
		// The destination is the last operand: the link itself, or the
		// folder it is made in.
		last := ""
		for _, e := range r.Effects {
			if e.Via == "ln" && e.Arg == progs.Write {
				last = e.Val
			}
		}
		if last == "" || len(sources) == 0 {
			return
		}
		dir := "."
		if i := strings.LastIndexByte(strings.TrimSuffix(last, "/"), '/'); i >= 0 {
			dir = last[:i+1]
		}
		dests = append(dests, dir, last)
	}
	for _, d := range dests {
		for _, s := range sources {
			switch {
			case IsDyn(d) || IsDyn(s):
				a.addWrite(Write{Path: Dyn + Display(d) + "/" + Display(s), Op: "ln -s (where the link leads)"})
			case strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~"):
				// Absolute: checked as the operand already.
			default:
				a.addWrite(Write{Path: strings.TrimSuffix(d, "/") + "/" + s, Op: "ln -s (where the link leads)"})
			}
		}
	}
}

func hasTarget(r *progs.Result) bool {
	for _, e := range r.Effects {
		if e.Arg == progs.Target {
			return true
		}
	}
	return false
}

// gitElsewhere: git run in another folder (git -C DIR, or after cd DIR)
// uses the repository it finds there, and a repository's configuration
// (core.fsmonitor, a bare repository's config) can run any program. The
// workspace's own .git is protected; a repository an agent could have
// written is not vouched for.
func (a *Analysis) gitElsewhere(c *Command, r *progs.Result) {
	for _, f := range r.Flags {
		if f == "--bare" {
			setRisk(c, "git --bare takes the working folder for the repository, whose configuration an agent could have written")
			return
		}
	}
	// git after a cd: gitAfterCd, once the whole line is read.
	for _, e := range r.Effects {
		if e.Arg == progs.Dir && e.Val != "." && e.Val != "./" {
			setRisk(c, "git "+e.Via+" "+Display(e.Val)+" uses the repository there, whose configuration could run programs")
			return
		}
	}
}

// targetSources returns the operands of cp -t DIR SRC...: every one a
// source.
func targetSources(r *progs.Result, prog string) []string {
	var out []string
	for _, e := range r.Effects {
		if e.Via == prog && e.Arg != progs.Target && e.Arg != progs.Plain {
			out = append(out, e.Val)
		}
	}
	return out
}

// privateReads records every literal word of a program warden has no table
// for as a possible read, checked only against the paths no agent may
// read: python x.py ~/.ssh/id_rsa reads the key as surely as cat does.
func (a *Analysis) privateReads(words []string) {
	if tailOf(words, a.privWords) {
		// The tail of the words recorded last (a wrapper's command,
		// sudo env nice CMD ARGS, hands on the same words): recorded.
		// Without this a chain of wrappers records the square of the line.
		return
	}
	a.privWords = words
	for _, w := range words {
		if IsDyn(w) || w == "" {
			continue
		}
		if w[0] == '-' {
			if _, v, ok := strings.Cut(w, "="); ok && v != "" {
				a.Reads = append(a.Reads, Write{Path: v, Op: "argument", Private: true, Maybe: true})
			}
			continue
		}
		a.Reads = append(a.Reads, Write{Path: w, Op: "argument", Private: true, Maybe: true})
	}
}

// tailOf reports whether the literal words of words are the last literal
// words of prev (computed words, which privateReads skips, aside).
func tailOf(words, prev []string) bool {
	i, j := len(words)-1, len(prev)-1
	for {
		for i >= 0 && (IsDyn(words[i]) || words[i] == "") {
			i--
		}
		for j >= 0 && (IsDyn(prev[j]) || prev[j] == "") {
			j--
		}
		switch {
		case i < 0:
			return prev != nil
		case j < 0 || words[i] != prev[j]:
			return false
		}
		i--
		j--
	}
}

// addRead records a path that is read; the standard streams are not.
func (a *Analysis) addRead(w Write) {
	if devExempt(w.Path) || w.Path == "-" {
		return
	}
	a.Reads = append(a.Reads, w)
}

// pipedShell handles a shell reading its commands from a pipe: a literal
// text echoed or printed into it is analysed as the commands it is; any
// other input is unknown code, so no rule can allow the shell.
func (a *Analysis) pipedShell(n, depth, pipe, stage int) {
	for i := n - 1; i >= 0; i-- {
		p := &a.Commands[i]
		if p.Pipe != pipe || p.Stage != stage-1 || p.Via != a.Commands[n].Via {
			continue
		}
		if (p.Prog == "echo" || p.Prog == "printf") && len(p.Ops) > 0 {
			if s, ok := joinLit(p.Ops); ok {
				if p.Prog == "printf" {
					s = strings.NewReplacer(`\n`, "\n", `\t`, "\t", "%%", "%").Replace(s)
				}
				a.Commands[n].Risk = "it runs the commands piped into it"
				a.line(s, depth+1, "pipe")
				return
			}
			if p.Prog == "echo" {
				a.partial(p.Ops, depth, "pipe")
				return
			}
		}
		break
	}
	setRisk(&a.Commands[n], "it runs the commands piped into it, which warden cannot see")
}

// genericWords splits the words of a program warden has no table for into
// canonical flags and operands: clusters are split (-rf is -r -f) unless
// the program takes single-dash words (find -name, java -jar).
func genericWords(prog string, args []string) (flags, ops []string) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if IsDyn(w) {
			ops = append(ops, w)
			continue
		}
		if w == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if len(w) > 1 && w[0] == '-' {
			flags = canonFlags(prog, w, flags)
			continue
		}
		ops = append(ops, w)
	}
	return flags, ops
}

// evaluatesNames returns why a builtin that takes variable names runs
// code that its words do not show, or "". bash evaluates the subscript of
// an array element's name as arithmetic, and arithmetic runs the command
// substitutions it meets, also in the value of a variable it names:
// read 'a[$(cmd)]', printf -v 'a[$(cmd)]' x, unset 'a[$(cmd)]',
// [ -v 'a[$(cmd)]' ] and declare 'a[$(cmd)]'=1 each run cmd. let
// evaluates its words as arithmetic (x='a[$(cmd)]'; let x runs cmd), and
// declare -i and -n make later assignments and uses of a variable do so.
// A name computed at run time may be any of these.
func evaluatesNames(prog string, words []string) string {
	const sub = "it names an array element, whose subscript bash evaluates as arithmetic (a[$(cmd)] runs cmd)"
	named := func(w string) string {
		// A computed word keeps its text: its name is the part before =.
		name, _, _ := strings.Cut(Display(w), "=")
		if name == "" || strings.ContainsAny(name, "[$`\"'\\") {
			return sub
		}
		return ""
	}
	switch prog {
	case "let":
		for _, w := range words {
			if IsDyn(w) || strings.ContainsFunc(w, func(r rune) bool { return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) {
				return "let evaluates arithmetic, in which a variable's value can run commands (x='a[$(cmd)]'; let x)"
			}
		}
	case "test", "[":
		for i, w := range words {
			// A computed word may be -v: [ "$o" 'a[$(cmd)]' ].
			if (w == "-v" || w == "-R" || IsDyn(w)) && i+1 < len(words) {
				if next := words[i+1]; IsDyn(next) || strings.ContainsAny(next, "[$`") {
					return sub
				}
			}
		}
	case "read", "mapfile", "readarray", "unset", "getopts", "wait", "printf":
		for i, w := range words {
			switch {
			case (prog == "mapfile" || prog == "readarray") && strings.HasPrefix(w, "-C"):
				return prog + " -C runs its callback as a shell command"
			case prog == "printf" && i == 0 && IsDyn(w):
				return "printf's first word is computed, and may be -v, which assigns the variable the next word names"
			case prog == "read" && strings.HasPrefix(w, "-") && !IsDyn(w):
				// read -raNAME; in read -ra NAME the name is the next
				// word, checked as one.
				if name, ok := readArray(w); ok && name != "" {
					if why := named(name); why != "" {
						return why
					}
				}
			case prog == "printf" && (w == "-v" && i+1 < len(words)):
				if why := named(words[i+1]); why != "" {
					return why
				}
			case prog == "printf" && strings.HasPrefix(w, "-v") && len(w) > 2:
				if why := named(w[2:]); why != "" {
					return why
				}
			case prog == "printf":
			case prog == "getopts" && i == 0:
			case strings.HasPrefix(w, "-") && !IsDyn(w):
				// Options: read -a NAME, wait -p NAME take the next word.
			default:
				if why := named(w); why != "" {
					return why
				}
			}
		}
	case "declare", "typeset", "local", "export", "readonly":
		for _, w := range words {
			if !IsDyn(w) && strings.HasPrefix(w, "-") || !IsDyn(w) && strings.HasPrefix(w, "+") {
				if strings.ContainsAny(w[1:], "in") {
					return prog + " " + w + " makes later uses of the variable arithmetic or a reference, which can run commands its value holds"
				}
				continue
			}
			if why := named(w); why != "" {
				return why
			}
		}
	}
	return ""
}

// readArray reads an option cluster of read: whether it has -a, and the
// array's name when it follows the a in the same word (read -raNAME). The
// letters before the a must take no value (read -da is -d a).
func readArray(w string) (name string, ok bool) {
	j := strings.IndexByte(w, 'a')
	if len(w) < 2 || w[0] != '-' || j < 1 || strings.ContainsAny(w[1:j], "dinNptu") {
		return "", false
	}
	return w[j+1:], true
}

// setsVars are the builtins that assign the variables their words name
// (bash(1): read NAME, read -a NAME, mapfile NAME, getopts OPTS NAME, let
// EXPR, printf -v NAME).
var setsVars = map[string]bool{"read": true, "mapfile": true, "readarray": true, "getopts": true, "let": true, "printf": true}

// assignsDangerous returns a variable a read, mapfile, getopts, let or
// printf -v call may assign whose name changes what later commands run
// (read PATH <<< src), or a description when the name is computed.
func assignsDangerous(prog string, words []string) string {
	for i, w := range words {
		if IsDyn(w) {
			if prog == "printf" && (i == 0 || words[i-1] != "-v") {
				continue
			}
			return "a variable named at run time"
		}
		if prog == "let" {
			for _, t := range strings.FieldsFunc(w, func(r rune) bool {
				return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
			}) {
				if dangerousName(t) || strings.HasPrefix(t, "GIT_") {
					return t
				}
			}
			continue
		}
		name := w
		if prog == "printf" {
			switch {
			case i > 0 && words[i-1] == "-v":
			case strings.HasPrefix(w, "-v") && len(w) > 2:
				name = w[2:]
			default:
				continue
			}
		} else if strings.HasPrefix(w, "-") && len(w) > 2 {
			name, _ = readArray(w) // read -aNAME, read -raNAME
		}
		if dangerousName(name) || strings.HasPrefix(name, "GIT_") {
			return name
		}
	}
	return ""
}

// setsOption reports whether set's words turn on an option: by its
// letter (set -k, set -ek), or by its long name after -o, abbreviated or
// not (set -o keyword, set -eo allexport); a computed word may be either.
// With set -k (keyword) assignment words anywhere in a command are placed
// in its environment, so a word warden reads as an operand (git diff
// GIT_EXTERNAL_DIFF=./x) sets a variable; with set -a (allexport) every
// later assignment reaches the programs' environment.
func setsOption(words []string, letter byte, long string) bool {
	for i, w := range words {
		switch {
		case IsDyn(w):
			return true
		case w == "--" || w == "-":
			return false
		case w == "-o" || w == "+o":
			// +o turns it off: the words after may still turn it on.
			if i+1 < len(words) && (IsDyn(words[i+1]) || words[i+1] != "" && strings.HasPrefix(long, words[i+1]) && w == "-o") {
				return true
			}
		case len(w) > 1 && w[0] == '-' && w[1] != '-':
			if strings.IndexByte(w, letter) > 0 {
				return true
			}
			if strings.IndexByte(w, 'o') > 0 && i+1 < len(words) && words[i+1] == long {
				return true
			}
		}
	}
	return false
}

// shoptHarmless are the shopt options that change how words are globbed
// or how errors end the shell, and nothing about which program a name
// runs (expand_aliases is among them: an alias's value is analysed as a
// line).
var shoptHarmless = map[string]bool{"extglob": true, "nullglob": true, "globstar": true, "dotglob": true,
	"nocaseglob": true, "failglob": true, "nocasematch": true, "lastpipe": true, "inherit_errexit": true,
	"expand_aliases": true, "globasciiranges": true, "checkwinsize": true, "histappend": true}

// harmlessShopt reports shopt words that only set, unset or print options
// of shoptHarmless.
func harmlessShopt(args []string) bool {
	for _, w := range args {
		switch {
		case IsDyn(w):
			return false
		case w == "-s" || w == "-u" || w == "-q" || w == "-p":
		case strings.HasPrefix(w, "-"):
			return false
		case !shoptHarmless[w]:
			return false
		}
	}
	return true
}

// pureWrapper reports a shell or wrapper whose words warden reads whole
// and that does nothing but run the command they hold (judged on its
// own): a shell with options it reads and a literal -c string (no
// --rcfile), command, builtin, env with assignments and -i only, time
// without -o, nice and timeout; command -v and -V only look a name up.
func pureWrapper(prog string, args []string) bool {
	if shells[prog] {
		s := readShell(args)
		if s.risk != "" || !s.hasC || IsDyn(s.cmd) || len(s.inits) > 0 {
			return false
		}
		for _, w := range args[1:] {
			if strings.HasPrefix(w, "--rcfile") || strings.HasPrefix(w, "--init-file") {
				return false
			}
		}
		return true
	}
	w := wrappers[prog]
	if w == nil {
		return false
	}
	rest, opts, unsure := skipOpts(args[1:], w)
	if unsure || len(rest) == 0 {
		return prog == "command" && !unsure && len(opts) > 0 && onlyOpts(opts, "-v", "-V")
	}
	switch prog {
	case "command":
		return onlyOpts(opts, "-p", "-v", "-V")
	case "builtin":
		return true
	case "env":
		return onlyOpts(opts, "-i")
	case "time":
		return onlyOpts(opts, "-p", "-f", "-v", "-q")
	case "nice":
		return onlyOpts(opts, "-n", "-NUM")
	case "timeout":
		return onlyOpts(opts, "-k", "-s", "--preserve-status", "--foreground", "-v")
	}
	return false
}

func onlyOpts(opts []wval, names ...string) bool {
	for _, o := range opts {
		found := false
		for _, n := range names {
			found = found || o.name == n
		}
		if !found {
			return false
		}
	}
	return true
}

// lookupHash reports hash words that only look names up, print or forget
// them: no -p PATH, which makes a name run PATH.
func lookupHash(args []string) bool {
	for _, w := range args {
		if IsDyn(w) || w == "--" || strings.HasPrefix(w, "-") && strings.ContainsAny(w, "p") {
			return false
		}
		if strings.HasPrefix(w, "-") && strings.Trim(w[1:], "rldt") != "" {
			return false
		}
	}
	return true
}

// evaluatedWords analyses the command substitutions in the words bash
// evaluates as arithmetic or as a command (an array subscript named to
// read, test -v, let, printf -v, mapfile -C's callback): in
// read 'a[$(rm -rf x)]' bash runs rm -rf x. The command stays computed.
func (a *Analysis) evaluatedWords(prog string, words []string, depth int) {
	for i, w := range words {
		if (prog == "mapfile" || prog == "readarray") && strings.HasPrefix(w, "-C") {
			cb := strings.TrimPrefix(w, "-C")
			if cb == "" && i+1 < len(words) {
				cb = words[i+1]
			}
			if cb != "" && !IsDyn(cb) {
				a.partialLine(cb, depth, prog+" -C")
			}
			continue
		}
		if IsDyn(w) || !strings.Contains(w, "$(") && !strings.Contains(w, "`") {
			continue
		}
		// The word's text, read as the shell reads the subscript.
		a.partialLine(": "+w, depth, prog)
	}
}

// hashRebinds records hash -p PATH NAME...: each NAME then runs PATH.
func (a *Analysis) hashRebinds(args []string) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !strings.HasPrefix(w, "-") || !strings.Contains(w, "p") || IsDyn(w) {
			continue
		}
		p := w[strings.IndexByte(w, 'p')+1:]
		if p == "" && i+1 < len(args) {
			i++
			p = args[i]
		}
		if p == "" || IsDyn(p) {
			return
		}
		if a.rebound == nil {
			a.rebound = map[string]string{}
		}
		for _, n := range args[i+1:] {
			if !IsDyn(n) && !strings.HasPrefix(n, "-") {
				a.rebound[n] = p
			}
		}
		return
	}
}
