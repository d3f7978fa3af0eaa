package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
)

// The fifth red-team pass, configuration files: npm reads .npmrc and cargo
// reads .cargo/config.toml from the folder they run in and the folders
// above it, and a setting there makes an allowed `npm test` or `cargo
// metadata` run any program (script-shell, node-options, rustc-wrapper).
// Under a policy that lets the agent edit the project, it writes one and
// then runs the allowed command. Each finding was allowed before.
func TestRedteam5ProgramConfigFiles(t *testing.T) {
	t.Parallel()
	const pol = `version: 1
default: {safe: allow, destructive: deny}
rules:
  - id: pm
    effect: allow
    tool: shell
    command: ["npm test *", "npm ci *", "npx tsc *", "cargo metadata *", "cargo build *", "cargo fmt *"]
`
	cases := []struct {
		name, file, text, cwd, cmd, want string
	}{
		// Findings.
		{"npm script-shell", ".npmrc", "script-shell=/tmp/evil\n", "", "npm test", "notAllow"},
		{"npm node-options", ".npmrc", "registry=https://r.example/\nnode-options=--require ./x.js\n", "", "npm ci", "notAllow"},
		{"npm git", ".npmrc", "git=/tmp/evil\n", "", "npm ci --ignore-scripts", "notAllow"},
		{"npm cache elsewhere", ".npmrc", "cache=.git/hooks\n", "", "npm ci", "notAllow"},
		{"npm another config", ".npmrc", "userconfig=/tmp/x\n", "", "npm test", "notAllow"},
		{"npx, .npmrc in a folder above", ".npmrc", "script-shell=/tmp/evil\n", "pkg", "npx tsc -p .", "notAllow"},
		{"cargo rustc-wrapper", ".cargo/config.toml", "[build]\nrustc-wrapper = \"/tmp/evil\"\n", "", "cargo metadata", "notAllow"},
		{"cargo runner", ".cargo/config.toml", "[target.x86_64-unknown-linux-gnu]\nrunner = \"sh -c id\"\n", "", "cargo build", "notAllow"},
		{"cargo env", ".cargo/config", "[env]\nLD_PRELOAD = \"/tmp/x.so\"\n", "", "cargo fmt", "notAllow"},
		{"cargo target-dir elsewhere", ".cargo/config.toml", "[build]\ntarget-dir = \".git/hooks\"\n", "pkg", "cargo build", "notAllow"},
		{"cargo dotted key", ".cargo/config.toml", "build.rustc = \"/tmp/evil\"\n", "", "cargo metadata", "notAllow"},
		{"cargo quoted table", ".cargo/config.toml", "[\"build\"]\nrustc = \"/tmp/evil\"\n", "", "cargo metadata", "notAllow"},
		// Allowed: settings that only change where packages come from.
		{"no configuration", "", "", "", "npm test", "allow"},
		{"npm registries and auth", ".npmrc", "; company registry\nregistry=https://r.example/\n@x:registry=https://y.example/\n//r.example/:_authToken=${TOKEN}\nsave-exact=true\n", "", "npm ci", "allow"},
		{"cargo jobs, aliases and a vendored source", ".cargo/config.toml", "[build]\njobs = 4\n[alias]\nxt = [\"run\", \"--package\", \"xtask\", \"--\"]\n[source.crates-io]\nreplace-with = \"vendored\"\n[source.vendored]\ndirectory = \"vendor\"\n", "pkg", "cargo metadata", "allow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, dir := newEngine(t, pol)
			os.MkdirAll(filepath.Join(dir, "pkg"), 0o755)
			if c.file != "" {
				f := filepath.Join(dir, c.file)
				os.MkdirAll(filepath.Dir(f), 0o755)
				if err := os.WriteFile(f, []byte(c.text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			call := warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": c.cmd}, Cwd: filepath.Join(dir, c.cwd)}
			d := e.Decide(call, nil).Decision
			if c.want == "allow" && d.Decision != warden.Allow || c.want == "notAllow" && d.Decision == warden.Allow {
				t.Errorf("%s with %s %q: got %s %s (%s); want %s", c.cmd, c.file, c.text, d.Decision, d.Code, d.Reason, c.want)
			}
		})
	}
}

// make runs a makefile's $(shell ...), != assignments, $(file ...), + and
// $(MAKE) recipe lines and the recipes that remake included makefiles even
// in a dry run: a rule for `make -n` vouches for running nothing, so such
// a makefile (the agent may have written it) stops that allow. A plain
// `make build` runs the recipes anyway; its rule vouches for them.
func TestRedteam5MakeDryRun(t *testing.T) {
	t.Parallel()
	const pol = `version: 1
default: {safe: allow, destructive: deny}
rules:
  - id: make
    effect: allow
    tool: shell
    command: ["make -n *", "make -q *", "make build *"]
`
	cases := []struct{ name, makefile, cmd, want string }{
		// Findings.
		{"$(shell) in a dry run", "X := $(shell touch /tmp/x)\nbuild:\n\tgo build\n", "make -n build", "notAllow"},
		{"!= in a dry run", "X != touch /tmp/x\nbuild:\n\tgo build\n", "make -n build", "notAllow"},
		{"$(file) writes in a dry run", "$(file >.git/hooks/pre-commit,x)\nbuild:\n\ttrue\n", "make -q build", "notAllow"},
		{"a + recipe line", "build:\n\t+touch /tmp/x\n", "make -n build", "notAllow"},
		{"$(MAKE) in a recipe", "build:\n\t$(MAKE) -C sub\n", "make -n build", "notAllow"},
		{"an included makefile make can remake", "include gen.mk\ngen.mk:\n\ttouch /tmp/x\n", "make -n", "notAllow"},
		{"a makefile named with -f", "build:\n\ttrue\n", "make -n -f other.mk build", "notAllow"},
		// Allowed.
		{"a plain dry run", "build:\n\tgo build ./...\n", "make -n build", "allow"},
		{"a comment naming $(shell)", "# X := $(shell date)\nbuild:\n\tgo build\n", "make -n build", "allow"},
		{"make build runs the recipes anyway", "X := $(shell date)\nbuild:\n\tgo build\n", "make build", "allow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, dir := newEngine(t, pol)
			if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(c.makefile), 0o644); err != nil {
				t.Fatal(err)
			}
			call := warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": c.cmd}, Cwd: dir}
			d := e.Decide(call, nil).Decision
			if c.want == "allow" && d.Decision != warden.Allow || c.want == "notAllow" && d.Decision == warden.Allow {
				t.Errorf("%s with %q: got %s %s (%s); want %s", c.cmd, c.makefile, d.Decision, d.Code, d.Reason, c.want)
			}
		})
	}
}

// make -n -C DIR reads DIR's makefile.
func TestRedteam5MakeDryRunFolder(t *testing.T) {
	t.Parallel()
	e, dir := newEngine(t, "version: 1\ndefault: {safe: allow, destructive: deny}\nrules:\n  - id: make\n    effect: allow\n    tool: shell\n    command: [\"make -n *\"]\n")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "Makefile"), []byte("X := $(shell touch /tmp/x)\nall:\n\ttrue\n"), 0o644)
	call := warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "make -n -C sub"}, Cwd: dir}
	if d := e.Decide(call, nil).Decision; d.Decision == warden.Allow {
		t.Errorf("make -n -C sub with $(shell) in sub/Makefile: allowed")
	}
	os.WriteFile(filepath.Join(dir, "sub", "Makefile"), []byte("all:\n\ttrue\n"), 0o644)
	if d := e.Decide(call, nil).Decision; d.Decision != warden.Allow {
		t.Errorf("make -n -C sub with a plain sub/Makefile: %s %s (%s)", d.Decision, d.Code, d.Reason)
	}
}
