package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/warden-run/warden/host/kit"
)

var _ kit.Host = Adapter{}

// HookFile is the project's .codex/hooks.json.
func (Adapter) HookFile(root string) string { return filepath.Join(root, ".codex", "hooks.json") }

// settings are the hooks in .codex/hooks.json; timeouts are seconds, and
// Codex clamps SessionEnd hooks to 3 s (it reports an error for a longer
// one).
func (a Adapter) settings(root string, timeout int) kit.HookSettings {
	return kit.HookSettings{File: a.HookFile(root), Host: Host, Events: Events,
		Matcher: func(ev string) string {
			if ev == PreToolUse || ev == PostToolUse {
				return "*"
			}
			return ""
		},
		Timeout: func(ev string) int {
			if ev == SessionEnd {
				return 3
			}
			return timeout
		}}
}

// Wire merges warden's hook into .codex/hooks.json.
func (a Adapter) Wire(w kit.Wiring) ([]string, error) {
	return a.settings(w.Root, w.Timeout).Merge(w.Command)
}

// Unwire takes warden's hook out of .codex/hooks.json.
func (a Adapter) Unwire(root string) ([]string, error) { return a.settings(root, 0).Remove() }

// MCP is the project's .codex/config.toml.
func (Adapter) MCP(root string) kit.MCPConfig {
	return tomlServers{filepath.Join(root, ".codex", "config.toml")}
}

// Finish makes Codex run warden's hooks in the project (see trust).
func (Adapter) Finish(ctx context.Context, w kit.Wiring) ([]string, []string, error) {
	changes, err := trust(ctx, w.Program, w.Root, w.Command)
	return changes, nil, err
}

// Wired finds warden's PreToolUse hook.
func (a Adapter) Wired(root string) (string, []string, error) {
	return a.settings(root, 0).Wired(PreToolUse)
}

// Probe is a PreToolUse of Codex's shell tool appending to file.
func (Adapter) Probe(root, file string) []byte {
	in, _ := json.Marshal(map[string]any{"session_id": "warden-doctor", "cwd": root, "hook_event_name": PreToolUse,
		"tool_name": "Bash", "tool_input": map[string]any{"command": "echo x >> " + kit.ShellQuote(file)}, "transcript_path": ""})
	return in
}

// Verdict reads hookSpecificOutput.permissionDecision.
func (Adapter) Verdict(answer []byte) string {
	var o Output
	if json.Unmarshal(answer, &o) != nil || o.HookSpecificOutput == nil {
		return ""
	}
	return o.HookSpecificOutput.PermissionDecision
}

// Protected: .codex holds hooks.json and config.toml (MCP servers,
// approval policy), in the project and the home folder.
func (Adapter) Protected() kit.Files {
	return kit.Files{Project: []string{".codex"}, Home: []string{".codex"}}
}

// Check asks Codex's app server whether it will run warden's hooks.
func (Adapter) Check(ctx context.Context, c kit.Check) (string, error) {
	bin, root := c.Program, c.Root
	if bin == "" {
		p, err := exec.LookPath("codex")
		if err != nil {
			return "", errors.New("cannot check Codex's hook trust: no codex on PATH (pass --codex BIN). " + manual(root))
		}
		bin = p
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	srv, err := StartAppServer(ctx, bin, root, nil)
	if err != nil {
		return "", err
	}
	defer srv.Close()
	hooks, err := wardenHooks(srv, root, c.Command)
	if err != nil {
		return "", err
	}
	if len(hooks) == 0 {
		return "", errors.New("Codex does not load .codex/hooks.json here: the project is not trusted. Run `warden init codex` (with codex on PATH) to trust it. " + manual(root))
	}
	var bad []string
	for _, h := range hooks {
		if !h.Runs() {
			bad = append(bad, h.EventName+" ("+h.TrustStatus+")")
		}
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("the hooks Codex skips: %s. Run `warden init codex` again to trust them. %s", strings.Join(bad, ", "), manual(root))
	}
	return "Codex trusts the project and every warden hook", nil
}

// manual is what a user does by hand for Codex to run warden's hooks.
func manual(project string) string {
	return "Codex runs a project's hooks only once the project and each hook are trusted. In " + project +
		" run `codex` once, answer \"Trust this folder\" and, when it lists warden's hooks, \"Trust all and continue\"; " +
		"or run `warden init codex --codex PATH-TO-CODEX` to record the trust. `warden doctor codex` checks it."
}

// wardenHooks lists warden's hooks (those that run command) as Codex sees
// them in project.
func wardenHooks(srv *AppServer, project, command string) ([]HookEntry, error) {
	hooks, err := srv.Hooks(project)
	if err != nil {
		return nil, err
	}
	var out []HookEntry
	for _, h := range hooks {
		if strings.TrimSpace(h.Command) == command {
			out = append(out, h)
		}
	}
	return out, nil
}

// trust makes Codex run warden's hooks in project: it trusts the project
// and warden's hooks in the user's Codex config through Codex's app
// server, and checks that every warden hook now runs. Without a codex
// binary it says exactly what the user must do.
func trust(ctx context.Context, bin, project, command string) ([]string, error) {
	how := manual(project)
	if bin == "" {
		p, err := exec.LookPath("codex")
		if err != nil {
			return []string{"found no codex on PATH, so Codex does not trust warden's hooks yet. " + how}, nil
		}
		bin = p
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	srv, err := StartAppServer(ctx, bin, project, nil)
	if err != nil {
		return nil, fmt.Errorf("%v. %s", err, how)
	}
	defer srv.Close()
	var changes []string
	hooks, err := wardenHooks(srv, project, command)
	if err != nil {
		return nil, fmt.Errorf("%v. %s", err, how)
	}
	if len(hooks) == 0 {
		// An untrusted project's .codex/ folder is not loaded at all.
		if err := srv.TrustProject(project); err != nil {
			return nil, fmt.Errorf("%v. %s", err, how)
		}
		changes = append(changes, "trusted the project "+project+" in Codex's config (Codex loads .codex/hooks.json only in trusted projects)")
		if hooks, err = wardenHooks(srv, project, command); err != nil {
			return changes, fmt.Errorf("%v. %s", err, how)
		}
	}
	var untrusted []HookEntry
	for _, h := range hooks {
		if !h.Runs() {
			untrusted = append(untrusted, h)
		}
	}
	if len(untrusted) > 0 {
		if err := srv.TrustHooks(untrusted); err != nil {
			return changes, fmt.Errorf("%v. %s", err, how)
		}
		changes = append(changes, fmt.Sprintf("trusted warden's %d hooks in Codex's config (hooks.state, as Codex's own hook review does)", len(untrusted)))
		if hooks, err = wardenHooks(srv, project, command); err != nil {
			return changes, fmt.Errorf("%v. %s", err, how)
		}
	}
	if len(hooks) == 0 {
		return changes, errors.New("Codex lists none of warden's hooks for " + project + ". " + how)
	}
	for _, h := range hooks {
		if !h.Runs() {
			return changes, fmt.Errorf("codex will not run warden's %s hook (%s, enabled=%v). %s", h.EventName, h.TrustStatus, h.Enabled, how)
		}
	}
	return changes, nil
}
