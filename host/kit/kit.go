// Package kit is what a host package implements beyond the hook protocol
// (Host: wiring with `warden init`, checks for `warden doctor`, the files
// every policy protects for it), and the shared pieces to implement it:
// editing a settings file's hook lists (hooks.go) and a host's MCP server
// list (mcp.go). It stays light: the warden-hook client links it.
package kit

import (
	"context"
	"time"

	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/importer"
)

// Host is one agent host as a unit: its hook protocol (hook.Host) and
// what `warden init`, `warden doctor` and the policy engine need of it.
type Host interface {
	hook.Host

	// HookFile is the file of a project (root) that `warden init` wires
	// the hook into; its presence says the host is wired there.
	HookFile(root string) string
	// Wire puts warden's hook into the project's configuration for every
	// event warden uses, running w.Command, keeping everything else. It
	// returns what it changed, for the user; running it again changes
	// nothing.
	Wire(w Wiring) ([]string, error)
	// Unwire takes warden's hook out of the project's configuration,
	// keeping every other setting and hook (`warden init HOST --remove`).
	Unwire(root string) ([]string, error)
	// MCP is where the host reads a project's MCP servers.
	MCP(root string) MCPConfig
	// Finish is the last step of `warden init`, after the hook and the MCP
	// server: what the host needs besides its configuration for the hook
	// to run (Codex records its trust), as changes, and what the user
	// should know (notes).
	Finish(ctx context.Context, w Wiring) (changes, notes []string, err error)

	// Wired returns the hook command wired in a project, and its words
	// (an error saying what to do when there is none).
	Wired(root string) (command string, argv []string, err error)
	// Check says whether the host will run the wired hook: hooks not
	// disabled, the project trusted. The text says what holds.
	Check(ctx context.Context, c Check) (string, error)
	// Probe is the hook input of a write of file, before the tool runs,
	// that `warden doctor` sends the wired command; Verdict reads the
	// permission decision (allow, ask, deny) from the answer.
	Probe(root, file string) []byte
	Verdict(answer []byte) string

	// Protected are the files the host loads its hooks, plugins,
	// permissions and MCP servers from, and the folders whose files it
	// runs by itself: every policy protects them (docs/policy.md,
	// `protected`), since an agent that rewrote them would run its next
	// session without warden.
	Protected() Files
}

// Wiring is what `warden init HOST` wires.
type Wiring struct {
	Root    string        // the project folder
	Bin     string        // the absolute path of the binary the hook runs (warden-hook or warden)
	Command string        // the hook command line: Bin, the host and Flags, quoted for a shell
	Flags   []string      // the flags after the host (--role, --wait, --serve)
	Wait    time.Duration // --wait: how long a hook may wait for a human's approval
	// Timeout is the time, in seconds, a host should give one hook call:
	// warden's own deadline plus Wait.
	Timeout int
	// Program is the host's own binary, for hosts whose consent is
	// recorded through it (--codex); "" looks it up on PATH.
	Program string
}

// Check is what `warden doctor` checks a host's wiring with.
type Check struct {
	Root    string // the project folder
	Command string // the wired hook command
	Program string // the host's own binary (--codex), or ""
}

// Files are a host's protected paths, with / as separator.
type Files struct {
	// Project: relative to a project root (and a workspace root).
	Project []string
	// Home: relative to the user's home folder.
	Home []string
	// RunFolders are folders ("HOSTFOLDER/SUB") whose files the host runs
	// by itself: protected at the roots and in the home folder, and by
	// name at any depth.
	RunFolders []string
}

// Importer is a host whose own permission settings `warden import HOST
// FILE` turns into a warden policy (package importer).
type Importer interface {
	Import(src importer.Source) (*importer.Policy, error)
}
