package shell

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

var printer = syntax.NewPrinter()
var printerMu sync.Mutex

// parse analyses src with the full bash parser.
func (a *Analysis) parse(src string, depth int, via string) {
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parsers.Put(p)
	if err != nil {
		a.Err = fmt.Errorf("command does not parse: %v", err)
		return
	}
	w := walker{a: a, depth: depth, via: via, stages: map[*syntax.Stmt][2]int{}}
	if strings.Contains(src, "((") || strings.Contains(src, "$[") {
		w.eligible = knownNumbers(f)
		w.known = map[string]bool{}
	}
	syntax.Walk(f, w.visit)
}

type walker struct {
	a      *Analysis
	depth  int
	via    string
	stages map[*syntax.Stmt][2]int // pipeline id and stage of pipeline stages
	stack  []syntax.Node
	// known are the variables the line set to a number at its top level
	// in the statements walked so far, of those eligible (knownNumbers):
	// arithmetic on them runs nothing.
	known, eligible map[string]bool
	// funcs are where the bodies of the functions being walked began
	// (funcs.go).
	funcs []funcStart
}

func (w *walker) visit(n syntax.Node) bool {
	if n == nil {
		if fd, ok := w.stack[len(w.stack)-1].(*syntax.FuncDecl); ok {
			w.funcEnd(fd)
		}
		if st, ok := w.stack[len(w.stack)-1].(*syntax.Stmt); ok && len(w.eligible) > 0 && len(w.stack) == 2 {
			// After a top-level NAME=NUMBER or NAME=$((...)): NAME holds
			// a number from here on.
			if call, ok := st.Cmd.(*syntax.CallExpr); ok && len(call.Args) == 0 {
				for _, as := range call.Assigns {
					if as.Name != nil && w.eligible[as.Name.Value] {
						w.known[as.Name.Value] = true
					}
				}
			}
		}
		w.stack = w.stack[:len(w.stack)-1]
		return true
	}
	w.stack = append(w.stack, n)
	switch n := n.(type) {
	case *syntax.BinaryCmd:
		if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
			if w.isPipeStage(n) {
				return true // stages were numbered by the outermost pipe
			}
			stmts := flattenPipe(n, nil)
			id := w.a.newPipe()
			for i, s := range stmts {
				w.stages[s] = [2]int{id, i}
			}
		}
	case *syntax.Stmt:
		w.stmt(n)
	// Assignments that are not NAME=VALUE words: the name of a for or
	// select loop, ${NAME:=VALUE} and ${NAME=VALUE}, and arithmetic
	// (( NAME=1 )). Each sets the variable as an assignment would
	// (for CDPATH in /root; do cd .aws; ... sets CDPATH).
	case *syntax.ExtGlob:
		// An extended glob: bash without extglob refuses the line, and
		// zsh reads *(e:'cmd':) as a glob qualifier that runs cmd for each
		// file (echo *(e:'touch x':)). No rule vouches for it.
		w.a.Commands = append(w.a.Commands, Command{Args: []string{"(extended glob)"}, Prog: "(extended glob)", Via: w.where(), Pipe: -1,
			Risk: "an extended glob, which bash refuses without extglob and zsh reads as glob qualifiers that can run commands"})
	case *syntax.WhileClause, *syntax.FuncDecl:
		// A loop or a function may run a cd twice (cd sub; git status
		// runs git in sub, then in sub/sub).
		w.a.cdOther = true
		if _, ok := n.(*syntax.FuncDecl); ok {
			w.funcBegin()
		}
	case *syntax.ForClause:
		w.a.cdOther = true
		if wi, ok := n.Loop.(*syntax.WordIter); ok && wi.Name != nil {
			w.assigned(wi.Name.Value)
			if w.forLiteral(wi, n.Do) {
				return false
			}
		}
		if cl, ok := n.Loop.(*syntax.CStyleLoop); ok && (w.arithRisky(cl.Init) || w.arithRisky(cl.Cond) || w.arithRisky(cl.Post)) {
			w.evaluates("arithmetic", arithRisk)
		}
	case *syntax.ArithmExp:
		if w.arithRisky(n.X) {
			w.evaluates("arithmetic", arithRisk)
		}
	case *syntax.ArithmCmd:
		if w.arithRisky(n.X) {
			w.evaluates("arithmetic", arithRisk)
		}
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			if w.arithRisky(x) {
				w.evaluates("arithmetic", arithRisk)
				break
			}
		}
	case *syntax.Assign:
		if n.Index != nil && w.arithRisky(n.Index) {
			w.evaluates("array subscript", subscriptRisk)
		}
	case *syntax.ArrayElem:
		if n.Index != nil && w.arithRisky(n.Index) {
			w.evaluates("array subscript", subscriptRisk)
		}
	case *syntax.BinaryTest:
		// [[ X -eq Y ]] and the other numeric tests evaluate X and Y as
		// arithmetic.
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			if testRisky(n.X) || testRisky(n.Y) {
				w.evaluates("arithmetic", arithRisk)
			}
		}
	case *syntax.UnaryTest:
		// [[ -v NAME ]]: a NAME with a subscript evaluates it.
		if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
			if x, ok := n.X.(*syntax.Word); !ok || wordRisky(x, "[") {
				w.evaluates("array subscript", subscriptRisk)
			}
		}
	case *syntax.ParamExp:
		if n.Exp != nil && n.Param != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
			w.assigned(n.Param.Value)
		}
		switch {
		case n.Excl && n.Names == 0 && !allIndex(n.Index):
			// ${!x}: the variable x names, which may be an array element
			// whose subscript is evaluated (x='a[$(cmd)]').
			w.evaluates("indirect expansion", "${!NAME} expands the variable that NAME's value names, and a name with a subscript runs the commands in it")
		case n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && strings.Contains(n.Exp.Word.Lit(), "P"):
			// ${x@P} expands the value as a prompt, command substitutions
			// included.
			w.evaluates("prompt expansion", "${NAME@P} expands the value as a prompt string, which runs the command substitutions it holds")
		case n.Index != nil && !allIndex(n.Index) && w.arithRisky(n.Index):
			w.evaluates("array subscript", subscriptRisk)
		case n.Slice != nil && (w.arithRisky(n.Slice.Offset) || w.arithRisky(n.Slice.Length)):
			w.evaluates("arithmetic", arithRisk)
		}
	case *syntax.BinaryArithm:
		switch n.Op {
		case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
			syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
			if x, ok := n.X.(*syntax.Word); ok {
				if t, dyn := word(x); !dyn {
					w.assigned(t)
				}
			}
		}
	}
	return true
}

const (
	arithRisk     = "bash evaluates it as arithmetic, and arithmetic runs the command substitutions in a variable's value (x='a[$(cmd)]'; : $((x)) runs cmd)"
	subscriptRisk = "bash evaluates an indexed array's subscript as arithmetic, which runs the command substitutions in it or in a variable it names"
)

// evaluates records a construct that makes bash evaluate text the line
// does not show as code: no rule can allow the line.
func (w *walker) evaluates(what, why string) {
	w.a.Commands = append(w.a.Commands, Command{Args: []string{"(" + what + ")"}, Prog: "(" + what + ")", Via: w.where(), Pipe: -1, Risk: why})
}

// arithRisky reports whether an arithmetic expression holds anything but
// numbers and operators: a variable (by name or $NAME), whose value bash
// evaluates as arithmetic in turn, a subscript, an expansion, a quoted
// word. Arithmetic of numbers alone runs nothing.
func arithRisky(x syntax.ArithmExpr) bool { return arithRiskyKnown(x, nil) }

// arithRisky is arithRisky with the variables the line set to a number
// before (knownNumbers).
func (w *walker) arithRisky(x syntax.ArithmExpr) bool { return arithRiskyKnown(x, w.known) }

func arithRiskyKnown(x syntax.ArithmExpr, known map[string]bool) bool {
	if x == nil {
		return false
	}
	risky := false
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			if !numberWord(n) && !numericVar(n.Lit()) && !known[n.Lit()] {
				if pe, ok := n.Parts[0].(*syntax.ParamExp); !ok || len(n.Parts) != 1 || !plainNumericParam(pe) && !knownParam(pe, known) {
					risky = true
				}
			}
			return false
		case *syntax.ParamExp:
			if !plainNumericParam(n) && !knownParam(n, known) {
				risky = true
			}
			return false
		}
		return !risky
	})
	return risky
}

// knownParam reports $NAME, a plain expansion of a variable the line set
// to a number (knownNumbers).
func knownParam(pe *syntax.ParamExp, known map[string]bool) bool {
	return pe.Param != nil && known[pe.Param.Value] && pe.Index == nil && pe.Exp == nil && pe.Repl == nil &&
		pe.Slice == nil && !pe.Excl && !pe.Length && !pe.Width && pe.Names == 0
}

// numericVars are variables bash itself sets to a number: their value
// runs nothing in arithmetic (an assignment to one, which could hold
// anything, is judged where it is made: integerVars).
var numericVars = map[string]bool{"RANDOM": true, "SRANDOM": true, "LINENO": true, "SECONDS": true,
	"EPOCHSECONDS": true, "BASHPID": true, "PPID": true, "UID": true, "EUID": true, "#": true, "?": true, "$": true, "!": true}

func numericVar(name string) bool { return numericVars[name] }

// plainNumericParam reports $RANDOM, ${#}, $? and the like: a plain
// expansion of a numericVars variable.
func plainNumericParam(pe *syntax.ParamExp) bool {
	return pe.Param != nil && numericVars[pe.Param.Value] && pe.Index == nil && pe.Exp == nil && pe.Repl == nil &&
		pe.Slice == nil && !pe.Excl && !pe.Length && !pe.Width && pe.Names == 0
}

// numberWord reports a word that is an arithmetic number: 42, 0x2a, 052,
// 2#101010, 64#_@.
func numberWord(x *syntax.Word) bool {
	t := x.Lit()
	if t == "" || len(x.Parts) != 1 || t[0] < '0' || t[0] > '9' {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '#' || c == '@' || c == '_') {
			return false
		}
	}
	return true
}

// testRisky reports an operand of a numeric [[ ]] test that is not a
// number.
func testRisky(x syntax.TestExpr) bool {
	wd, ok := x.(*syntax.Word)
	return !ok || !numberWord(wd)
}

// wordRisky reports a word that is computed or holds any of chars.
func wordRisky(x *syntax.Word, chars string) bool {
	t, dyn := word(x)
	return dyn || strings.ContainsAny(t, chars)
}

// allIndex reports the subscript of a whole array, ${a[@]} or ${a[*]}.
func allIndex(x syntax.ArithmExpr) bool {
	wd, ok := x.(*syntax.Word)
	return ok && (wd.Lit() == "@" || wd.Lit() == "*")
}

// assigned records an assignment made by a loop, an expansion or
// arithmetic: one of a name that changes what later commands run is a part
// no rule can allow (bare).
func (w *walker) assigned(name string) {
	if dangerousName(name) || strings.HasPrefix(name, "GIT_") {
		w.a.bare([]string{name + "="}, w.depth, w.where(), -1, 0)
	}
}

// isPipeStage reports whether the pipe n is itself a stage of an enclosing
// pipe (a | b | c nests as (a | b) | c).
func (w *walker) isPipeStage(n *syntax.BinaryCmd) bool {
	if len(w.stack) < 3 {
		return false
	}
	st, ok := w.stack[len(w.stack)-2].(*syntax.Stmt)
	if !ok {
		return false
	}
	parent, ok := w.stack[len(w.stack)-3].(*syntax.BinaryCmd)
	return ok && (parent.Op == syntax.Pipe || parent.Op == syntax.PipeAll) && (parent.X == st || parent.Y == st)
}

func flattenPipe(b *syntax.BinaryCmd, out []*syntax.Stmt) []*syntax.Stmt {
	for _, s := range []*syntax.Stmt{b.X, b.Y} {
		if c, ok := s.Cmd.(*syntax.BinaryCmd); ok && (c.Op == syntax.Pipe || c.Op == syntax.PipeAll) && !s.Negated && len(s.Redirs) == 0 {
			out = flattenPipe(c, out)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// via names the construct the walker is inside of.
func (w *walker) where() string {
	for i := len(w.stack) - 1; i >= 0; i-- {
		switch w.stack[i].(type) {
		case *syntax.CmdSubst:
			return "$(...)"
		case *syntax.ProcSubst:
			return "<(...)"
		}
	}
	return w.via
}

func (w *walker) stmt(s *syntax.Stmt) {
	pipe, stage := -1, 0
	if ps, ok := w.stages[s]; ok {
		pipe, stage = ps[0], ps[1]
	}
	// Redirections: writes, and here-documents fed to a shell.
	var hdoc string
	hdocDyn, hdocExp := false, false
	var hdocWord string
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.RdrInOut, syntax.DplOut:
			xs, computed := w.redirWords(r.Word)
			if computed {
				w.a.addWrite(Write{Path: Dyn + printWord(r.Word), Op: r.Op.String()})
				continue
			}
			for _, x := range xs {
				// >&file writes a file unless the word is a descriptor or "-".
				if t, dyn := word(x); r.Op != syntax.DplOut || dyn || !isFD(t) {
					w.write(x, r.Op.String())
				}
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				// An unquoted body keeps its expansions in the text the
				// shell would run.
				if t, dyn := word(r.Hdoc); !dyn {
					hdoc = t
				} else {
					hdoc, hdocExp = printWord(r.Hdoc), true
				}
			}
		case syntax.WordHdoc:
			if t, dyn := word(r.Word); !dyn {
				hdoc = t
			} else {
				hdocDyn, hdocWord = true, Dyn+printWord(r.Word)
			}
		case syntax.RdrIn:
			xs, computed := w.redirWords(r.Word)
			if computed {
				xs = []*syntax.Word{r.Word}
			}
			for _, x := range xs {
				if t, dyn := word(x); computed || dyn || wordGlob(x) {
					w.a.addRead(Write{Path: Dyn + printWord(x), Op: "<"})
				} else {
					w.a.addRead(Write{Path: t, Op: "<"})
				}
			}
		}
	}
	if d, ok := s.Cmd.(*syntax.DeclClause); ok {
		// export/declare/local/readonly NAME=VALUE: assignments.
		var env []string
		nameref := d.Variant.Value == "nameref"
		for _, as := range d.Args {
			switch {
			case as.Name != nil && as.Value != nil:
				env = append(env, assignText(as))
			case as.Name != nil && as.Naked && dangerousName(as.Name.Value) && d.Variant.Value == "export":
				env = append(env, as.Name.Value+"=")
			case as.Name == nil && as.Value != nil:
				// An option (-n, -x), or an assignment the parser could
				// not name: declare "PATH=src", declare "$n=src".
				t, dyn := word(as.Value)
				switch {
				case dyn:
					nameref = true
				case strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+"):
					// declare -n REF=NAME makes REF another name for NAME:
					// REF=src then sets PATH. (export -n only unexports.)
					if strings.ContainsRune(t, 'n') && d.Variant.Value != "export" {
						nameref = true
					}
					// declare -i makes every later assignment of the
					// variable arithmetic, which runs the command
					// substitutions in the value (x='a[$(cmd)]').
					if strings.ContainsRune(t, 'i') {
						w.evaluates("integer variable", d.Variant.Value+" "+t+" makes later assignments of the variable arithmetic, "+arithRisk)
					}
				case isAssign(t):
					env = append(env, t)
				default:
					// declare 'a[$(cmd)]=1': an array element, whose
					// subscript bash evaluates: its command
					// substitutions are analysed.
					w.evaluates("array subscript", subscriptRisk)
					w.a.evaluatedWords(d.Variant.Value, []string{t}, w.depth)
				}
			}
		}
		if nameref {
			w.a.Commands = append(w.a.Commands, Command{Args: []string{d.Variant.Value}, Prog: d.Variant.Value, Via: w.where(), Pipe: pipe, Stage: stage,
				Risk: d.Variant.Value + " makes a name reference or a computed name, which can assign any variable (PATH, CDPATH)"})
		}
		w.a.bare(env, w.depth, w.where(), pipe, stage)
		return
	}
	if l, ok := s.Cmd.(*syntax.LetClause); ok {
		// let EXPR...: the parser reads the expressions (a quoted one is
		// a word, read as arithmetic when it runs); the command is a part
		// like any other, and assigns what its words name (let 'PATH=1').
		args := []string{"let"}
		for _, x := range l.Exprs {
			if wd, ok := x.(*syntax.Word); ok {
				if t, dyn := word(wd); !dyn {
					args = append(args, t)
				} else {
					args = append(args, Dyn+printWord(wd))
				}
				continue
			}
			var b strings.Builder
			printerMu.Lock()
			printer.Print(&b, x)
			printerMu.Unlock()
			args = append(args, b.String())
		}
		w.a.add(nil, args, w.depth, w.where(), pipe, stage)
		return
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		return
	}
	var env []string
	for _, as := range call.Assigns {
		if as.Name != nil {
			env = append(env, assignText(as))
		}
	}
	args := make([]string, 0, len(call.Args))
	overflow := false
	for _, a := range call.Args {
		xs, over := w.a.braces(a, maxLineBraceWords-w.a.braceWords)
		w.a.braceWords += len(xs)
		overflow = overflow || over
		for _, x := range xs {
			t, dyn := word(x)
			if dyn {
				t = Dyn + printWord(x)
			}
			if t == "" && len(xs) > 1 && !quoted(x) {
				continue // bash removes the empty words a brace expansion makes
			}
			if !dyn && wordGlob(x) {
				if len(w.a.Globs) >= maxGlobs {
					// Each glob is a look at the disk.
					w.a.tooComplex()
				}
				w.a.Globs = append(w.a.Globs, t)
			}
			args = append(args, t)
		}
	}
	if len(args) == 0 {
		w.a.bare(env, w.depth, w.where(), pipe, stage)
		return
	}
	n := len(w.a.Commands)
	w.a.add(env, args, w.depth, w.where(), pipe, stage)
	if overflow && len(w.a.Commands) > n {
		w.a.Commands[n].Risk = "a brace expansion in it is too large to read"
	}
	// apply_patch reading its patch from a here-document.
	if len(w.a.Commands) > n && progKinds[w.a.Commands[n].Prog]&kPatch != 0 && len(args) == 1 {
		switch {
		case hdoc != "":
			w.a.patch(hdoc)
		default:
			w.a.patch(Dyn + "(input)")
		}
	}
	// A shell reading its commands from a here-document or here-string:
	// the command itself, or one a wrapper runs (`sudo bash <<EOF`), or
	// one in a line such a shell runs (`bash -c bash <<EOF`), all of which
	// read the same input.
	if hdoc == "" && !hdocDyn {
		return
	}
	for k := n; k < len(w.a.Commands); k++ {
		c := &w.a.Commands[k]
		if len(c.Args) == 0 || !(shells[c.Prog] && !hasC(c.Args) || sourcesStdin(c.Prog, c.Args)) {
			continue
		}
		switch {
		case hdoc != "" && hdocExp:
			// The shell reads the body after its expansions: what their
			// values hold is code too.
			w.a.computed("(the here-document a shell runs, partly computed at run time)", "heredoc")
			w.a.partialLine(hdoc, w.depth, "heredoc")
		case hdoc != "":
			w.a.line(hdoc, w.depth+1, "heredoc")
		default:
			w.a.partial([]string{hdocWord}, w.depth, "heredoc")
		}
		return
	}
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// redirWords returns the words a redirection's target expands to, and
// whether it is computed. bash brace-expands it as it does a command's
// words, and a target that expands to one word (the empty words of
// {.git/config,} are dropped) is that word: echo x > {.git/config,}
// writes .git/config. Two words or more are an error in bash ("ambiguous
// redirect"); each is returned, and so checked, all the same. A target
// too large to expand, or one bash may still read as braces, is
// computed.
func (w *walker) redirWords(x *syntax.Word) ([]*syntax.Word, bool) {
	if x == nil {
		return nil, false
	}
	xs, _ := w.a.braces(x, maxLineBraceWords-w.a.braceWords)
	if len(xs) == 1 {
		_, dyn := word(xs[0])
		return xs, dyn && xs[0] != x
	}
	w.a.braceWords += len(xs)
	out := xs[:0:0]
	for _, y := range xs {
		if t, dyn := word(y); t == "" && !dyn && !quoted(y) {
			continue // bash removes the empty words a brace expansion makes
		}
		out = append(out, y)
	}
	return out, false
}

func (w *walker) write(x *syntax.Word, op string) {
	if x == nil {
		return
	}
	t, dyn := word(x)
	if dyn || wordGlob(x) {
		// A glob in a write target is expanded by bash against the files
		// that exist then: the path is computed.
		t = Dyn + printWord(x)
	}
	w.a.addWrite(Write{Path: t, Op: op})
}

// assignText is NAME=VALUE for an assignment, Dyn-prefixed when the value
// is computed.
func assignText(as *syntax.Assign) string {
	if as.Value == nil {
		return as.Name.Value + "="
	}
	t, dyn := word(as.Value)
	if dyn {
		return Dyn + as.Name.Value + "=" + printWord(as.Value)
	}
	return as.Name.Value + "=" + t
}

// quoted reports whether a word has a quoted part.
func quoted(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		}
	}
	return false
}

// wordGlob reports whether a word holds an unquoted glob character.
func wordGlob(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "*?[") {
			return true
		}
	}
	return false
}

// braces expands brace expressions ({a,b}, {1..3}) the way bash does,
// into at most budget words. A word with more than maxBraceOpen brace
// characters makes the line too complex: splitting it costs the square of
// its length.
func (a *Analysis) braces(w *syntax.Word, budget int) ([]*syntax.Word, bool) {
	open := 0
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			open += strings.Count(l.Value, "{")
		}
	}
	switch {
	case open == 0:
		return []*syntax.Word{w}, false
	case open > maxBraceOpen:
		a.tooComplex()
		return []*syntax.Word{tooMany(w)}, true
	}
	return expandBraces(w, budget)
}

// word returns the value of a word with quoting removed, and whether any of
// it is computed at run time. A leading tilde is expanded as bash expands
// it: ~ and ~/ stay for the caller (the home folder), ~user is that user's
// home, and ~+ and ~- (the current and previous folder) are computed.
func word(w *syntax.Word) (string, bool) {
	t, dyn := wordText(w)
	// Bash uses the bytes 0x01 and 0x7f internally (CTLESC, CTLNUL) and
	// treats them specially in words: such a word is not read as text.
	if !dyn && (ctlByte(t) || ctlSource(w)) {
		return t, true
	}
	return t, dyn
}

// ctlSource reports whether the source text of a word holds 0x01 or 0x7f.
func ctlSource(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if ctlByte(p.Value) {
				return true
			}
		case *syntax.SglQuoted:
			if ctlByte(p.Value) {
				return true
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok && ctlByte(l.Value) {
					return true
				}
			}
		}
	}
	return false
}

func ctlByte(s string) bool {
	return strings.IndexByte(s, 0x01) >= 0 || strings.IndexByte(s, 0x7f) >= 0
}

func wordText(w *syntax.Word) (string, bool) {
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && strings.IndexByte(l.Value, '\\') < 0 && (l.Value == "" || l.Value[0] != '~') {
			return l.Value, false
		}
	}
	var b strings.Builder
	dyn := false
	if l, ok := w.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(l.Value, "~") {
		prefix, _, _ := strings.Cut(l.Value, "/")
		if len(w.Parts) > 1 && !strings.Contains(l.Value, "/") {
			// ~"user"/x: bash does not expand a tilde prefix with quotes.
			prefix = ""
		}
		switch {
		case prefix == "" || prefix == "~":
		case prefix == "~+" && len(w.Parts) == 1 || prefix == "~+" && strings.Contains(l.Value, "/"):
			// ~+ is $PWD, the folder the command runs in: the path is
			// relative to it, as ./ is (resolved after the line's cds).
			b.WriteString(".")
			w = &syntax.Word{Parts: append([]syntax.WordPart{&syntax.Lit{Value: l.Value[len(prefix):]}}, w.Parts[1:]...)}
		case prefix == "~+" || prefix == "~-" || strings.ContainsAny(prefix, "\\"):
			dyn = true
		default:
			if home, ok := userHome(prefix[1:]); ok {
				b.WriteString(home)
				w = &syntax.Word{Parts: append([]syntax.WordPart{&syntax.Lit{Value: l.Value[len(prefix):]}}, w.Parts[1:]...)}
			}
		}
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				v, unsure := ansiC(p.Value)
				b.WriteString(v)
				dyn = dyn || unsure
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, true))
				} else {
					dyn = true
				}
			}
		default:
			dyn = true
		}
	}
	return b.String(), dyn
}

// unescape removes shell backslash escapes. Inside double quotes only \$ \`
// \" \\ and \newline are escapes.
func unescape(s string, dq bool) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			n := s[i+1]
			if n == '\n' {
				i++
				continue
			}
			if !dq || strings.IndexByte("$`\"\\", n) >= 0 {
				b.WriteByte(n)
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func printWord(w *syntax.Word) string {
	var b strings.Builder
	printerMu.Lock()
	printer.Print(&b, w)
	printerMu.Unlock()
	return b.String()
}

// forLiteral reads `for NAME in WORDS; do BODY; done` whose WORDS are
// literal (globs included) by analysing BODY once for each word, with
// NAME's expansions ("$NAME", ${NAME}) replaced by it: for f in src/*.go;
// do wc -l "$f"; done is wc -l src/*.go. It reports false, and the loop
// is read as before, when BODY could use NAME otherwise (in single
// quotes, inside a longer double-quoted word, assigned or read again).
func (w *walker) forLiteral(wi *syntax.WordIter, body []*syntax.Stmt) bool {
	name := wi.Name.Value
	if len(wi.Items) == 0 || len(wi.Items) > 16 || dangerousName(name) {
		return false
	}
	var b strings.Builder
	printerMu.Lock()
	for _, st := range body {
		printer.Print(&b, st)
		b.WriteString("\n")
	}
	printerMu.Unlock()
	src := b.String()
	if strings.ContainsAny(src, "'\\") || strings.Contains(src, name+"=") || strings.Contains(src, "read") ||
		strings.Contains(src, "for ") || strings.Contains(src, "select") || strings.Contains(src, "${"+name+":") ||
		strings.Contains(src, "${#"+name) || strings.Contains(src, "${!") || strings.Contains(src, "declare") ||
		strings.Contains(src, "local") || strings.Contains(src, "eval") || strings.Contains(src, "unset") {
		return false
	}
	var items []string
	for _, it := range wi.Items {
		t, dyn := word(it)
		if dyn || t == "" || strings.IndexFunc(t, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/*?-+=,:@%", r))
		}) >= 0 {
			return false
		}
		items = append(items, t)
	}
	ref := regexp.MustCompile(`\$(` + regexp.QuoteMeta(name) + `\b|\{` + regexp.QuoteMeta(name) + `\})`)
	quoted := regexp.MustCompile(`"\$(` + regexp.QuoteMeta(name) + `\b|\{` + regexp.QuoteMeta(name) + `\})"`)
	rest := quoted.ReplaceAllString(src, "")
	if ref.MatchString(rest) && strings.Contains(rest, "\"") {
		return false // inside a longer double-quoted word
	}
	for _, it := range items {
		text := quoted.ReplaceAllLiteralString(src, it)
		text = ref.ReplaceAllLiteralString(text, it)
		before := w.a.Err
		w.a.line(text, w.depth+1, "for "+name)
		if w.a.Err != before {
			return true // the error stands: the line is refused
		}
	}
	return true
}

// knownNumbers returns the variables a line may come to know as numbers
// (i=0; i=$((i+1))): each is assigned only by plain NAME=NUMBER or
// NAME=$((...)) statements at the top level of the line (not in a list, a
// pipeline, a subshell, a loop or a function), and the line has no builtin
// that could assign it otherwise (read, declare, eval, source ...), no
// computed command and no function. The walker knows a variable from the
// end of the first such statement on: a line of top-level statements runs
// in the order it is walked.
func knownNumbers(f *syntax.File) map[string]bool {
	known := map[string]bool{}
	other := map[string]bool{}
	top := map[*syntax.Stmt]bool{}
	for _, st := range f.Stmts {
		top[st] = true
	}
	bail := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if bail {
			return false
		}
		switch n := n.(type) {
		case *syntax.FuncDecl, *syntax.DeclClause, *syntax.LetClause:
			bail = true
		case *syntax.ForClause:
			if wi, ok := n.Loop.(*syntax.WordIter); ok && wi.Name != nil {
				other[wi.Name.Value] = true
			}
		case *syntax.Stmt:
			call, ok := n.Cmd.(*syntax.CallExpr)
			if !ok {
				return true
			}
			if len(call.Args) > 0 {
				t, dyn := word(call.Args[0])
				switch {
				case dyn:
					bail = true
				case t == "read" || t == "mapfile" || t == "readarray" || t == "eval" || t == "source" || t == "." ||
					t == "trap" || t == "printf" || t == "getopts" || t == "unset" || t == "export" || t == "declare" ||
					t == "typeset" || t == "local" || t == "readonly" || t == "let" || t == "alias" || t == "set":
					bail = true
				}
			}
			for _, as := range call.Assigns {
				if as.Name == nil {
					continue
				}
				name := as.Name.Value
				if !top[n] || len(call.Args) > 0 || as.Index != nil || as.Append || !numericValue(as.Value) || len(n.Redirs) > 0 {
					other[name] = true
				}
			}
		}
		return true
	})
	if bail {
		return nil
	}
	for _, st := range f.Stmts {
		call, ok := st.Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) > 0 {
			continue
		}
		for _, as := range call.Assigns {
			if as.Name != nil && !other[as.Name.Value] && !dangerousName(as.Name.Value) {
				known[as.Name.Value] = true
			}
		}
	}
	return known
}

// numericValue reports a value that is a literal number or one arithmetic
// expansion $((...)).
func numericValue(v *syntax.Word) bool {
	if v == nil || len(v.Parts) != 1 {
		return false
	}
	switch p := v.Parts[0].(type) {
	case *syntax.Lit:
		return numberWord(v) && !strings.ContainsAny(p.Value, "#@_")
	case *syntax.ArithmExp:
		return true
	}
	return false
}
