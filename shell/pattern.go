package shell

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/shell/progs"
)

// Pattern is a compiled command pattern such as "rm -rf *",
// "git push --force *", "npm run test:*" or "curl * | sh".
//
// The program is compared by base name. Flags are compared as a set after
// canonicalisation: clusters are split (-rf is -r -f) and long spellings
// map to their short form where the program has one (rm --recursive is
// -r), so flag order and spelling do not matter. Operands are compared in
// order: a "*" token matches any run of operands (including none), any
// other token is a text glob on one operand. A pattern whose text ends in
// "*" is open: it also matches commands with more operands or flags.
//
// A pattern with stages separated by "|" matches a command that is a stage
// of a pipeline in which stages matching each pattern stage appear in
// order.
type Pattern struct {
	src    string
	stages []stage
}

type stage struct {
	prog  string
	path  string   // the program as written when it names a file (./gradlew)
	flags []string // canonical: "-r", "--force-with-lease"
	vals  []progs.OptVal
	ops   []string
	open  bool
	// dd: the pattern writes "--" after the program (git checkout --
	// *): it matches only a command that has one (a computed word may
	// be one, for deny and ask rules).
	dd bool
	// progGlob: prog has a glob character; without one it matches only
	// itself, compared as text.
	progGlob bool
}

// CompilePattern compiles a command pattern.
func CompilePattern(src string) (Pattern, error) {
	p := Pattern{src: src}
	parts := strings.Split(src, "|")
	for i, part := range parts {
		toks := strings.Fields(part)
		if len(toks) == 0 {
			return Pattern{}, fmt.Errorf("command pattern %q: empty pipeline stage", src)
		}
		for k := range toks {
			toks[k] = unquote(toks[k])
		}
		st := stage{prog: base(toks[0])}
		st.progGlob = glob.HasMeta(st.prog)
		if strings.Contains(toks[0], "/") && !systemProg(toks[0]) {
			st.path = filepath.Clean(toks[0])
		}
		st.dd = slices.Contains(toks[1:], "--")
		if spec := progs.Lookup(st.prog); spec != nil && !glob.HasMeta(st.prog) {
			var r progs.Result
			spec.Parse(&r, toks, true)
			st.flags, st.ops, st.vals = r.Flags, r.Ops, r.Vals
		} else {
			endDashes := false
			for _, t := range toks[1:] {
				if !endDashes && t == "--" {
					endDashes = true
					continue
				}
				if !endDashes && len(t) > 1 && t[0] == '-' && !strings.ContainsAny(t, "*?") {
					st.flags = canonFlags(st.prog, t, st.flags)
					continue
				}
				st.ops = append(st.ops, t)
			}
		}
		st.open = strings.HasSuffix(strings.TrimSpace(part), "*")
		if i == len(parts)-1 {
			st.open = strings.HasSuffix(strings.TrimSpace(src), "*")
		}
		p.stages = append(p.stages, st)
	}
	return p, nil
}

func unquote(t string) string {
	if len(t) >= 2 && (t[0] == '"' && t[len(t)-1] == '"' || t[0] == '\'' && t[len(t)-1] == '\'') {
		return t[1 : len(t)-1]
	}
	return t
}

// String returns the pattern's source.
func (p Pattern) String() string { return p.src }

// Prog returns the program the pattern's first stage names ("*" for any),
// for indexing.
func (p Pattern) Prog() string {
	if len(p.stages) == 0 {
		return ""
	}
	return p.stages[len(p.stages)-1].prog
}

// Progs returns the programs of every stage.
func (p Pattern) Progs() []string {
	out := make([]string, len(p.stages))
	for i, s := range p.stages {
		out[i] = s.prog
	}
	return out
}

// Open reports whether the pattern ends in "*": it matches more operands
// and options than it names.
func (p Pattern) Open() bool { return len(p.stages) > 0 && p.stages[len(p.stages)-1].open }

// Pipeline reports whether the pattern has several stages.
func (p Pattern) Pipeline() bool { return len(p.stages) > 1 }

// Match reports whether command i of a matches the pattern. In strict mode
// (allow rules) a computed word matches only a "*" token and a closed
// pattern needs exactly its flags; otherwise (deny and ask rules) a
// computed word may stand for any flag or operand and extra flags are
// tolerated.
func (p Pattern) Match(a *Analysis, i int, strict bool) bool {
	c := &a.Commands[i]
	if c.Dynamic {
		return !strict && p.stages[len(p.stages)-1].prog == "*"
	}
	if len(p.stages) == 1 {
		return p.stages[0].match(c, strict)
	}
	if c.Pipe < 0 {
		return false
	}
	// Find this command's stage position among the pattern's stages: the
	// command must match some stage k, stages before k must match earlier
	// stages of the pipeline in order, and stages after k later ones.
	for k := range p.stages {
		if p.stages[k].match(c, strict) && p.before(a, c, k, strict) && p.after(a, c, k, strict) {
			return true
		}
	}
	return false
}

func (p Pattern) before(a *Analysis, c *Command, k int, strict bool) bool {
	need := k - 1
	for j := range a.Commands {
		if need < 0 {
			break
		}
		o := &a.Commands[j]
		if o.Pipe == c.Pipe && o.Stage < c.Stage && !o.Dynamic && p.stages[need].match(o, strict) {
			need--
		}
	}
	return need < 0
}

func (p Pattern) after(a *Analysis, c *Command, k int, strict bool) bool {
	need := k + 1
	for j := range a.Commands {
		if need >= len(p.stages) {
			break
		}
		o := &a.Commands[j]
		if o.Pipe == c.Pipe && o.Stage > c.Stage && !o.Dynamic && p.stages[need].match(o, strict) {
			need++
		}
	}
	return need >= len(p.stages)
}

func (st *stage) match(c *Command, strict bool) bool {
	if st.progGlob && st.prog != "*" && !glob.Text(st.prog, c.Prog) || !st.progGlob && st.prog != c.Prog {
		return false
	}
	if strict {
		// An allow vouches only for what warden knows: no option or
		// variable it cannot judge, and the program the rule names.
		if c.Risk != "" {
			return false
		}
		if st.path != "" {
			if filepath.Clean(c.Args[0]) != st.path {
				return false
			}
		} else if !c.System {
			return false
		}
	}
	if st.prog == "*" && len(st.flags) == 0 && len(st.ops) == 0 && st.open {
		return true
	}
	dyn := false
	for _, o := range c.Ops {
		if IsDyn(o) {
			dyn = true
			break
		}
	}
	if st.dd && !c.hasDD(strict) {
		return false
	}
	// Flags the pattern needs.
	for _, f := range st.flags {
		if !c.hasFlag(f) && !(dyn && !strict) {
			return false
		}
	}
	// Values the pattern names (kubectl apply --dry-run=client): a text
	// glob on the command's value. An allow needs every value the command
	// gives the option to match (a computed one only "*"); a deny or ask
	// meets any that matches, or is computed.
	for _, pv := range st.vals {
		if !c.valueMatches(pv, strict) && !(dyn && !strict) {
			return false
		}
	}
	// A closed pattern in strict mode needs exactly its flags.
	if strict && !st.open {
		for _, f := range c.Flags {
			if !slices.Contains(st.flags, f) {
				return false
			}
		}
	}
	return matchOps(st.ops, c.Ops, st.open, strict)
}

// valueMatches reports whether the command's values of the option pv
// names match pv's glob: all of them (every), or any (a computed value
// matching too); an option given without a value matches only "*" for
// every, and anything otherwise.
func (c *Command) valueMatches(pv progs.OptVal, every bool) bool {
	n := 0
	for _, v := range c.Vals {
		if v.Opt != pv.Opt {
			continue
		}
		n++
		ok := pv.Val == "*" || !IsDyn(v.Val) && glob.Text(pv.Val, v.Val)
		if every && !ok {
			return false
		}
		if !every && (ok || IsDyn(v.Val)) {
			return true
		}
	}
	if n == 0 {
		return !every || pv.Val == "*"
	}
	return every
}

// hasFlag reports whether the command carries the canonical flag f.
func (c *Command) hasFlag(f string) bool {
	if slices.Contains(c.Flags, f) {
		return true
	}
	// git push origin +main is a forced push.
	if c.Prog == "git" && f == "-f" {
		for i, w := range c.Ops {
			if i > 0 && len(w) > 1 && w[0] == '+' {
				return true
			}
		}
	}
	return false
}

// matchOps matches operand tokens against operands.
func matchOps(toks, ops []string, open, strict bool) bool {
	if len(toks) == 0 {
		return open || len(ops) == 0
	}
	t := toks[0]
	if t == "*" {
		for k := 0; k <= len(ops); k++ {
			if matchOps(toks[1:], ops[k:], open, strict) {
				return true
			}
		}
		return false
	}
	if len(ops) == 0 {
		return false
	}
	o := ops[0]
	if IsDyn(o) {
		if strict {
			return false
		}
	} else if t != o && !glob.Text(t, o) {
		// (A word equal to the pattern's matches it: each glob character
		// matches itself.)
		return false
	}
	return matchOps(toks[1:], ops[1:], open, strict)
}

// noSplit lists programs whose single-dash options are words, not
// clusters of letters (find -name, java -jar).
var noSplit = map[string]bool{"find": true, "java": true, "javac": true, "gcc": true, "g++": true,
	"cc": true, "clang": true, "go": true, "ffmpeg": true, "ffprobe": true, "terraform": true,
	"xcodebuild": true, "dd": true}

// canonFlags appends the flags of one flag word of a program warden has
// no table for: a cluster is split into its letters (-rf is -r -f) unless
// the program takes single-dash words; a long option is kept by name.
func canonFlags(prog, w string, out []string) []string {
	if strings.HasPrefix(w, "--") {
		name, _, _ := strings.Cut(w, "=")
		return append(out, name)
	}
	if noSplit[prog] {
		name, _, _ := strings.Cut(w, "=")
		return append(out, name)
	}
	for j := 1; j < len(w); j++ {
		out = append(out, shortFlag(w[j]))
	}
	return out
}

var shortFlags [256]string

func init() {
	for c := range shortFlags {
		shortFlags[c] = "-" + string(rune(c))
	}
}

func shortFlag(c byte) string { return shortFlags[c] }

// StageCount returns the number of pipeline stages of the pattern.
func (p Pattern) StageCount() int { return len(p.stages) }

// StageKey returns what an index can file stage k under: its program, and
// its first operand token when that is a literal (not a glob). An empty
// first operand means the stage can match any first operand.
func (p Pattern) StageKey(k int) (prog, firstOp string) {
	st := p.stages[k]
	if len(st.ops) > 0 && !glob.HasMeta(st.ops[0]) {
		firstOp = st.ops[0]
	}
	return st.prog, firstOp
}

// FirstOperand returns the command's first operand as pattern matching sees
// it (after flags, and after the values of flags that take one), and
// whether it is computed at run time. It returns "" when there is none.
func (c *Command) FirstOperand() (op string, dynamic bool) {
	if len(c.Ops) == 0 {
		return "", false
	}
	return c.Ops[0], IsDyn(c.Ops[0])
}

// hasDD reports whether the command was written with "--" after the
// program; a computed word may be one unless strict.
func (c *Command) hasDD(strict bool) bool {
	for _, w := range c.Args[1:] {
		if w == "--" || !strict && IsDyn(w) {
			return true
		}
	}
	return false
}
