package shell

import (
	"fmt"
	"strings"

	"github.com/warden-run/warden/internal/glob"
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
	flags []string // canonical: "-r", "--force-with-lease"
	ops   []string
	open  bool
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
		st := stage{prog: base(unquote(toks[0]))}
		endDashes := false
		for _, t := range toks[1:] {
			t = unquote(t)
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

const maxOps = 32

func (st *stage) match(c *Command, strict bool) bool {
	if st.prog != "*" && !glob.Text(st.prog, c.Prog) {
		return false
	}
	if st.prog == "*" && len(st.flags) == 0 && len(st.ops) == 0 && st.open {
		return true
	}
	args := c.Args[1:]
	dyn := false
	var buf [maxOps]string
	ops := buf[:0]
	for i := 0; i < len(args); i++ {
		w := args[i]
		if IsDyn(w) {
			dyn = true
			ops = append(ops, w)
			continue
		}
		if w == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if isFlag(w) {
			if n := valueFlag(c.Prog, w, len(ops)); n > 0 {
				i += n
			}
			continue
		}
		ops = append(ops, w)
	}
	// Flags the pattern needs.
	for _, f := range st.flags {
		if !hasFlag(c.Prog, args, f) && !(dyn && !strict) {
			return false
		}
	}
	// A closed pattern in strict mode needs exactly its flags.
	if strict && !st.open {
		for i := 0; i < len(args); i++ {
			w := args[i]
			if w == "--" {
				break
			}
			if isFlag(w) {
				if !flagsWithin(c.Prog, w, st.flags) {
					return false
				}
				if n := valueFlag(c.Prog, w, 0); n > 0 {
					i += n
				}
			}
		}
	}
	return matchOps(st.ops, ops, st.open, strict)
}

func isFlag(w string) bool { return len(w) > 1 && w[0] == '-' }

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
	} else if !glob.Text(t, o) {
		return false
	}
	return matchOps(toks[1:], ops[1:], open, strict)
}

// noSplit lists programs whose single-dash options are words, not
// clusters of letters (find -name, java -jar).
var noSplit = map[string]bool{"find": true, "java": true, "javac": true, "gcc": true, "g++": true,
	"cc": true, "clang": true, "go": true, "ffmpeg": true, "ffprobe": true, "terraform": true,
	"xcodebuild": true, "dd": true}

// shortAlias maps a short option letter to its canonical letter, and
// longAlias a long option to its canonical short spelling, per program.
var shortAlias = map[string]map[byte]byte{
	"rm": {'R': 'r'},
	"cp": {'R': 'r'},
}

var longAlias = map[string]map[string]string{
	"rm":    {"recursive": "-r", "force": "-f", "dir": "-d", "interactive": "-i", "verbose": "-v"},
	"cp":    {"recursive": "-r", "force": "-f", "verbose": "-v"},
	"mv":    {"force": "-f", "verbose": "-v"},
	"chmod": {"recursive": "-R", "verbose": "-v"},
	"chown": {"recursive": "-R", "verbose": "-v"},
	"chgrp": {"recursive": "-R", "verbose": "-v"},
	"git":   {"force": "-f", "delete": "-d"},
	"sed":   {"in-place": "-i"},
	"npm":   {"force": "-f"},
	"curl":  {"output": "-o", "silent": "-s", "location": "-L"},
	"wget":  {"output-document": "-O", "quiet": "-q"},
	"tee":   {"append": "-a"},
	"ln":    {"symbolic": "-s", "force": "-f"},
}

// canonFlags appends the canonical flags of one flag word.
func canonFlags(prog, w string, out []string) []string {
	if strings.HasPrefix(w, "--") {
		name, _, _ := strings.Cut(w[2:], "=")
		if s, ok := longAlias[prog][name]; ok {
			return append(out, s)
		}
		return append(out, "--"+name)
	}
	if noSplit[prog] {
		return append(out, w)
	}
	for j := 1; j < len(w); j++ {
		c := w[j]
		if r, ok := shortAlias[prog][c]; ok {
			c = r
		}
		out = append(out, "-"+string(c))
	}
	return out
}

// hasFlag reports whether args (before "--") carry the canonical flag f.
func hasFlag(prog string, args []string, f string) bool {
	for i, w := range args {
		if w == "--" {
			break
		}
		if isFlag(w) && !IsDyn(w) && flagHas(prog, w, f) {
			return true
		}
		// git push origin +main is a forced push.
		if prog == "git" && f == "-f" && len(w) > 1 && w[0] == '+' && i > 0 {
			return true
		}
	}
	return false
}

// flagHas reports whether the flag word w carries canonical flag f.
func flagHas(prog, w, f string) bool {
	if strings.HasPrefix(w, "--") {
		name, _, _ := strings.Cut(w[2:], "=")
		if s, ok := longAlias[prog][name]; ok {
			return s == f
		}
		return len(f) > 2 && f[:2] == "--" && f[2:] == name
	}
	if noSplit[prog] {
		return w == f
	}
	if len(f) != 2 || f[1] == '-' {
		return false
	}
	for j := 1; j < len(w); j++ {
		c := w[j]
		if r, ok := shortAlias[prog][c]; ok {
			c = r
		}
		if c == f[1] {
			return true
		}
	}
	return false
}

// flagsWithin reports whether every canonical flag of word w is in fs.
func flagsWithin(prog, w string, fs []string) bool {
	if strings.HasPrefix(w, "--") || noSplit[prog] {
		for _, f := range fs {
			if flagHas(prog, w, f) {
				return true
			}
		}
		return false
	}
	for j := 1; j < len(w); j++ {
		c := w[j]
		if r, ok := shortAlias[prog][c]; ok {
			c = r
		}
		found := false
		for _, f := range fs {
			if len(f) == 2 && f[1] == c {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// valueFlag returns how many following words the flag w consumes as its
// value (git -C dir, git -c k=v before the subcommand).
func valueFlag(prog, w string, opsSoFar int) int {
	if prog != "git" || opsSoFar > 0 {
		return 0
	}
	switch w {
	case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path":
		return 1
	}
	return 0
}

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
	args := c.Args[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		if IsDyn(w) {
			return w, true
		}
		if w == "--" {
			if i+1 < len(args) {
				return args[i+1], IsDyn(args[i+1])
			}
			return "", false
		}
		if isFlag(w) {
			i += valueFlag(c.Prog, w, 0)
			continue
		}
		return w, false
	}
	return "", false
}
