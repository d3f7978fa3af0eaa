// Package progs is warden's knowledge of the programs agents run: for each
// program (and each of its subcommands) the options it takes, which of them
// take a value, which run another program or read or write a path, which
// environment variables change what it runs, and what its operands are.
//
// The tables are data, one file per family of programs (coreutils.go,
// git.go, lang.go, js.go, misc.go), each entry citing the version and the
// manual or --help it was taken from; gitrepo.go says what of a git
// repository a command prints, fetched.go which package manager
// commands fetch and run a package the call names, awksed.go the
// commands and files of awk and sed programs, and writes.go the files
// subcommands write that their call does not name. They are reviewed like code: an allow
// rule for a program is only as wide as its entry, because a call that uses
// an option the entry does not list, or one that runs another program, is
// never allowed by a rule (see Parse).
//
// An entry is written in a small notation:
//
//	Opts: "-r|-R|--recursive -f|--force -o=W|--output=W --color[=] -e=P"
//
// Aliases are joined by "|" and the first spelling is the canonical one. A
// value is required ("=") or optional and attached only ("[=]"); the letter
// after "=" says what the value is (Arg). A letter after ":" gives an
// option without a value an effect (Flag). Operands are given as roles,
// for example "R... W" (every operand read but the last, which is written).
//
// Stability: this package is internal to warden in spirit. Its tables and
// notation serve packages shell and engine and change with them in any
// release; a Go program does not import it.
package progs

import (
	"fmt"
	"iter"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Arg is what an option's value, or an operand, stands for.
type Arg byte

const (
	Plain   Arg = 0   // data: a number, a name, a pattern
	Read    Arg = 'R' // a path that is read
	Write   Arg = 'W' // a path that is written or created
	Delete  Arg = 'D' // a path that is removed (or moved away)
	List    Arg = 'L' // a path that is listed or inspected (ls, stat)
	Dir     Arg = 'C' // the folder the program works in (git -C, tar -C)
	Exec    Arg = 'X' // a program that is run
	Shell   Arg = 'S' // a shell command line that is run
	Pattern Arg = 'P' // the pattern or script, given as an option: the first operand is then a path
	PatFile Arg = 'Q' // a file holding the pattern or script (read); as Pattern
	Target  Arg = 'T' // a target folder: every operand is a source copied into it
	Config  Arg = 'K' // git's -c name=value: checked against the harmless names
	Flags   Arg = 'F' // options for another entry (GOFLAGS, --node-options)
	URL     Arg = 'U' // a URL whose last path segment names the file written (wget)
	Unsafe  Arg = '!' // an option known to run code or change too much to judge
	Command Arg = 'Y' // the words up to ";" or "+" are a command (find -exec); the shell package reads it
	AtFile  Arg = '@' // data, or a file read when it starts with "@" (curl -d @FILE)
	Pair    Arg = '2' // two values: a name, then a path read (jq --rawfile NAME FILE)
	Pair2   Arg = 'V' // two plain values (jq --arg NAME VALUE)
	Tool    Arg = 'G' // go's -gcflags/-ldflags: flags for the compiler or linker, checked against the harmless ones
	Output  Arg = 'O' // a file written where the call runs, named by the program (go build's executable): checked against the protected paths
)

// Flag is the effect of an option that takes no value.
type Flag byte

const (
	NoEffect Flag = 0
	InPlace  Flag = 'I' // read operands are rewritten (sed -i)
	Extract  Flag = 'E' // writes files named by its input (tar -x): computed writes
	RunsCode Flag = 'X' // runs a program the call does not name (git --ext-diff is fine; this is for worse)
	Removes  Flag = 'D' // the operands are removed (shred -u)
	Remote   Flag = 'U' // writes files named after its URL operands (curl -O)
	Creates  Flag = 'W' // writes an output the call does not name (go test -c)
)

// Opt is one option of an entry.
type Opt struct {
	Canon    string // canonical spelling: "-r", "--force-with-lease"
	Value    bool   // takes a value
	Optional bool   // the value is optional and only attached (--color[=WHEN], -i[SUFFIX])
	Arg      Arg
	Sub      string // for Flags: the entry the value's options belong to
	Flag     Flag
}

// Spec is the knowledge of one program or subcommand.
type Spec struct {
	Name   string // program name; aliases separated by spaces ("python python3")
	Source string // where the facts come from: version and manual or --help
	// Style is how options are written: "gnu" (clusters of short options,
	// long options that may be abbreviated, options anywhere before "--"),
	// "go" (single-dash words, -name=value or -name value, no clusters),
	// "posix" (like gnu, but options end at the first operand).
	Style string
	Opts  string
	// Operands gives the roles of the operands: space-separated Arg letters
	// ("-" for Plain); a role followed by "..." repeats. "R... W": every
	// operand read but the last, which is written.
	Operands string
	// Env lists environment variables the program reads that matter, in
	// the option notation without dashes: "GIT_EXTERNAL_DIFF=X GIT_DIR=C".
	// A variable with no "=" is harmless.
	Env string
	// EnvPrefix lists the prefixes of the variables the program reads as
	// its own settings ("GIT_", "npm_config_"): a variable with such a
	// prefix that Env does not list is unknown, and stops an allow. "*"
	// means every variable is the program's (make reads them all as make
	// variables). Other variables are not the program's concern.
	EnvPrefix string
	// Subs are the subcommands (git push, go test); SubsOnly means the
	// first operand must be one of them.
	Subs     []*Spec
	SubsOnly bool
	// Inherit: the subcommands also take the program's own options
	// (kubectl -n NS get pods and kubectl get pods -n NS).
	Inherit bool
	// OptsUntil: with Style "posix", options are read up to this many
	// operands (ssh reads them again after the host); 0 means 1.
	OptsUntil int
	// Rest: after this many operands, the remaining words belong to another
	// program (go run PKG ARGS...); 0 means none.
	Rest int
	// RestAfter is an option word after which the remaining words belong to
	// another program (go test -args).
	RestAfter string
	// Digits: a cluster of digits is an option (head -5, git log -3).
	Digits bool
	// Words: the program takes no options; every word is an operand
	// (test, [, true).
	Words bool
	// NoNeg: long options cannot be negated with --no- (only where the
	// program says so; by default --no-NAME is NAME's negation).
	NoNeg bool
	// Special handles what the notation cannot say (chmod's modes, dd's
	// operands); it runs after options are read.
	Special func(r *Result, words []string)
	// lbl is the name messages give: the first of Name's aliases, after
	// the program's for a subcommand ("npm run", not "run run-script").
	lbl string

	short shortSet
	long  map[string]*Opt
	longs []string // sorted long names, for abbreviations
	env   map[string]*Opt
	subs  map[string]*Spec
	roles []Arg
	rep   int // index of the repeating role, -1 if none
	risky bool
	// riskyWrite: one of its options writes, removes, runs a program or
	// changes the folder (risky counts options that only read, too).
	riskyWrite bool
	// wordOpts: long holds a single-dash word option (find -name) or a
	// + option, the only names a word like -rf can be looked up as whole;
	// without one, option skips that lookup.
	wordOpts bool
	// first is firstName(Name), set at compile.
	first string
}

var table = map[string]*Spec{}

// The tables are compiled at first use (Lookup, Names), not when the
// program starts: compiling every entry takes milliseconds, and most runs
// of warden (warden sandbox, the MCP proxy, every command but the
// deciding ones) never read them. loaders are the table files'
// registration functions, in the order the files' init functions ran
// when they were eager (file name, then place in the file); a new table
// file adds its function here (TestLoadersCoverTableFiles checks).
var (
	loadOnce sync.Once
	loaders  = []func(){
		initCoreutils,
		initGit,
		initJS,
		initLangGo, initLangTools, initLangPython,
		initMisc, initMiscSpecial,
		initWrites,
	}
)

// load compiles the tables once.
func load() {
	loadOnce.Do(func() {
		for _, f := range loaders {
			f()
		}
	})
}

// register compiles entries into the table; it panics on a malformed entry
// (a programming error, caught by the package's tests at once).
func register(specs ...*Spec) {
	for _, s := range specs {
		if err := s.compile(); err != nil {
			panic(fmt.Sprintf("progs: %s: %v", s.Name, err))
		}
		for _, n := range strings.Fields(s.Name) {
			if table[n] != nil {
				panic("progs: " + n + " registered twice")
			}
			table[n] = s
		}
	}
}

// label is the name of the program or subcommand in messages.
func (s *Spec) label() string {
	if s.lbl != "" {
		return s.lbl
	}
	return firstName(s.Name)
}

// firstName is the first of a Name's aliases.
func firstName(name string) string {
	first, _, _ := strings.Cut(name, " ")
	return first
}

// Lookup returns the entry of a program by base name, or nil when warden
// has no knowledge of it.
func Lookup(prog string) *Spec {
	load()
	return table[prog]
}

// Names returns the names of every program with an entry, sorted.
func Names() []string {
	load()
	out := make([]string, 0, len(table))
	for n := range table {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Sub returns the subcommand entry named n, or nil.
func (s *Spec) Sub(n string) *Spec { return s.subs[n] }

// Subcommands returns the names of the subcommands, sorted.
func (s *Spec) Subcommands() []string {
	out := make([]string, 0, len(s.subs))
	for n := range s.subs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (s *Spec) compile() error {
	if s.Style == "" {
		s.Style = "gnu"
	}
	s.first = firstName(s.Name)
	s.short, s.long, s.env, s.subs = shortSet{}, map[string]*Opt{}, map[string]*Opt{}, map[string]*Spec{}
	for _, group := range strings.Fields(s.Opts) {
		o := &Opt{}
		names := strings.Split(group, "|")
		for i, n := range names {
			spec, err := o.parse(n)
			if err != nil {
				return fmt.Errorf("option %q: %v", group, err)
			}
			if i == 0 {
				o.Canon = spec
			}
			if err := s.add(spec, o); err != nil {
				return err
			}
		}
	}
	for _, v := range strings.Fields(s.Env) {
		o := &Opt{}
		n, err := o.parse(v)
		if err != nil {
			return fmt.Errorf("variable %q: %v", v, err)
		}
		o.Canon = n
		s.env[n] = o
	}
	s.rep = -1
	for i, r := range strings.Fields(s.Operands) {
		rep := strings.HasSuffix(r, "...")
		r = strings.TrimSuffix(r, "...")
		a := Arg(r[0])
		if r == "-" {
			a = Plain
		}
		if rep {
			if s.rep >= 0 {
				return fmt.Errorf("operands %q: two repeating roles", s.Operands)
			}
			s.rep = i
		}
		s.roles = append(s.roles, a)
	}
	for _, sub := range s.Subs {
		if sub.Source == "" {
			sub.Source = s.Source
		}
		sub.lbl = s.label() + " " + firstName(sub.Name)
		if err := sub.compile(); err != nil {
			return fmt.Errorf("subcommand %s: %v", sub.Name, err)
		}
		if s.Inherit {
			for k, o := range s.short.all() {
				if sub.short.get(k) == nil {
					sub.short.set(k, o)
				}
			}
			for k, o := range s.long {
				if sub.long[k] == nil {
					sub.long[k] = o
					sub.longs = append(sub.longs, k)
					sub.wordOpts = sub.wordOpts || wordOpt(k)
				}
			}
			sort.Strings(sub.longs)
			sub.risky = sub.risky || s.risky
			sub.riskyWrite = sub.riskyWrite || s.riskyWrite
		}
		for _, n := range strings.Fields(sub.Name) {
			s.subs[n] = sub
		}
	}
	for n := range s.long {
		s.longs = append(s.longs, n)
		s.wordOpts = s.wordOpts || wordOpt(n)
	}
	sort.Strings(s.longs)
	return nil
}

// wordOpt reports a name of long that a word starting with one - or a +
// can be (Spec.wordOpts).
func wordOpt(name string) bool { return name != "" && (name[0] == '-' || name[0] == '+') }

// parse reads one spelling: "-o=W", "--color[=]", "-i[=]:I", "--verbose".
// It fills o's value and effect and returns the bare spelling.
func (o *Opt) parse(n string) (string, error) {
	if i := strings.IndexByte(n, ':'); i >= 0 {
		if i+1 >= len(n) {
			return "", fmt.Errorf("empty effect")
		}
		o.Flag = Flag(n[i+1])
		n = n[:i]
	}
	if i := strings.Index(n, "[="); i >= 0 {
		o.Value, o.Optional = true, true
		rest := strings.TrimSuffix(n[i+2:], "]")
		n = n[:i]
		if rest != "" {
			o.Arg = Arg(rest[0])
		}
	} else if i := strings.IndexByte(n, '='); i >= 0 {
		o.Value = true
		rest := n[i+1:]
		n = n[:i]
		if rest != "" {
			o.Arg = Arg(rest[0])
			if o.Arg == Flags {
				o.Sub = rest[1:]
			}
		}
	}
	if n == "" {
		return "", fmt.Errorf("empty name")
	}
	return n, nil
}

func (s *Spec) add(n string, o *Opt) error {
	switch {
	case s.Style == "go":
		s.long[strings.TrimLeft(n, "-")] = o
	case strings.HasPrefix(n, "--"):
		s.long[n[2:]] = o
	case len(n) == 2 && n[0] == '-':
		s.short.set(n[1], o)
	case n[0] == '-' || n[0] == '+':
		// A single-dash word option (find -name): stored whole.
		s.long[n] = o
	default:
		return fmt.Errorf("option %q must start with -", n)
	}
	if o.Arg != Plain || o.Flag != NoEffect {
		s.risky = true
	}
	switch o.Arg {
	case Plain, Read, List, Pattern, PatFile, Pair, Pair2, AtFile:
	default:
		s.riskyWrite = true
	}
	if o.Flag != NoEffect {
		s.riskyWrite = true
	}
	return nil
}

// Effect is something a call does that the policy must see: a path read,
// written or removed, a program or shell line run, a folder worked in.
type Effect struct {
	Arg  Arg    // Read, Write, Delete, List, Dir, Exec, Shell, Extract...
	Val  string // the path, program or line (may be a computed word)
	Via  string // the option or variable that carries it ("--output", "GIT_EXTERNAL_DIFF")
	Flag Flag   // for effects of flags without a value
	// Match, for a read, makes it a read of the folder Val whole, of the
	// files whose path below it Match accepts (git's pathspec globs).
	Match func(rel string) bool
	// Top: Val is relative to the top of the repository's work tree, not
	// the working folder (git add -A, the ":/" pathspec magic).
	Top bool
}

// Result is what Parse found in one command's words.
type Result struct {
	Spec *Spec  // the deepest entry in effect (the subcommand's)
	Sub  string // the subcommand path: "push", "mod tidy"
	// Flags are the canonical spellings of the options used; Ops the
	// operands, with the values of options removed.
	Flags []string
	Ops   []string
	// Risk is why an allow rule cannot vouch for the call: an option or a
	// variable the entry does not know, or one that runs another program.
	// Empty when every word is known and harmless.
	Risk string
	// RiskReads: Risk is only that a word computed at run time could be
	// an option that reads a file (the entry has no option that writes or
	// runs): it keeps allow rules off, and is no computed command.
	RiskReads bool
	Effects   []Effect
	// Passed are the words handed to another program (the arguments of
	// the script python runs, of the package go run builds).
	Passed []string
	// Runs is a command the program runs as it is given, the program
	// found as a shell finds it or in the project's tools (npm exec CMD,
	// uv run CMD): the shell package judges it with all its words.
	Runs []string
	// Tree reports that the folders among the paths the program reads are
	// read whole, with everything below them (grep -r, cp -r, tar -c):
	// a private file inside such a folder is read. SkipHidden: entries
	// whose name starts with a dot are left out (rg without --hidden).
	Tree, SkipHidden bool
	// Follow: the folders read whole are read through the symbolic links
	// inside them (grep -R, rg -L, diff -r, tar -h, cp -rL).
	Follow bool
	// GitIgnores: the folders read whole are read as git reads its work
	// tree: untracked files its ignore files name are left out (git add
	// without -f, git grep --untracked).
	GitIgnores bool
	// RunsGit: the program runs git in the repository it finds from its
	// working folder, whose configuration can run programs (go build's
	// version control stamp).
	RunsGit bool
	// Repo: the program prints the content of files the repository keeps
	// (see Repo): those under the operands RepoOps that name paths, the
	// whole repository when none does or RepoWhole. An operand that names
	// no path is a revision (as git tells them apart), which reaches
	// history.
	Repo      Repo
	RepoOps   []string
	RepoWhole bool
	// RepoDiff: only the files that changed are printed (git diff, git
	// status -v): between the index and the work tree for RepoTracked,
	// between HEAD and the index for RepoStaged.
	RepoDiff bool
	// TreeWrite reports that the folders among the paths the program
	// writes are changed whole, everything below them included (chmod -R):
	// a protected or private path inside is written.
	TreeWrite bool
	// Filter, when set, tells which entries of such a folder the program
	// reads (grep --include, --exclude, --exclude-dir): a file's or a
	// folder's base name.
	Filter func(name string, dir bool) bool
	// Vals are the values given to options, by canonical spelling, in the
	// order of the call (grep -d ACTION, git log -L RANGE:FILE).
	Vals []OptVal
}

// OptVal is the value given to an option.
type OptVal struct {
	Opt, Val string
}

// Values returns the values the call gave to the option canon.
func (r *Result) Values(canon string) []string {
	var out []string
	for _, v := range r.Vals {
		if v.Opt == canon {
			out = append(out, v.Val)
		}
	}
	return out
}

// runs reads words (words[0] names the program) with the entry sub, as
// the words the call's program hands to another it runs (python -m pytest
// ARGS, uv run pytest ARGS, npx prettier ARGS), and takes in what that
// finds: its risk, prefixed with label, and its effects, each named after
// via but for the folders read whole, which stay the call's own reads.
func (r *Result) runs(sub *Spec, words []string, label, via string) {
	var inner Result
	sub.Parse(&inner, words, false)
	if inner.Risk != "" && inner.RiskReads {
		r.readRisk("%s: %s", label, inner.Risk)
	} else if inner.Risk != "" {
		r.risk("%s: %s", label, inner.Risk)
	}
	for _, e := range inner.Effects {
		if inner.Tree && e.Arg == Read && (e.Via == sub.Name || e.Via == inner.Spec.Name) {
			e.Via = r.Spec.Name // read whole, as the shell package reads a Tree read
		} else {
			e.Via = via + " " + strings.TrimPrefix(e.Via, via+" ")
		}
		r.Effects = append(r.Effects, e)
	}
	r.Tree = r.Tree || inner.Tree
	r.Follow = r.Follow || inner.Follow
	if inner.Filter != nil {
		r.Filter = inner.Filter
	}
}

func (r *Result) risk(format string, a ...any) {
	if r.Risk == "" || r.RiskReads {
		r.Risk, r.RiskReads = fmt.Sprintf(format, a...), false
	}
}

// readRisk is a risk that is only a read warden cannot see (RiskReads).
func (r *Result) readRisk(format string, a ...any) {
	if r.Risk == "" {
		r.Risk, r.RiskReads = fmt.Sprintf(format, a...), true
	}
}

// ReadEnv reads a variable assigned before the program runs, as the entry
// (or, for a subcommand, its program's entry) lists it, and reports
// whether the entry knows it.
func (s *Spec) ReadEnv(r *Result, name, val string) bool {
	o := s.env[name]
	if o == nil {
		return false
	}
	if o.Value {
		s.apply(r, o, name, val, true)
	}
	return true
}

// OwnsEnv reports whether a variable is in the program's own namespace.
func (s *Spec) OwnsEnv(name string) bool {
	for _, p := range strings.Fields(s.EnvPrefix) {
		if p == "*" || strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// IsDyn reports whether a word is computed at run time (the shell package
// marks such words with a leading NUL byte).
func IsDyn(w string) bool { return len(w) > 0 && w[0] == 0 }

// Parse reads the words of a command (args[0] is the program) against the
// program's entry s and appends what it finds to r. Words computed at run
// time start with a NUL byte. When pattern is true, the words are a command
// pattern's tokens: effects and risks are not recorded, and tokens holding
// glob characters are operands.
func (s *Spec) Parse(r *Result, args []string, pattern bool) {
	r.Spec = s
	prog := args[0]
	cur := s
	words := args[1:]
	afterDD := false
	nops := 0 // operands of the current entry
	var flagsSeen []*Opt
	opStart := len(r.Ops)
	for i := 0; i < len(words); i++ {
		w := words[i]
		dyn := IsDyn(w)
		if !afterDD && cur.RestAfter != "" && w == cur.RestAfter {
			r.Ops = append(r.Ops, words[i+1:]...)
			r.Passed = words[i+1:]
			break
		}
		if w == "--" && !afterDD {
			afterDD = true
			continue
		}
		optLike := !afterDD && !dyn && !cur.Words && len(w) > 1 && (w[0] == '-' || w[0] == '+' && cur.long[w] != nil)
		if pattern && optLike && strings.ContainsAny(w, "*?[") {
			optLike = false
		}
		if !optLike {
			if dyn && !afterDD && cur.riskyWrite && !cur.Words && !pattern {
				r.risk("a word computed at run time (%s) could be an option of %s", w[1:], cur.label())
			} else if dyn && !afterDD && cur.risky && !cur.Words && !pattern {
				r.readRisk("a word computed at run time (%s) could be an option of %s that reads a file", w[1:], cur.label())
			}
			if len(cur.subs) > 0 && nops == 0 && !dyn {
				if sub := cur.subs[w]; sub != nil {
					// The subcommand by its first name: npm t is npm
					// test, for rules and for the entry's code.
					if r.Sub == "" {
						r.Sub = sub.first // no concatenation for the common case
					} else {
						r.Sub += " " + sub.first
					}
					r.Ops = append(r.Ops, sub.first)
					cur, r.Spec = sub, sub
					opStart = len(r.Ops)
					nops = 0
					continue
				}
				if cur.SubsOnly && !pattern && !(w == "*" && pattern) {
					r.risk("%s is not a %s subcommand warden knows", w, strings.TrimSpace(prog+" "+r.Sub))
				}
			} else if cur.SubsOnly && nops == 0 && dyn && !pattern {
				r.risk("the %s subcommand is computed at run time", prog)
			}
			r.Ops = append(r.Ops, w)
			nops++
			if cur.Rest > 0 && nops >= cur.Rest {
				r.Ops = append(r.Ops, words[i+1:]...)
				r.Passed = words[i+1:]
				break
			}
			if cur.Style == "posix" && nops >= max(cur.OptsUntil, 1) {
				afterDD = true
			}
			continue
		}
		n := cur.option(r, prog, w, words, &i, pattern)
		if n != nil {
			flagsSeen = append(flagsSeen, n)
		}
	}
	if pattern {
		return
	}
	cur.roleOps(r, r.Ops[opStart:], flagsSeen)
	if cur.Special != nil {
		cur.Special(r, args)
	}
}

// option reads one option word at words[*i], advancing *i past a separate
// value. It returns the last option the word named (for operand roles).
func (s *Spec) option(r *Result, prog, w string, words []string, i *int, pattern bool) *Opt {
	next := func() (string, bool) {
		if *i+1 < len(words) {
			*i++
			return words[*i], true
		}
		return "", false
	}
	if s.Style == "go" || s.wordOpts && !strings.HasPrefix(w, "--") && len(w) > 2 && s.long[longName(w)] != nil {
		// A word option: -name, -name=value (go), or find's -exec.
		name, val, hasVal := strings.Cut(strings.TrimLeft(w, "-"), "=")
		key := name
		if s.Style != "go" {
			name, val, hasVal = strings.Cut(w, "=")
			key = name
		}
		o := s.long[key]
		if o == nil && s.Style == "go" {
			// -v=false and the like: a boolean with a value.
			r.risk("%s is not an option of %s warden knows", w, s.label())
			r.Flags = append(r.Flags, "-"+name)
			return nil
		}
		r.Flags = append(r.Flags, o.Canon)
		if o.Arg == Command {
			// find ends the command at ";", or (-exec and -execdir) at a
			// "+" right after a word holding "{}" (a computed word may
			// hold it: the options after are read as find's, and
			// findSpecial does not vouch for the call).
			plus := o.Canon == "-exec" || o.Canon == "-execdir"
			start := *i
			for *i+1 < len(words) && words[*i+1] != ";" &&
				!(plus && words[*i+1] == "+" && *i > start && (IsDyn(words[*i]) || strings.Contains(words[*i], "{}"))) {
				*i++
			}
			*i++
			return o
		}
		if o.Value && !hasVal && !o.Optional {
			val, hasVal = next()
		} else if !o.Value && hasVal && s.Style == "go" {
			hasVal = false // -v=true on a boolean
		}
		s.record(r, o, w, val, hasVal, pattern)
		return o
	}
	if strings.HasPrefix(w, "--") {
		name, val, hasVal := strings.Cut(w[2:], "=")
		o, canon := s.longOpt(name)
		if o == nil {
			if !pattern {
				r.risk("%s is not an option of %s warden knows", w, strings.TrimSpace(prog+" "+subName(r)))
			}
			r.Flags = append(r.Flags, "--"+name)
			// An abbreviation of several options may stand for any of
			// them: deny and ask rules see each.
			r.Flags = s.candidates(name, r.Flags)
			return nil
		}
		if canon != "" {
			r.Flags = append(r.Flags, canon)
		} else {
			r.Flags = append(r.Flags, o.Canon)
		}
		if canon != "" {
			return nil // a negation: --no-verify
		}
		if o.Value && !hasVal && !o.Optional {
			val, hasVal = next()
		}
		if o.Arg == Pair || o.Arg == Pair2 {
			// The name was the first value; the second follows.
			val, hasVal = next()
			if o.Arg == Pair2 {
				return o
			}
			o = &Opt{Canon: o.Canon, Value: true, Arg: Read}
		}
		s.record(r, o, w, val, hasVal, pattern)
		return o
	}
	// A cluster of short options: -rf, -oFILE, -n5.
	if s.Digits && AllDigits(w[1:]) {
		r.Flags = append(r.Flags, "-NUM")
		return nil
	}
	var last *Opt
	for j := 1; j < len(w); j++ {
		c := w[j]
		o := s.short.get(c)
		if o == nil {
			if !pattern {
				r.risk("-%c is not an option of %s warden knows", c, strings.TrimSpace(prog+" "+subName(r)))
			}
			r.Flags = append(r.Flags, shortName(c))
			return last
		}
		r.Flags = append(r.Flags, o.Canon)
		last = o
		if o.Value {
			val, hasVal := w[j+1:], j+1 < len(w)
			if !hasVal && !o.Optional {
				val, hasVal = next()
			}
			s.record(r, o, shortName(c), val, hasVal, pattern)
			return o
		}
		if !pattern {
			s.apply(r, o, shortName(c), "", false)
		}
	}
	return last
}

func subName(r *Result) string { return r.Sub }

// shortSet holds a program's one-letter options by their letter: a bit
// per byte, and the options of the bits set in the bytes' order, so that
// a letter is found with a count of bits (a map lookup per letter of -rf
// took some 3% of a decision).
type shortSet struct {
	bits [4]uint64
	opts []*Opt
}

// rank returns the index in opts of byte c: how many bits below c are set.
func (t *shortSet) rank(c byte) int {
	w := int(c >> 6)
	n := bits.OnesCount64(t.bits[w] & (1<<(c&63) - 1))
	for i := range w {
		n += bits.OnesCount64(t.bits[i])
	}
	return n
}

// get returns the option of letter c, or nil.
func (t *shortSet) get(c byte) *Opt {
	if t.bits[c>>6]&(1<<(c&63)) == 0 {
		return nil
	}
	return t.opts[t.rank(c)]
}

// set makes o the option of letter c.
func (t *shortSet) set(c byte, o *Opt) {
	i := t.rank(c)
	if t.bits[c>>6]&(1<<(c&63)) != 0 {
		t.opts[i] = o
		return
	}
	t.bits[c>>6] |= 1 << (c & 63)
	t.opts = slices.Insert(t.opts, i, o)
}

// all yields each letter and its option, in the letters' order.
func (t *shortSet) all() iter.Seq2[byte, *Opt] {
	return func(yield func(byte, *Opt) bool) {
		for c := range 256 {
			if o := t.get(byte(c)); o != nil && !yield(byte(c), o) {
				return
			}
		}
	}
}

// record applies an option to the command's result; for a pattern's
// tokens it only keeps the value (a pattern that names one matches only
// that value: kubectl apply --dry-run=client *).
func (s *Spec) record(r *Result, o *Opt, name, val string, hasVal, pattern bool) {
	if !pattern {
		s.apply(r, o, name, val, hasVal)
		return
	}
	if o.Value && hasVal {
		r.Vals = append(r.Vals, OptVal{Opt: o.Canon, Val: val})
	}
}

// AllDigits reports a non-empty string of ASCII digits.
func AllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var shortNames [256]string

func init() {
	for c := 0; c < 256; c++ {
		shortNames[c] = "-" + string(rune(c))
	}
}

func shortName(c byte) string { return shortNames[c] }

// longOpt finds a long option by name or by an abbreviation the program
// accepts (a unique prefix), and the negation --no-NAME. For a negation it
// returns the option and its canonical text.
func (s *Spec) longOpt(name string) (*Opt, string) {
	if o := s.long[name]; o != nil {
		return o, ""
	}
	if s.Style != "go" {
		// Unique prefix: getopt_long and git's parse-options accept it.
		i := sort.SearchStrings(s.longs, name)
		var found *Opt
		n := 0
		for ; i < len(s.longs) && strings.HasPrefix(s.longs[i], name); i++ {
			if o := s.long[s.longs[i]]; o != found {
				found = o
				n++
			}
		}
		if n == 1 {
			return found, ""
		}
		if n > 1 {
			return nil, ""
		}
	}
	if !s.NoNeg {
		if base, ok := strings.CutPrefix(name, "no-"); ok {
			if o := s.long[base]; o != nil && o.Arg == Plain && o.Flag == NoEffect {
				return o, "--no-" + base
			}
		}
	}
	return nil, ""
}

// candidates appends the canonical spellings of every long option name
// abbreviates.
func (s *Spec) candidates(name string, out []string) []string {
	if s.Style == "go" || name == "" {
		return out
	}
	for i := sort.SearchStrings(s.longs, name); i < len(s.longs) && strings.HasPrefix(s.longs[i], name); i++ {
		out = append(out, s.long[s.longs[i]].Canon)
	}
	return out
}

// apply records the effect of an option and its value.
func (s *Spec) apply(r *Result, o *Opt, name, val string, hasVal bool) {
	if o.Flag != NoEffect {
		switch o.Flag {
		case RunsCode:
			r.risk("option %s of %s runs another program", name, s.label())
		case Creates:
			r.risk("option %s of %s writes a file the call does not name", name, s.label())
		}
		r.Effects = append(r.Effects, Effect{Flag: o.Flag, Via: name})
	}
	if !o.Value || !hasVal && o.Optional {
		return
	}
	if !hasVal {
		return
	}
	r.Vals = append(r.Vals, OptVal{Opt: o.Canon, Val: val})
	switch o.Arg {
	case Plain, Pattern:
	case Exec, Shell:
		if val == "cat" || val == "" {
			// GIT_PAGER=cat, PAGER=: no program but cat runs.
			return
		}
		r.risk("option %s of %s runs another program", name, s.label())
		r.Effects = append(r.Effects, Effect{Arg: o.Arg, Val: val, Via: name})
	case Unsafe:
		r.risk("option %s of %s can run another program, load code or change what the program reads or writes", name, s.label())
		r.Effects = append(r.Effects, Effect{Arg: o.Arg, Val: val, Via: name})
	case Flags:
		sub := table[o.Sub]
		if sub == nil {
			r.risk("option %s of %s passes options warden cannot read", name, s.label())
			return
		}
		if IsDyn(val) {
			r.risk("option %s of %s is computed at run time", name, s.label())
			return
		}
		var inner Result
		sub.Parse(&inner, append([]string{sub.Name}, strings.Fields(val)...), false)
		if inner.Risk != "" {
			r.risk("option %s of %s: %s", name, s.label(), inner.Risk)
		}
		for _, e := range inner.Effects {
			e.Via = name + " " + e.Via
			r.Effects = append(r.Effects, e)
		}
	case Config:
		gitConfig(r, name, val)
	case Tool:
		goToolFlags(r, o.Canon, val)
	case AtFile:
		if strings.HasPrefix(val, "@") && len(val) > 1 {
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: val[1:], Via: name})
		} else if i := strings.Index(val, "=@"); i >= 0 {
			// -F name=@file, name=@"file", name=@file1,file2
			for _, f := range formFiles(val[i+2:], true) {
				r.Effects = append(r.Effects, Effect{Arg: Read, Val: f, Via: name})
			}
		} else if i := strings.Index(val, "=<"); i >= 0 {
			for _, f := range formFiles(val[i+2:], false) {
				r.Effects = append(r.Effects, Effect{Arg: Read, Val: f, Via: name})
			}
		} else if IsDyn(val) {
			r.risk("option %s of %s is computed at run time and could name a file to send", name, s.label())
		}
	default:
		r.Effects = append(r.Effects, Effect{Arg: o.Arg, Val: val, Via: name})
	}
}

// longName is a long option's name: the word before its "=".
func longName(w string) string {
	name, _, _ := strings.Cut(w, "=")
	return name
}

// roleOps gives each operand its role and records paths as effects.
func (s *Spec) roleOps(r *Result, ops []string, seen []*Opt) {
	if len(s.roles) == 0 {
		return
	}
	roles := s.roles
	skipFirst := false
	inPlace, target := false, false
	ipVia := "" // s.Name + " -i", built when a write names it
	for _, o := range seen {
		if o == nil {
			continue
		}
		switch {
		case o.Arg == Pattern || o.Arg == PatFile:
			skipFirst = true
		case o.Arg == Target:
			target = true
		}
		if o.Flag == InPlace {
			inPlace = true
			if o.Canon != "-i" && o.Canon != "--in-place" {
				ipVia = s.Name + " " + o.Canon // cp -l: the sources are written through the links
			}
		}
	}
	for _, e := range r.Effects {
		if e.Flag == Removes {
			inPlace = false
			for _, op := range ops {
				r.Effects = append(r.Effects, Effect{Arg: Delete, Val: op, Via: s.Name})
			}
			return
		}
	}
	if skipFirst && len(roles) > 0 && roles[0] == Plain {
		roles = roles[1:]
	}
	rep := s.rep
	if skipFirst && rep > 0 {
		rep--
	}
	if target {
		// cp -t DIR SRC...: every operand is a source.
		if len(roles) > 0 {
			roles = roles[:1]
			rep = 0
		}
	}
	n := len(ops)
	for k, op := range ops {
		var role Arg
		switch {
		case rep < 0:
			if k >= len(roles) {
				continue
			}
			role = roles[k]
		default:
			after := len(roles) - 1 - rep // roles after the repeating one
			switch {
			case k < rep:
				role = roles[k]
			case k >= n-after && n-after > rep:
				role = roles[len(roles)-(n-k)]
			case n == 1 && len(roles) == 2 && rep == 0 && (roles[0] == Read || roles[0] == Delete) && roles[1] == Write:
				// cp SRC with no destination is an error; ln TARGET links
				// into the current folder: treat the lone operand as read.
				role = roles[0]
			default:
				role = roles[rep]
			}
		}
		via := s.Name
		if inPlace && role == Read {
			role, via = Write, ipVia
			if via == "" {
				via = s.Name + " -i"
			}
		}
		if role == Plain {
			continue
		}
		r.Effects = append(r.Effects, Effect{Arg: role, Val: op, Via: via})
	}
}

// formFiles returns the files of curl's -F name=@FILES or name=<FILE
// (man curl, -F): a name may be double-quoted (backslash escapes a quote),
// ";type=..." and the like follow it, and with @ several files are
// separated by commas (f=@src/a.go,.env sends both).
func formFiles(s string, multi bool) []string {
	var out []string
	for s != "" {
		var f string
		if s[0] == '"' {
			var b strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			f = b.String()
			if i < len(s) {
				i++
			}
			s = s[i:]
		} else {
			end := strings.IndexByte(s, ';')
			if multi {
				if j := strings.IndexByte(s, ','); j >= 0 && (end < 0 || j < end) {
					end = j
				}
			}
			if end < 0 {
				end = len(s)
			}
			f, s = s[:end], s[end:]
		}
		out = append(out, f)
		j := strings.IndexByte(s, ',')
		if !multi || j < 0 {
			break
		}
		s = s[j+1:]
	}
	return out
}
