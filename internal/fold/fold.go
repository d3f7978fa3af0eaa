// Package fold gives one spelling per class of strings that are equal
// under Unicode simple case folding, the folding Go's encoding/json and
// strings.EqualFold use to compare names ("K", "k" and the Kelvin sign are
// one class; "ß" and "SS" are not).
package fold

import (
	"unicode"
	"unicode/utf8"
)

// Key returns the spelling of s's class: each letter becomes the least
// rune of its folding orbit, which for an ASCII letter is its upper case.
// Two strings are equal under simple folding exactly when their keys are.
func Key(s string) string {
	lower, ascii := false, true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			ascii = false
		case 'a' <= c && c <= 'z':
			lower = true
		}
	}
	if ascii {
		if !lower {
			return s
		}
		b := []byte(s)
		for i, c := range b {
			if 'a' <= c && c <= 'z' {
				b[i] = c - 'a' + 'A'
			}
		}
		return string(b)
	}
	b := make([]rune, 0, len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b = append(b, m)
	}
	return string(b)
}
