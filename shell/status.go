package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Succeeded returns the part of a line whose success the line's success
// implies: the commands that must each have exited 0 when the whole line
// did. A sequence rule's `after: {ok: true}` counts an earlier line as the
// passing run of a command only when the command is there (docs/policy.md,
// "Sequence rules"):
//
//   - in a list (a; b, or a newline), only the last statement: the others'
//     status is lost;
//   - with a && b, both; with a || b, neither (either may have failed);
//   - in a pipeline, only the last stage (without pipefail, the others'
//     status is lost);
//   - a negated (!) or backgrounded (&) statement, none;
//   - a subshell, a { } group, and if/while bodies: the group's last
//     statement as above (a loop or a condition: none).
//
// The parts are joined with " && " as a line of their own, to be analysed
// like any line; a line that does not parse, or implies nothing, gives "".
func Succeeded(line string) string {
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(line), "")
	parsers.Put(p)
	if err != nil || len(f.Stmts) == 0 {
		return ""
	}
	var parts []string
	implied(f.Stmts[len(f.Stmts)-1], &parts)
	return strings.Join(parts, " && ")
}

// implied adds the statements whose success s's success implies.
func implied(s *syntax.Stmt, parts *[]string) {
	if s == nil || s.Negated || s.Background || s.Coprocess {
		return
	}
	switch c := s.Cmd.(type) {
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			implied(c.X, parts)
			implied(c.Y, parts)
		case syntax.Pipe, syntax.PipeAll:
			implied(c.Y, parts)
		}
		// OrStmt: neither side.
	case *syntax.Subshell:
		if len(c.Stmts) > 0 {
			implied(c.Stmts[len(c.Stmts)-1], parts)
		}
	case *syntax.Block:
		if len(c.Stmts) > 0 {
			implied(c.Stmts[len(c.Stmts)-1], parts)
		}
	case *syntax.CallExpr, *syntax.DeclClause, *syntax.TestClause, *syntax.ArithmCmd, *syntax.TimeClause:
		var b strings.Builder
		printerMu.Lock()
		err := printer.Print(&b, &syntax.Stmt{Cmd: s.Cmd, Redirs: s.Redirs})
		printerMu.Unlock()
		if err == nil {
			*parts = append(*parts, strings.TrimSpace(b.String()))
		}
	}
	// if, while, for, case, functions: their status depends on branches
	// and iterations warden does not follow.
}
