package engine

import (
	"github.com/warden-run/warden"
	"github.com/warden-run/warden/shell"
)

// gitAfterCd checks git (or go build, which runs git) run after the
// line's one plain `cd DIR` (shell's Analysis.GitCd): git there uses the
// repository it finds from DIR, which is checked as the call's own folder
// is (gitHere). `cd /work/project && git status` is the workspace's own
// repository; `cd pkg/evil && git status`, with pkg/evil/.git an agent
// wrote, is not. The line must not make a repository there before git
// runs, and DIR must be inside the workspace; otherwise git there asks, as
// git after any other change of folders does.
func (e *Engine) gitAfterCd(st *state, a *shell.Analysis) {
	why := repoMaking(a)
	abs, _, inside := e.resolve(a.GitCd, st.cwd())
	if why == "" && !inside {
		why = "enters " + e.show(abs) + ", outside the workspace,"
	}
	if why != "" {
		st.check("git", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: shell.Display(a.GitCd),
			extra: "git runs after cd " + shell.Display(a.GitCd) + ", and the line " + why + " where a repository whose configuration runs programs may be"})
		return
	}
	e.gitHere(st, abs)
}

// repoMaking says how a line may put a repository in place before its
// git runs: a write into a .git folder or of a file a repository's folder
// holds (HEAD, config, objects, refs, commondir), a copy, move or
// extraction, a computed write, or git init or clone. "" when it does not.
func repoMaking(a *shell.Analysis) string {
	if why := mayWrite(a.Writes, repoNames, true); why != "" {
		return why
	}
	for _, c := range a.Commands {
		if c.Prog == "git" && (c.Sub == "init" || c.Sub == "clone") {
			return "runs git " + c.Sub
		}
	}
	return ""
}

var repoNames = map[string]bool{".git": true, "head": true, "config": true, "objects": true, "refs": true, "commondir": true, "packed-refs": true}
