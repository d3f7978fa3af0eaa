// Package host lists the agent hosts warden governs. Each host is one
// package under host/ (host/claude, host/codex, host/gemini,
// host/opencode) that owns everything warden knows about it: its hook wire
// format, decoding and encoding, its hook.Host, whether it can prompt its
// user, how it reports a call's outcome, its wiring (`warden init`,
// `--remove`, the MCP server), its `warden doctor` checks, the import of
// its permission settings (`warden import`), and the files it loads its
// hooks, plugins and servers from (which every policy protects). A host
// package implements kit.Host. All is the one list of them: the CLI,
// hookd, serve, policy lint and the engine read it. Adding a host is one
// folder under host/ and one line in All (docs/hosts-dev.md).
//
// This package and the host packages must stay light (no SQLite, no YAML,
// no policy engine): the warden-hook client links them, and package engine
// reads the protected files from here.
package host

import (
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/host/claude"
	"github.com/warden-run/warden/host/codex"
	"github.com/warden-run/warden/host/gemini"
	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/host/opencode"
)

// All returns every host warden has an adapter for, in the order they are
// listed to the user.
func All() []kit.Host {
	return append([]kit.Host{
		claude.Adapter{},
		codex.Adapter{},
		gemini.Adapter{},
		opencode.Adapter{},
	}, extra...)
}

// extra is empty in warden: a test adds its test host here
// (export_test.go), to run it through the same list as the real ones.
var extra []kit.Host

// Names lists the hosts' names.
func Names() []string { return names(All()) }

func names(hs []kit.Host) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Name()
	}
	return out
}

// Lookup returns the host of a name.
func Lookup(name string) (kit.Host, bool) { return lookup(All(), name) }

func lookup(hs []kit.Host, name string) (kit.Host, bool) {
	for _, h := range hs {
		if h.Name() == name {
			return h, true
		}
	}
	return nil, false
}

// Want lists the hosts' names for an error message: "claude, codex,
// gemini or opencode".
func Want() string {
	n := Names()
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// Default is the host whose answer shape an unknown host name gets:
// Claude Code's, which Codex and Gemini CLI read too.
var Default kit.Host = claude.Adapter{}

// orDefault is the host of a name, or Default for an unknown name.
func orDefault(name string) kit.Host {
	if h, ok := Lookup(name); ok {
		return h
	}
	return Default
}

// Failure is the answer to give host when no decision could be made (see
// hook.Host.Failure); an unknown host gets Claude Code's shape.
func Failure(host, event string, d warden.Decision) []byte {
	return orDefault(host).Failure(event, d)
}

// EndOfTurn reports whether a host's event ends a turn (hook.Host.EndOfTurn).
func EndOfTurn(host, event string) bool { return orDefault(host).EndOfTurn(event) }

// FailCode is the exit code of a failure answer at event: 2 (block), or 0
// at the end of a turn (see hook.Host.EndOfTurn).
func FailCode(host, event string) int { return hook.FailCode(orDefault(host), event) }

// Interactive reports whether the named host that runs this process can
// show its own confirmation prompt for an ask (hook.Host.Interactive).
func Interactive(host string) bool {
	if h, ok := Lookup(host); ok {
		return h.Interactive()
	}
	return false
}

// Protected returns every host's protected files (kit.Host.Protected), in
// the order of All: every policy protects them, whichever host runs the
// agent, since an agent that can edit another host's configuration can
// start that host without warden.
func Protected() kit.Files {
	var out kit.Files
	for _, h := range All() {
		f := h.Protected()
		out.Project = append(out.Project, f.Project...)
		out.Home = append(out.Home, f.Home...)
		out.RunFolders = append(out.RunFolders, f.RunFolders...)
	}
	return out
}
