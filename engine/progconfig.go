package engine

import (
	"cmp"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/shell"
)

// Programs with a table that read configuration files from the folder
// they run in, or a folder above it, whose settings can make an allowed
// call run another program or write elsewhere: npm's .npmrc
// (`script-shell=`, `git=`, `node-options=--require ...`, `cache=`), and
// cargo's .cargo/config.toml (`build.rustc-wrapper`, `target.*.runner`,
// `[env]`). Like a repository's configuration for git (gitHere), such a
// file in the workspace with a setting warden does not know to be
// harmless stops the allow: the agent may have written it.
var progConfigs = map[string]progConfig{
	"npm":   {files: []string{".npmrc"}, bad: npmrcBad},
	"npx":   {files: []string{".npmrc"}, bad: npmrcBad},
	"cargo": {files: []string{".cargo/config.toml", ".cargo/config"}, bad: cargoConfigBad},
	// make's recipes are the Makefile's, and a rule for make vouches for
	// them; but a rule for a dry run (make -n, -q, -t, -p) vouches for
	// running nothing, and make still runs the makefile's $(shell ...),
	// != assignments, recipe lines marked + or holding $(MAKE), and the
	// recipes that remake the makefiles it includes.
	"make":  {files: []string{"GNUmakefile", "makefile", "Makefile"}, bad: makefileBad, here: true, when: makeDry, noun: "makefile", verb: "uses"},
	"gmake": {files: []string{"GNUmakefile", "makefile", "Makefile"}, bad: makefileBad, here: true, when: makeDry, noun: "makefile", verb: "uses"},
}

// progConfigNames are progConfigs' keys: a command's program is compared
// with these few names, which costs less than a map lookup for the many
// commands whose program has no entry.
var progConfigNames = slices.Sorted(maps.Keys(progConfigs))

// hasProgConfig reports a program with an entry in progConfigs.
func hasProgConfig(prog string) bool {
	for _, n := range progConfigNames {
		if n == prog {
			return true
		}
	}
	return false
}

type progConfig struct {
	files []string // looked for in the working folder and each folder above it, up to the workspace root
	// bad returns the first setting of the file's text that is not known
	// to be harmless ("" when there is none).
	bad func(text string) string
	// here: only the working folder is looked in, not the folders above.
	here bool
	// when, if set, says whether the files matter for the command, and
	// why they cannot be read ("" when they can).
	when func(c *shell.Command) (matters bool, unread string)
	// noun and verb word the reason: "configuration file" and "sets" when
	// empty.
	noun, verb string
}

// makeDry: the makefile matters for a dry run; -f names a makefile that
// is not read (with -C DIR, DIR's makefile is: the line's folders are
// looked in).
func makeDry(c *shell.Command) (bool, string) {
	dry := false
	for _, f := range c.Flags {
		switch f {
		case "-n", "-q", "-t", "-p":
			dry = true
		}
	}
	if !dry {
		return false, ""
	}
	for _, f := range c.Flags {
		if f == "-f" {
			return true, "make " + f + " names a makefile elsewhere, which warden does not read"
		}
	}
	return true, ""
}

// configHere checks the configuration files c's program reads in the
// folders a line runs it in (the call's, and those the line changes into).
func (e *Engine) configHere(st *state, c *shell.Command, cds []string) {
	prog := c.Prog
	pc, ok := progConfigs[prog]
	if !ok {
		return
	}
	if pc.when != nil {
		matters, unread := pc.when(c)
		if !matters {
			return
		}
		if unread != "" {
			st.check("config", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: prog,
				extra: unread + ", and a makefile can run programs even in a dry run ($(shell ...))"})
			return
		}
	}
	base := st.cwd()
	dirs := []string{e.evalPath(base)}
	for _, d := range cds {
		if dyn := strings.IndexByte(d, 0) >= 0; !dyn {
			abs, _, _ := e.resolve(d, base)
			dirs = append(dirs, abs)
		}
	}
	seen := map[string]bool{}
	for _, dir := range dirs {
		for d := dir; !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			if _, inside := e.relTo(d); !inside {
				break // outside the workspace: not a file an agent wrote
			}
			for _, name := range pc.files {
				f := filepath.Join(d, filepath.FromSlash(name))
				data, err := e.ws.ReadFile(f)
				if isNotExist(err) {
					continue
				}
				noun, verb := cmp.Or(pc.noun, "configuration file"), cmp.Or(pc.verb, "sets")
				why := "it cannot be read"
				if err == nil {
					why = pc.bad(string(data))
					if why == "" {
						continue
					}
					why = "it " + verb + " " + why
				}
				st.check("config", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: e.show(f),
					extra: prog + " reads the " + noun + " " + e.show(f) + ", and " + why + ", which can make it run programs or write files that the command line does not show"})
				return
			}
			if d == e.root || pc.here {
				break
			}
		}
	}
}

// npmrcSafe are .npmrc settings that change what npm fetches, how it
// reports and which versions it picks, but run nothing and write nowhere
// else (npm help config). Per-registry settings (`//host/:_authToken`) and
// scoped registries (`@scope:registry`) are harmless too.
var npmrcSafe = map[string]bool{
	"registry": true, "always-auth": true, "save-exact": true, "save-prefix": true, "save": true,
	"engine-strict": true, "fund": true, "audit": true, "audit-level": true, "package-lock": true,
	"package-lock-only": true, "legacy-peer-deps": true, "strict-peer-deps": true, "strict-ssl": true,
	"loglevel": true, "progress": true, "update-notifier": true, "ignore-scripts": true,
	"prefer-offline": true, "prefer-online": true, "offline": true, "fetch-retries": true,
	"fetch-retry-factor": true, "fetch-retry-mintimeout": true, "fetch-retry-maxtimeout": true,
	"fetch-timeout": true, "maxsockets": true, "proxy": true, "https-proxy": true, "noproxy": true,
	"ca": true, "lockfile-version": true, "omit": true, "include": true, "install-strategy": true,
	"install-links": true, "prefer-dedupe": true, "color": true, "unicode": true, "tag": true,
	"tag-version-prefix": true, "git-tag-version": true, "message": true, "workspaces-update": true,
	"include-workspace-root": true, "scope": true, "access": true, "provenance": true,
	"init-author-name": true, "init-author-email": true, "init-author-url": true, "init-license": true,
	"init-version": true, "json": true, "parseable": true, "long": true, "before": true,
	"auto-install-peers": true, "shamefully-hoist": true, "strict-peer-dependencies": true,
	"link-workspace-packages": true, "prefer-workspace-packages": true, "node-linker": true,
	"public-hoist-pattern": true, "hoist-pattern": true, "resolution-mode": true,
}

func npmrcBad(text string) string {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == ';' || line[0] == '#' {
			continue
		}
		key, _, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		key = strings.TrimSuffix(key, "[]")
		switch {
		case npmrcSafe[key]:
		case strings.HasPrefix(key, "//") && !strings.ContainsAny(key, " \t"):
		case strings.HasPrefix(key, "@") && strings.HasSuffix(key, ":registry"):
		default:
			return key
		}
	}
	return ""
}

// cargoSafe are cargo configuration keys (by their table, "build.jobs")
// that run nothing and write nowhere else (The Cargo Book, "Configuration");
// a prefix ending in "." covers a table.
var cargoSafe = []string{
	"build.jobs", "build.target", "build.incremental", "term.", "net.retry", "net.offline",
	"cargo-new.", "http.timeout", "http.low-speed-limit", "http.multiplexing", "http.check-revoke",
	"http.proxy", "http.user-agent", "registry.default", "registries.", "source.", "alias.", "future-incompat-report.",
}

func cargoConfigBad(text string) string {
	table := ""
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			name := strings.Trim(strings.TrimSpace(strings.SplitN(line, "#", 2)[0]), "[] ")
			if strings.ContainsAny(name, `"'`) {
				return "the table " + name
			}
			table = name + "."
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || strings.ContainsAny(key, `"'[{`) {
			return "a line warden does not read (" + key + ")"
		}
		full := table + key
		safe := false
		for _, s := range cargoSafe {
			if full == s || strings.HasSuffix(s, ".") && strings.HasPrefix(full, s) {
				safe = true
			}
		}
		if !safe {
			return full
		}
		// A value over several lines: an array, or a multi-line string.
		val = strings.TrimSpace(val)
		if strings.HasPrefix(val, `"""`) || strings.HasPrefix(val, "'''") || strings.HasPrefix(val, "{") {
			return full
		}
		if strings.HasPrefix(val, "[") {
			for !strings.HasSuffix(strings.TrimSpace(strings.SplitN(lines[i], "#", 2)[0]), "]") && i+1 < len(lines) {
				i++
			}
		}
	}
	return ""
}

// makefileBad finds what a makefile runs even under make -n: $(shell),
// != assignments, $(file ...) (which writes), $(guile ...), load, include
// (an included makefile make can remake runs its recipe), and recipe lines
// marked + or naming $(MAKE).
func makefileBad(text string) string {
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			continue
		}
		for _, f := range []string{"$(shell", "${shell", "$(file", "${file", "$(guile", "${guile", "!=", "$(MAKE)", "${MAKE}", "$(MAKE ", "$MAKE"} {
			if strings.Contains(line, f) {
				return strings.TrimSuffix(strings.TrimPrefix(f, "$("), " ") + " (" + strings.TrimSpace(line) + ")"
			}
		}
		if strings.HasPrefix(line, "\t") && strings.HasPrefix(strings.TrimLeft(line, "\t @-"), "+") {
			return "a recipe line marked + (" + t + ")"
		}
		w, _, _ := strings.Cut(t, " ")
		switch w {
		case "include", "-include", "sinclude", "load", "-load":
			return w + " (" + t + ")"
		}
	}
	return ""
}
