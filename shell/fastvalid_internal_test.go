package shell

import "testing"

// fastValidRecursive is fastValid as it was before it read the line once:
// the reference FuzzFastValidLinear compares against.
func fastValidRecursive(src string) bool {
	words, inWord, cmdWords := 0, false, 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case plain(c):
			if !inWord {
				if cmdWords == 0 && reserved(wordAt(src, i)) {
					return false
				}
				inWord = true
				words++
				cmdWords++
			}
		case c == '$':
			end := groupEnd(src, i)
			if end < 0 || !fastValidRecursive(src[i+2:end-1]) {
				return false
			}
			if !inWord {
				inWord = true
				words++
				cmdWords++
			}
			i = end - 1
		case c == ' ' || c == '\t':
			inWord = false
		case c == ';' || c == '|' || c == '&':
			inWord = false
			if cmdWords == 0 {
				return false
			}
			if c == '&' {
				if i+1 >= len(src) || src[i+1] != '&' {
					return false
				}
				i++
			} else if c == '|' && i+1 < len(src) && src[i+1] == '|' {
				i++
			}
			if c != ';' && !moreWords(src[i+1:]) {
				return false
			}
			cmdWords = 0
		default:
			return false
		}
	}
	return words > 0
}

func FuzzFastValidLinear(f *testing.F) {
	for _, s := range []string{"git status", "a && b | c; $(d)", "a $(b $(c)) d", "$(a)b$(c", "$()", "a $(b &&)",
		"$(if x)", "a;$(b;)", "$(a) && $( $(b) )", "a ) b", "$((1))", "x$(y)z || w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if got, want := fastValid(line), fastValidRecursive(line); got != want {
			t.Fatalf("fastValid(%q) = %v, the recursive reading says %v", line, got, want)
		}
	})
}
