package warden_test

import (
	"testing"

	"github.com/warden-run/warden"
)

func TestTerminalSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, kept", "plain text, kept"},
		{"⚡ RULES ⚡ → do  this  \n┌─box─┐ 🚫\n", " RULES  -> do  this\nbox\n"},
		{"👍🏽 thumbs\u200d and ✔️ check", " thumbs and  check"},
		{"tab\tand é ü 中文 kept", "tab\tand é ü 中文 kept"},
		{"no\u00a0break\r\nline", "no break\nline"},
	} {
		if got := warden.TerminalSafe(c.in); got != c.want {
			t.Errorf("TerminalSafe(%q) = %q, want %q", c.in, got, c.want)
		}
		if r, bad := warden.UnsafeRune(c.want); bad {
			t.Errorf("UnsafeRune(%q) = %q, want none", c.want, r)
		}
	}
	if r, ok := warden.UnsafeRune("ok ━ then"); !ok || r != '━' {
		t.Errorf("UnsafeRune found %q %v, want ━", r, ok)
	}
}
