package shell

import (
	"fmt"
	"testing"
)

// shape is an analysis with pipeline ids renumbered by first appearance and
// computed words reduced to a marker, for comparing the two parsers.
func shape(a *Analysis) string {
	ids := map[int]int{}
	s := ""
	for _, c := range a.Commands {
		pipe := -1
		if c.Pipe >= 0 {
			if _, ok := ids[c.Pipe]; !ok {
				ids[c.Pipe] = len(ids)
			}
			pipe = ids[c.Pipe]
		}
		prog := c.Prog
		if c.Dynamic {
			prog = "$" // the display text of a computed program may differ
		}
		s += fmt.Sprintf("[%s dyn=%v via=%s pipe=%d/%d", prog, c.Dynamic, c.Via, pipe, c.Stage)
		for _, w := range c.Args[1:] {
			if IsDyn(w) {
				w = "$"
			}
			s += " " + w
		}
		s += "]"
	}
	for _, w := range a.Writes {
		p := w.Path
		if IsDyn(p) {
			p = "$"
		}
		s += fmt.Sprintf("{%s %s %v}", w.Op, p, w.Delete)
	}
	return s
}

func both(line string) (fast, full *Analysis, ok bool) {
	if !fastValid(line) {
		return nil, nil, false
	}
	fast = Analyze(line)
	full = &Analysis{noFast: true}
	full.Analyze(line)
	return fast, full, true
}

func TestFastMatchesParser(t *testing.T) {
	for _, line := range []string{"git status", "a && b | c; $(d)", "echo $(rm -rf build)", "X=$(rm -rf x) true",
		"a|b|c", "sudo rm -rf x", "ls | xargs rm -rf", "a $(b $(c)) d", "x=1", "rm -rf a b; mv a b",
		"timeout 5 bash -c x", "git push origin +main --force"} {
		fast, full, ok := both(line)
		if !ok {
			t.Errorf("%q: the fast lexer should accept it", line)
			continue
		}
		if fast.Err != nil || full.Err != nil {
			t.Errorf("%q: errors fast=%v full=%v", line, fast.Err, full.Err)
		}
		if a, b := shape(fast), shape(full); a != b {
			t.Errorf("%q:\nfast %s\nfull %s", line, a, b)
		}
	}
	for _, line := range []string{"echo 'x'", "a & b", "a;;b", "$((1+2))", "a > b", "(a)", "if x; then y; fi", "~/x", "a\nb"} {
		if fastValid(line) {
			t.Errorf("%q: the fast lexer must leave it to the parser", line)
		}
	}
}

func FuzzFastMatchesParser(f *testing.F) {
	for _, s := range []string{"git status", "a && b | c; $(d)", "X=$(rm -rf x) true", "a $(b $(c)) d", "a||b&&c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fast, full, ok := both(line)
		if !ok {
			return
		}
		if full.Err != nil {
			t.Fatalf("%q: the parser rejects what the fast lexer accepts: %v", line, full.Err)
		}
		if a, b := shape(fast), shape(full); a != b {
			t.Fatalf("%q:\nfast %s\nfull %s", line, a, b)
		}
	})
}
