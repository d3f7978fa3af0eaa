package shell_test

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/warden-run/warden/shell"
)

// FuzzExpandMatchesBash compares warden's reading of static words (quoting,
// escapes, ANSI-C strings, brace expansion, tilde forms) with bash's own:
// bash prints each word of `printf '%s\0' WORDS` and the two must agree.
// Lines whose words are computed at run time, hold a glob, or that bash
// rejects are skipped.
func FuzzExpandMatchesBash(f *testing.F) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("bash is not installed")
	}
	for _, s := range []string{`a'b'"c"`, `$'\x2e\x2e'`, `$'\056git'`, `$'\u00e9\cA\e'`, `{a,b}c`, `x{1..3}`, `{01..03}`,
		`a\ b`, `"a\"b"`, `'a\'`, `~root/x`, `$'a\0b'`, `{a,{b,c}}`, `"\$x"`, `$'\''`, `x{a..e..2}`, `\~`,
		`$'\ud800'`, `$'a\U00110000b'`, `$'\U7fffffff'`, `$'a\U80000000b'`, `A=~`, `P=x:~/y`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, words string) {
		if len(words) > 200 || strings.ContainsAny(words, "\n\r$`*?[;&|<>()#!\\\x00") && !onlySafeSpecials(words) {
			return
		}
		if strings.Contains(words, "~+") {
			return // ~+ is read as ./, the folder the command runs in ($PWD), left for the engine
		}
		line := "printf '%s\\0' " + words
		a := shell.Analyze(line)
		if a.Err != nil || len(a.Commands) != 1 || a.Commands[0].Prog != "printf" {
			return
		}
		got := a.Commands[0].Args[2:]
		if len(got) == 0 {
			return // printf prints its format once with no words
		}
		for _, w := range got {
			if shell.IsDyn(w) || strings.HasPrefix(w, "~") || assignTilde(w) {
				return // computed, or left for the engine (the home folder)
			}
		}
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", line).Output()
		if err != nil {
			return
		}
		var want []string
		for _, w := range bytes.Split(out, []byte{0}) {
			want = append(want, string(w))
		}
		want = want[:len(want)-1] // the text after the last NUL
		if !slices.Equal(got, want) {
			t.Fatalf("words %q: warden reads %q, bash %q", words, got, want)
		}
	})
}

// assignTilde reports a word that looks like an assignment (NAME=...) with
// a tilde after its = or a colon: bash expands such a tilde as it expands
// a leading one (A=~ is A=$HOME, PATH=~/bin:~/x too), and warden leaves it,
// as a leading one, for the engine, which knows the home folder (a
// program's NAME=VALUE option, dd's of=~/x, is read from its value).
func assignTilde(w string) bool {
	name, val, ok := strings.Cut(w, "=")
	if !ok || name == "" || !validName(name) {
		return false
	}
	return strings.HasPrefix(val, "~") || strings.Contains(val, ":~")
}

func validName(s string) bool {
	for i, c := range s {
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && (i == 0 || !(c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// onlySafeSpecials allows the special characters that stay static: a $
// only as $' (ANSI-C quoting) and backslashes.
func onlySafeSpecials(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '$':
			if i+1 >= len(s) || s[i+1] != '\'' {
				return false
			}
		case '\\':
		case '\n', '\r', '`', '*', '?', '[', ';', '&', '|', '<', '>', '(', ')', '#', '!', 0:
			return false
		}
	}
	return true
}
