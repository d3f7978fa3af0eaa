package engine

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/warden-run/warden/host"
)

// repoControl are protected globs every policy has: the workspace's
// repository. git runs in it without asking (gitHere), and its config,
// hooks and commondir (where git finds the config) choose programs that
// an allowed `git status` runs; `git config` with a value is never
// allowed for the same reason. Unlike the hosts' files, these are the
// policy's own protected paths: audit mode records their writes.
var repoControl = []string{".git/**"}

// host.Protected are the files and folders from which the agent hosts load
// their hooks, plugins, permissions and MCP servers, relative to a project
// root and to the home folder: what `warden init` writes to put a host
// under warden, and what would take it out again; and the folders whose
// files a host runs by itself, beside the tool calls warden decides. Each
// host package says which (kit.Host.Protected; the reasons are there). An
// agent that may edit the project may not edit these (docs/policy.md,
// `protected`): rewritten, its next session runs without warden's hooks,
// with wider permissions, or with a server or plugin of its choosing.
// hostControlPaths adds the run folders at the roots and in the home
// folder too, so that a folder that is a link (.claude/skills ->
// ../.agents/skills) protects where it leads.
//
// hostRunFolders are the run folders by the host folder they are in. They
// are protected at any depth, not only at the project root: Claude Code
// finds .claude/skills in the folders below the one it started in (and
// loads them when it starts there or restarts), and a host started in a
// package of a monorepo reads that package's own.
var hostRunFolders = func() map[string][]string {
	m := map[string][]string{}
	for _, f := range host.Protected().RunFolders {
		dir, sub, _ := strings.Cut(f, "/")
		m[strings.ToLower(dir)] = append(m[strings.ToLower(dir)], sub)
	}
	return m
}()

// hostRunName reports whether a path is, or is inside, one of
// hostRunFolders, in any folder.
func hostRunName(abs string) bool {
	for rest := abs; ; {
		i := strings.Index(rest, "/.")
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
		name, after, ok := strings.Cut(rest, "/")
		if !ok {
			return false
		}
		subs := hostRunFolders[strings.ToLower(name)]
		if len(subs) == 0 {
			continue
		}
		next, _, _ := strings.Cut(after, "/")
		for _, sub := range subs {
			if strings.EqualFold(next, sub) {
				return true
			}
		}
	}
}

// wardenControl is warden's own configuration in the home folder (the
// service token), protected like the hosts'.
var wardenControl = []string{".config/warden"}

// hostControlPaths returns the absolute host configuration paths for the
// project roots and the home folder, and the folders of path (the PATH
// variable) inside the home folder.
func hostControlPaths(roots []string, home, path string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(base string, rels []string) {
		if base == "" {
			return
		}
		for _, r := range rels {
			if p := filepath.Join(base, filepath.FromSlash(r)); !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	files := host.Protected()                                    // the hosts of host.All now (a test may add one)
	runFolders := slices.Sorted(slices.Values(files.RunFolders)) // the first protected path a check names is always the same
	for _, r := range roots {
		add(r, files.Project)
		add(r, runFolders)
	}
	add(home, files.Home)
	add(home, wardenControl)
	add(home, runFolders)
	add(home, userControl)
	add("/", pathControl(path, home))
	return out
}

// userControl are the user's files, relative to the home folder, that
// choose what an allowed command runs: git's configuration
// (core.fsmonitor runs on git status, core.hooksPath on git commit), the
// shell's startup files (the hosts source them for their shell tool:
// Codex runs bash -lc, Claude Code snapshots ~/.bashrc's aliases and
// functions, so `alias git='sh -c ...'` makes every allowed git run
// another program), npm's, cargo's and go's own configuration
// (script-shell, rustc-wrapper, GOFLAGS=-toolexec), and ssh's folder (its
// config's ProxyCommand runs on git fetch; authorized_keys lets anyone in).
// They are protected whatever the policy allows in the home folder, as
// the workspace's .git is.
var userControl = []string{
	".gitconfig", ".config/git",
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".config/fish",
	".npmrc", ".cargo/config.toml", ".cargo/config", ".config/go/env",
	".ssh",
}

// pathControl returns the folders of path (the PATH variable) inside the
// home folder: a program written there under a common name (git, ls) runs
// in place of the one an allowed command names. The home folder itself
// and relative entries are left out.
func pathControl(path, home string) []string {
	if home == "" {
		return nil
	}
	var out []string
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if d != home && strings.HasPrefix(d, home+"/") && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// hookManagers are the files from which the common git hook managers read
// what a hook runs (husky's scripts, lefthook's and pre-commit's
// configuration, and lint-staged's, whose commands husky's pre-commit
// commonly runs): when the repository has hooks installed, an allowed git
// commit runs what they say. (A manager configured in package.json, as
// husky 4 and lint-staged can be, is not covered: package.json is the
// project's own file.)
var hookManagers = []string{".husky", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook.yaml",
	".lefthook.yaml", "lefthook-local.yml", ".lefthook-local.yml", ".lefthook",
	".lintstagedrc", ".lintstagedrc.json", ".lintstagedrc.yaml", ".lintstagedrc.yml", ".lintstagedrc.js",
	".lintstagedrc.mjs", ".lintstagedrc.cjs", "lint-staged.config.js", "lint-staged.config.mjs", "lint-staged.config.cjs"}

// repoHookPaths returns what the workspace's repository runs as hooks,
// outside .git: the folder core.hooksPath names (in the repository's
// configuration or the user's), with its parent when it is husky's "_"
// (whose script runs the hooks one folder up), and, when a hook is
// installed there or in .git/hooks, the hook managers' files.
func repoHookPaths(ws Workspace, root, home string) []string {
	var out []string
	hooksDir := filepath.Join(root, ".git", "hooks")
	configs := []string{filepath.Join(root, ".git", "config")}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	for _, f := range configs {
		hp := hooksPathOf(ws, f)
		if hp == "" {
			continue
		}
		if hp == "~" || strings.HasPrefix(hp, "~/") {
			hp = home + hp[1:]
		} else if !filepath.IsAbs(hp) {
			hp = filepath.Join(root, hp)
		}
		hp = filepath.Clean(hp)
		out = append(out, hp)
		if filepath.Base(hp) == "_" {
			out = append(out, filepath.Dir(hp))
		}
		hooksDir = hp
		break // the repository's own setting wins over the user's
	}
	if hooksInstalled(ws, hooksDir) || hooksInstalled(ws, filepath.Join(root, ".git", "hooks")) {
		for _, m := range hookManagers {
			out = append(out, filepath.Join(root, m))
		}
	}
	return out
}

// hooksInstalled reports a file in dir that git would run as a hook: any
// but the samples git init leaves.
func hooksInstalled(ws Workspace, dir string) bool {
	ents, err := ws.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".sample") {
			return true
		}
	}
	return false
}

// hooksPathOf reads core.hooksPath from a git configuration file, as git
// does for the plain forms ([core] hooksPath = VALUE, quoted or not, the
// last one winning); "" when the file does not set it or cannot be read.
// Included files are not followed.
func hooksPathOf(ws Workspace, file string) string {
	data, err := ws.ReadFile(file)
	if err != nil {
		return ""
	}
	inCore, val := false, ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			sec, _, _ := strings.Cut(strings.TrimPrefix(line, "["), "]")
			inCore = strings.EqualFold(strings.TrimSpace(sec), "core")
			// [core] hooksPath = x on the section's line.
			if _, rest, ok := strings.Cut(line, "]"); ok {
				line = strings.TrimSpace(rest)
			} else {
				continue
			}
		}
		if !inCore {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "hookspath") {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.IndexAny(v, "#;"); i >= 0 && !strings.HasPrefix(v, `"`) {
			v = strings.TrimSpace(v[:i])
		}
		v = strings.Trim(v, `"`)
		val = v
	}
	return val
}
