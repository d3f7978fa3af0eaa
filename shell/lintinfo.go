package shell

import (
	"strings"

	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/shell/progs"
)

// What lint needs to know of command patterns (policy lint, "a pattern
// whose meaning differs from its spelling").

// Unwraps reports whether the command a program runs is judged as a part
// of its own (sudo, timeout, env, xargs, nice, a shell's -c, eval): a
// rule for the program vouches for it alone, not for what it runs.
func Unwraps(prog string) bool {
	if wrappers[prog] != nil || shells[prog] {
		return true
	}
	switch prog {
	case "eval", "script", "tmux", "hyperfine", "nix-shell", "sg", "direnv":
		return true
	}
	return false
}

// PatternOptionUnknown returns, for a command pattern, why an option it
// names is not one the program's table knows ("--forse is not an option
// of git push warden knows"), or "". Commands are read with the tables,
// so such a pattern meets no call that warden reads.
func PatternOptionUnknown(src string) string {
	for _, part := range strings.Split(src, "|") {
		toks := strings.Fields(part)
		if len(toks) == 0 {
			continue
		}
		for k := range toks {
			toks[k] = unquote(toks[k])
		}
		prog := base(toks[0])
		spec := progs.Lookup(prog)
		if spec == nil || glob.HasMeta(prog) {
			continue
		}
		var r progs.Result
		spec.Parse(&r, toks, false) // as a call: an unknown option is a risk
		if strings.Contains(r.Risk, "is not an option of") {
			return r.Risk
		}
	}
	return ""
}

// IsSub reports whether name is a subcommand of prog in warden's tables.
func IsSub(prog, name string) bool {
	spec := progs.Lookup(prog)
	return spec != nil && spec.Sub(name) != nil
}
