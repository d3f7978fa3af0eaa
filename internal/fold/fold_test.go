package fold

import (
	"strings"
	"testing"
)

// TestKey: two strings have one key exactly when strings.EqualFold holds.
func TestKey(t *testing.T) {
	words := []string{"name", "Name", "NAME", "nAmE", "arguments", "argument\u017f", "ARGUMENTS", "k", "K", "\u212a",
		"ß", "SS", "ss", "é", "É", "e\u0301", "path", "paths", "", "1", "_x", "_X", "Σ", "σ", "ς"}
	for _, a := range words {
		for _, b := range words {
			if got, want := Key(a) == Key(b), strings.EqualFold(a, b); got != want {
				t.Errorf("Key(%q) == Key(%q) is %v, EqualFold says %v", a, b, got, want)
			}
		}
	}
}
