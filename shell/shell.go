// Package shell turns a shell command line into the simple commands it would
// run and the paths it would write, so that a policy can judge each of them.
//
// It sees through lists and pipelines, subshells and blocks, command
// substitution ($(...) and backticks), process substitution, `bash -c` /
// `sh -c` / `eval` strings, here-documents fed to a shell, and wrappers that
// run another command (sudo, env, command, nice, nohup, timeout, time, xargs,
// find -exec, ...). Quoting is removed; quoted text is data.
//
// Parsing uses mvdan.cc/sh for the general case and a small exact lexer for
// lines made only of plain words and the operators ; && || | (a fuzz test
// checks that both agree).
//
// Stability: this package is internal to warden in spirit. Its API serves
// the engine and changes with it in any release; a Go program judges a
// command line through package engine (or client), not through this one.
package shell

import (
	"errors"
	"strings"
	"sync"

	"github.com/warden-run/warden/shell/progs"
)

// Dyn marks a word whose value is computed at run time ($x, $(...), ${...}).
// A dynamic word is stored as Dyn followed by its source text.
const Dyn = "\x00"

// IsDyn reports whether a word is computed at run time.
func IsDyn(w string) bool { return len(w) > 0 && w[0] == 0 }

// Display returns a word as it should be shown to a person.
func Display(w string) string {
	if IsDyn(w) {
		return w[1:]
	}
	return w
}

// Command is one simple command the line would run.
type Command struct {
	// Args are the words with quoting removed; Args[0] is the program as
	// written. A computed word starts with Dyn.
	Args []string
	// Prog is the base name of the program: "rm" for /bin/rm, \rm or "rm".
	Prog string
	// Dynamic reports that the program itself is computed ($x -rf build);
	// such a command can never be allowed by a rule.
	Dynamic bool
	// Via names how the command was reached: "" at top level, or "sudo",
	// "bash -c", "xargs", "find -exec", "eval", "heredoc", ...
	Via string
	// Pipe identifies the pipeline the command is a stage of (-1: none);
	// Stage is its position in it. Commands reached through a wrapper share
	// the wrapper's stage.
	Pipe, Stage int
	// Env are the assignments written before the command (NAME=VALUE);
	// they are part of it, never dropped before matching.
	Env []string
	// Flags are the options used, in canonical spelling (-r for
	// --recursive, -f for --force), and Ops the operands with the values
	// of options removed, as the program's grammar reads them.
	Flags, Ops []string
	// Sub is the subcommand ("push", "mod tidy") for programs that have
	// them.
	Sub string
	// RunsGit: the command runs git in the repository found from its
	// working folder (git itself, go build's version control stamp).
	RunsGit bool
	// Vals are the values given to its options, by canonical spelling
	// (kubectl apply --dry-run=client): a pattern that names a value
	// matches only that value.
	Vals []progs.OptVal
	// Known reports that warden has a table for the program; Risk, when
	// set, says why no allow rule can vouch for the command: an option or
	// variable the table does not know, or one that runs another program.
	Known bool
	Risk  string
	// RiskReads: Risk is only that a computed word could be an option
	// that reads a file (progs.Result.RiskReads): no allow rule vouches
	// for the command, but it is no computed command.
	RiskReads bool
	// System reports that the program is the one PATH finds in the system
	// folders: written without a slash, or as a path in /bin, /usr/bin,
	// /usr/local/bin, /sbin, /usr/sbin or /usr/local/sbin.
	System bool
	// Reads reports a command whose every word warden's tables know to
	// only read and print (readOnly): with no Risk, its kind is safe.
	Reads bool
	// Free marks a builtin without side effects (cd, true, test, read,
	// set -e, exit, ...): it needs no allow rule.
	Free bool
	// Func names the function whose body holds the command (the
	// outermost one), "" outside a function (see Uncalled).
	Func string
}

// Write is a path the line would write, create, delete or read.
type Write struct {
	Path string // as written, quoting removed; Dyn-prefixed when computed
	// Op names what writes it: ">", ">>", "tee", "rm", "mv", "cp", ...
	Op string
	// Delete reports that the path is removed (rm, unlink, mv source, ...).
	Delete bool
	// Private reports a read found only by looking at every word of a
	// program warden has no table for: it is checked against the paths
	// protected from reading, and nothing else.
	Private bool
	// Maybe marks a word given to a program warden has no table for: the
	// program may read it, and may write it, so it is checked against the
	// private and the protected paths, and nothing else.
	Maybe bool
	// Tree marks a read of a folder whole, everything below it included
	// (grep -r DIR, cp -r DIR, tar -c DIR); SkipHidden leaves out entries
	// whose name starts with a dot (rg without --hidden).
	Tree, SkipHidden bool
	// Follow: a folder read whole is read through the links inside it.
	Follow bool
	// GitIgnores: a folder read whole is read as git reads its work tree
	// (git add, git grep --untracked): untracked files its ignore files
	// name are left out.
	GitIgnores bool
	// Top: the path is relative to the top of the repository's work tree,
	// not the working folder (git add -A, the ":/" pathspec magic).
	Top bool
	// Repo marks git printing the content of files its repository keeps
	// (git grep, git diff, git log -p, git show; see progs.Repo): the
	// files under the operands of RepoOps that name paths, or under Path
	// (the working folder, or with Top the whole work tree) when none
	// does or RepoWhole. An operand that names no path is a revision,
	// which reaches the history.
	Repo      progs.Repo
	RepoOps   []string
	RepoWhole bool
	RepoDiff  bool // only the files that changed (progs.Result.RepoDiff)
	// TreeWrite marks a write of a folder whole, everything below it
	// included (chmod -R DIR): a protected or private path inside is
	// written.
	TreeWrite bool
	// Filter, when set, tells which entries of a folder read whole are
	// read, by base name (grep --include, --exclude, --exclude-dir).
	Filter func(name string, dir bool) bool
	// Match, when set, tells which files of a folder read whole are read,
	// by their path below it (git's pathspec globs: *env reads src/.env).
	Match func(rel string) bool
	// Sources are what a copy, move or link puts at this destination
	// (cp SRC... DEST): into it, under their names, when it is a folder.
	Sources []string
	// Func names the function whose body writes or reads the path, as
	// Command.Func.
	Func string
}

// Analysis is the result of analysing one command line.
type Analysis struct {
	Commands []Command
	Writes   []Write
	// Reads are the paths the line would read or list: operands and
	// options of programs warden knows, and input redirections.
	Reads []Write
	// Dirs are the folders commands of the line change into (cd DIR,
	// git -C DIR): a relative path may be resolved in any of them.
	Dirs []string
	// GitCd, when set, is the one folder the line enters with a plain cd
	// before it runs git (or go build, which runs git): the line changes
	// folders in no other way, has no loop or function that could enter
	// it twice, and the folder is written literally. Whether git may run
	// there depends on the repository found from it, which the engine
	// checks; any other change of folders makes such git a risk.
	GitCd string
	// CdFirst, when set, is the folder of the plain `cd DIR` a line
	// starts with when every later command runs after it with && (cd src
	// && make && cd ..): the line's relative paths are all in DIR.
	CdFirst string
	// Globs are the words written with an unquoted glob character
	// (src/*.go, .gi?/config): bash replaces them with the files that
	// match, so a path among them is checked as each file it matches.
	Globs []string
	// Err is set when the line does not parse (or nests too deep). Such a
	// line can never be allowed by a rule.
	Err error

	pipes   int
	buf     []string       // backing store for Args
	flagBuf []string       // backing store for Flags and Ops
	valBuf  []progs.OptVal // backing store for Vals
	opBuf   []string
	results []*progs.Result // per nesting level of add
	nres    int
	cdSeen  bool // a cd or pushd came earlier in the line
	// cdPlain counts the plain `cd DIR` of the line with a literal DIR;
	// cdOther marks any other change of folders (pushd, cd -, env -C,
	// find -execdir, ...) or a loop or function that may repeat a cd.
	cdPlain int
	cdOther bool
	// braceWords counts the words brace expansion made in this line, up to
	// maxLineBraceWords; past it every further expansion is computed.
	braceWords int
	// nest is how many commands add is analysing at once: a wrapper's
	// command (sudo env nice CMD) is added while its wrapper is; see
	// maxNest.
	nest int
	// privWords are the words privateReads recorded last.
	privWords []string
	noFast    bool // tests: always use the full parser
	// callEnv are assignments the tool call itself makes for the command
	// (a shell tool's env map): every command of the line inherits them,
	// as if written before it (NAME=VALUE cmd).
	callEnv []string
	// rebound are the names hash -p made run another program (hash -p
	// /bin/rm ls: ls runs /bin/rm).
	rebound map[string]string
	// used: a has held an analysis since its last Reset (a new or reset
	// Analysis is empty, and Analyze need not empty it again: Put resets).
	used bool
}

// SetCallEnv sets the assignments (NAME=VALUE) a tool call makes for the
// command it runs (the env map of the Responses API's and Codex's
// local_shell): every command of the line the next Analyze or AnalyzeArgv
// reads inherits them, and they are judged as assignments written before
// each command. Reset clears them.
func (a *Analysis) SetCallEnv(env []string) { a.callEnv = env }

func (a *Analysis) pushArg(w string) { a.buf = append(a.buf, w) }

// IsGlob reports whether a word was written with an unquoted glob
// character somewhere in the line.
func (a *Analysis) IsGlob(w string) bool {
	for _, g := range a.Globs {
		if g == w {
			return true
		}
	}
	return false
}

// ErrTooDeep is returned for lines that nest shells within shells too deep.
var ErrTooDeep = errors.New("command nests shells too deeply to analyse")

const maxDepth = 16

// ErrTooComplex is returned for a line whose shape would make the analysis
// slow or large: a word with more than maxBraceOpen brace characters, a
// chain of more than maxNest wrappers (sudo sudo sudo ...), more than
// maxDirs changes of folder, more than maxGlobs glob words. No real
// command needs them; such a line is refused (never allowed), at once,
// whatever its length.
var ErrTooComplex = errors.New("command is too complex to analyse (hundreds of braces in one word, a long chain of wrappers such as sudo env nice, or hundreds of changes of folder or glob patterns in one line): split it into shorter, plainer commands")

// The bounds of ErrTooComplex.
const (
	maxBraceOpen = 128
	maxNest      = 32
	maxDirs      = 256
	maxGlobs     = 256
)

// tooComplex marks the line as too complex to analyse.
func (a *Analysis) tooComplex() {
	if a.Err == nil {
		a.Err = ErrTooComplex
	}
}

var pool = sync.Pool{New: func() any { return new(Analysis) }}

// Get returns an empty Analysis from a pool; Put gives it back. Together
// they let a caller analyse lines without allocating in the steady state.
func Get() *Analysis { return pool.Get().(*Analysis) }

// Put returns a to the pool. a must not be used afterwards.
func Put(a *Analysis) {
	a.Reset()
	pool.Put(a)
}

// Reset empties a for reuse, keeping its buffers.
func (a *Analysis) Reset() {
	// What the buffers held is dropped (the line's words are no longer
	// kept alive), with loops: a line has a few words, and a clear's call
	// of the runtime cost more than the stores.
	for i := 0; i < len(a.Commands); i++ {
		a.Commands[i] = Command{}
	}
	a.Commands = a.Commands[:0]
	a.Writes = a.Writes[:0]
	a.Reads = a.Reads[:0]
	a.Dirs = a.Dirs[:0]
	a.Globs = a.Globs[:0]
	a.buf = clearStrings(a.buf)
	a.flagBuf = clearStrings(a.flagBuf)
	for i := 0; i < len(a.valBuf); i++ {
		a.valBuf[i] = progs.OptVal{}
	}
	a.valBuf = a.valBuf[:0]
	a.opBuf = clearStrings(a.opBuf)
	a.Err = nil
	a.pipes = 0
	a.nres = 0
	a.cdSeen = false
	a.cdPlain, a.cdOther, a.GitCd, a.CdFirst = 0, false, "", ""
	a.braceWords = 0
	a.nest = 0
	a.privWords = nil
	a.callEnv = nil
	a.rebound = nil
	a.used = false
}

// begin empties a for a new analysis, unless it is empty already (new, or
// reset by Put), keeping the call's environment (SetCallEnv).
func (a *Analysis) begin() {
	if a.used {
		env := a.callEnv
		a.Reset()
		a.callEnv = env
	}
	a.used = true
}

// clearStrings empties s, dropping the strings it held.
func clearStrings(s []string) []string {
	for i := 0; i < len(s); i++ {
		s[i] = ""
	}
	return s[:0]
}

// Analyze analyses a command line into a new Analysis.
func Analyze(line string) *Analysis {
	a := new(Analysis)
	a.Analyze(line)
	return a
}

// Analyze analyses line into a, replacing what a held.
func (a *Analysis) Analyze(line string) {
	a.begin()
	a.line(line, 0, "")
	if a.Err == nil && len(a.Commands) == 0 && strings.TrimSpace(line) == "" {
		a.Err = errors.New("empty command")
	}
	if a.Err == nil && a.cdSeen {
		a.cdChain(line, 0, "")
	}
	a.gitAfterCd()
}

// gitAfterCd: with a cd anywhere in the line, any git of the line may run
// after it in the folder it enters (a loop runs its body again after a
// cd that comes later in the text: while true; do git status; cd x;
// done), where a repository an agent wrote could run programs.
func (a *Analysis) gitAfterCd() {
	if !a.cdSeen {
		return
	}
	simple := (a.cdPlain == 1 || a.CdFirst != "") && !a.cdOther
	for i := range a.Commands {
		c := &a.Commands[i]
		if !c.RunsGit || c.Risk != "" {
			continue
		}
		if simple {
			// The engine checks the repository found from the folder.
			for _, d := range a.Dirs {
				if d != "." && d != "./" {
					a.GitCd = d
				}
			}
			if a.CdFirst != "" {
				a.GitCd = a.CdFirst
			}
			continue
		}
		what := "git runs"
		if c.Prog != "git" {
			what = c.Prog + " runs git"
		}
		setRisk(c, what+" in a line that changes folders, in a folder whose repository configuration could run programs")
	}
}

// line analyses one shell line at the given shell-nesting depth.
func (a *Analysis) line(src string, depth int, via string) {
	if depth > maxDepth {
		a.Err = ErrTooDeep
		return
	}
	if !a.noFast && a.fast(src, depth, via) {
		return
	}
	a.parse(src, depth, via)
}

// newPipe returns a new pipeline id.
func (a *Analysis) newPipe() int {
	a.pipes++
	return a.pipes - 1
}

// AnalyzeArgv analyses a command given as an argument vector (as in
// ["bash", "-lc", "make test"]): the vector is one simple command, and
// whatever it runs in turn is analysed as usual.
func (a *Analysis) AnalyzeArgv(argv []string) {
	a.begin()
	if len(argv) == 0 {
		a.Err = errors.New("empty command")
		return
	}
	args := make([]string, len(argv))
	copy(args, argv)
	a.add(nil, args, 0, "", -1, 0)
	if a.Err == nil && a.cdSeen && shells[base(args[0])] && len(a.Commands) > 1 {
		// ["bash", "-lc", "cd src && make && cd .."], as Codex sends it.
		if s := readShell(args); s.hasC && s.risk == "" && !IsDyn(s.cmd) {
			a.cdChain(s.cmd, 1, args[0]+" -c")
		}
	}
	a.gitAfterCd()
}
