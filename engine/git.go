package engine

import (
	"path/filepath"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/shell"
)

// gitHere asks for a git command run in a working folder (the call's
// cwd, or the shell tool's) where git finds a repository other than the
// workspace root's: a folder that is itself a repository's folder (HEAD,
// objects/ and refs/, as git recognises a bare repository), or one below
// the root with a .git of its own. Its configuration can run any program
// (core.sshCommand for git fetch, core.fsmonitor for git status), and an
// agent can write it with file tools where it may edit files. As the
// shell analysis does for git -C DIR and cd DIR && git.
func (e *Engine) gitHere(st *state, cwd string) {
	if cwd == e.rootRaw && e.rootGit {
		return
	}
	dir := e.evalPath(cwd)
	if dir == e.root && e.rootGit {
		// The workspace's own repository (the common case, and no I/O):
		// git run in the root is what the policy's rules are for.
		return
	}
	// As git looks: in each folder from dir up, a .git first, then the
	// folder itself as a repository's folder.
	for d := dir; ; d = filepath.Dir(d) {
		rel, inside := e.relTo(d)
		if !inside {
			return // outside the workspace: not a repository an agent wrote
		}
		repo := ""
		gp := &e.rootGitPaths // the root's, built once
		if d != e.root {
			gp = gitPaths(d)
		}
		if _, err := e.ws.Lstat(gp[0]); err == nil {
			repo = gp[0]
		} else if gitDirShape(e.ws, gp) {
			repo = d
		}
		if repo != "" && !e.ownRepo(repo) && !e.ownRepo(d) {
			st.check("git", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: rel,
				extra: "git runs in " + e.show(dir) + ", where it uses the repository " + e.show(repo) + ", whose configuration could run programs"})
			return
		}
		if d == e.root || repo != "" {
			return
		}
	}
}

// ownRepo reports the workspace root's own repository folder.
func (e *Engine) ownRepo(repo string) bool { return repo == e.ownGit }

// gitPaths are the paths git looks at in the folder d: its .git, and the
// HEAD, objects and refs of a repository's own folder.
func gitPaths(d string) *[4]string {
	return &[4]string{d + "/.git", filepath.Join(d, "HEAD"), filepath.Join(d, "objects"), filepath.Join(d, "refs")}
}

// gitDirShape reports a folder git takes for a repository's own folder
// when it starts there (its gitPaths): a HEAD file, and objects/ and
// refs/ folders.
func gitDirShape(ws Workspace, gp *[4]string) bool {
	if fi, err := ws.Stat(gp[1]); err != nil || fi.IsDir() {
		return false
	}
	for _, sub := range gp[2:] {
		if fi, err := ws.Stat(sub); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// wardenReadOnly are the warden subcommands that change nothing.
var wardenReadOnly = map[string]bool{"check": true, "explain": true, "lint": true, "test": true, "version": true,
	"doctor": true, "audit": true, "help": true, "-h": true, "--help": true, "--version": true}

// wardenCommand denies an agent's call of warden itself that would change
// warden's state: answering its own approvals, adding grants, resuming a
// halt, purging the audit, rewiring the hooks. Like warden's own files,
// this holds in every mode.
func (e *Engine) wardenCommand(st *state, c *shell.Command) {
	sub := ""
	for _, w := range c.Args[1:] {
		if shell.IsDyn(w) {
			sub = "(computed)"
			break
		}
		if !strings.HasPrefix(w, "-") || wardenReadOnly[w] {
			sub = w
			break
		}
	}
	if wardenReadOnly[sub] || c.Prog == "warden-hook" && sub == "" {
		return
	}
	st.own = true
	st.check("warden", item{effect: warden.Deny, code: warden.CodeProtectedPath, subject: "warden's own state (warden " + sub + ")"})
}
