package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// cdChain sets CdFirst for a line of the form `cd DIR && CMD && ... [&&
// cd X ...]`: one && list, the first command a plain cd into a literal
// DIR, no other change of folders but plain cds at its end (after which
// nothing runs), no loop or function. With && a later command runs only
// if the cd succeeded, so every relative path of the line is in DIR.
// first is the index of the line's first command in the analysis and via
// how the line is reached (the shell -c of an argument vector).
func (a *Analysis) cdChain(line string, first int, via string) {
	if a.cdOther || a.cdPlain == 0 || len(a.Commands) <= first || a.Commands[first].Prog != "cd" || a.Commands[first].Via != via {
		return
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(line), "")
	parsers.Put(p)
	if err != nil || len(f.Stmts) != 1 {
		return
	}
	var leaves []*syntax.Stmt
	var flatten func(s *syntax.Stmt) bool
	flatten = func(s *syntax.Stmt) bool {
		if s.Background || s.Coprocess || s.Negated {
			return false
		}
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.AndStmt && len(s.Redirs) == 0 {
			return flatten(b.X) && flatten(b.Y)
		}
		leaves = append(leaves, s)
		return true
	}
	if !flatten(f.Stmts[0]) || len(leaves) < 2 {
		return
	}
	dir, ok := plainCd(leaves[0])
	if !ok {
		return
	}
	// The cds after the first: only at the end.
	tail, cds := false, 1
	for _, l := range leaves[1:] {
		_, isCd := plainCd(l)
		switch {
		case isCd:
			tail = true
			cds++
		case tail || changesFolder(l):
			return
		}
	}
	if a.cdPlain != cds {
		// A cd the syntax does not show (in a bash -c string, an eval)
		// changes folders too.
		return
	}
	a.CdFirst = dir
}

// plainCd reports a statement that is `cd DIR` alone, DIR literal.
func plainCd(s *syntax.Stmt) (string, bool) {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(s.Redirs) > 0 || len(c.Assigns) > 0 || len(c.Args) != 2 || c.Args[0].Lit() != "cd" {
		return "", false
	}
	d, dyn := word(c.Args[1])
	if dyn || d == "" || d == "-" || strings.HasPrefix(d, "~") || strings.HasPrefix(d, "-") {
		return "", false
	}
	return d, true
}

// changesFolder reports a statement that may change folders or repeat:
// a cd, pushd or popd anywhere in it, a loop or a function.
func changesFolder(s *syntax.Stmt) bool {
	found := false
	syntax.Walk(s, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				switch n.Args[0].Lit() {
				case "cd", "pushd", "popd":
					found = true
				}
			}
		case *syntax.WhileClause, *syntax.ForClause, *syntax.FuncDecl:
			found = true
		}
		return !found
	})
	return found
}
