package shell

import (
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// expandBraces splits and expands the brace expressions of a word.
func expandBraces(w *syntax.Word) []*syntax.Word {
	cp := *w
	syntax.SplitBraces(&cp)
	out := expand.Braces(&cp)
	if len(out) == 0 {
		return []*syntax.Word{w}
	}
	return out
}
