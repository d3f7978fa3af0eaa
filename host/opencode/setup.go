package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/internal/cfgfile"
)

var _ kit.Host = Adapter{}

// HookFile is warden's plugin, .opencode/plugin/warden.js.
func (Adapter) HookFile(root string) string {
	return filepath.Join(root, ".opencode", "plugin", "warden.js")
}

// Wire writes warden's plugin (PluginSource).
func (a Adapter) Wire(w kit.Wiring) ([]string, error) {
	return cfgfile.WriteManaged(a.HookFile(w.Root), []byte(PluginSource(w.Bin, w.Wait, w.Flags...)))
}

// Unwire removes warden's plugin; a file of that name that is not
// warden's plugin is left alone (an error).
func (a Adapter) Unwire(root string) ([]string, error) {
	file := a.HookFile(root)
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(data, []byte("WARDEN_BIN")) {
		return nil, fmt.Errorf("%s is not warden's plugin; warden leaves it alone", file)
	}
	if err := os.Remove(file); err != nil {
		return nil, err
	}
	return []string{"removed " + file}, nil
}

// MCP is the "mcp" object of the project's opencode.json.
func (Adapter) MCP(root string) kit.MCPConfig {
	return kit.JSONServers{Path: filepath.Join(root, "opencode.json"), Key: "mcp", Entry: func(bin string) any {
		return map[string]any{"type": "local", "command": []string{bin, "mcp", "serve"}, "enabled": true}
	}}
}

// Finish says when OpenCode loads the plugin.
func (Adapter) Finish(context.Context, kit.Wiring) ([]string, []string, error) {
	return nil, []string{"OpenCode loads the plugin at its next start; set WARDEN_BIN to use another warden binary."}, nil
}

// Wired reads the command warden's plugin runs (its binary, or
// $WARDEN_BIN, and its arguments).
func (a Adapter) Wired(root string) (string, []string, error) {
	file := a.HookFile(root)
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("%s does not exist: run `warden init opencode`", file)
	}
	if err != nil {
		return "", nil, err
	}
	m := regexp.MustCompile(`process\.env\.WARDEN_BIN \|\| ("(?:[^"\\]|\\.)*")`).FindSubmatch(data)
	args := regexp.MustCompile(`\.concat\((\[[^\]]*\])\)`).FindSubmatch(data)
	var bin string
	var rest []string
	if m == nil || args == nil || json.Unmarshal(m[1], &bin) != nil || json.Unmarshal(args[1], &rest) != nil {
		return "", nil, fmt.Errorf("%s is not warden's plugin (or an older one): run `warden init opencode`", file)
	}
	if w := os.Getenv("WARDEN_BIN"); w != "" {
		bin = w
	}
	argv := []string{bin}
	if !kit.IsHookClient(bin) {
		argv = append(argv, "hook")
	}
	argv = append(argv, rest...)
	return strings.Join(argv, " "), argv, nil
}

// Check: OpenCode loads every plugin of the folder; nothing can stop it.
func (Adapter) Check(context.Context, kit.Check) (string, error) {
	return "OpenCode loads .opencode/plugin/*.js at start", nil
}

// Probe is a tool.execute.before of OpenCode's write tool.
func (Adapter) Probe(root, file string) []byte {
	in, _ := json.Marshal(Input{Event: ToolBefore, SessionID: "warden-doctor", Directory: root, Tool: "write",
		Args: map[string]any{"filePath": file, "content": "x"}})
	return in
}

// Verdict reads "decision".
func (Adapter) Verdict(answer []byte) string {
	var o Output
	if json.Unmarshal(answer, &o) != nil {
		return ""
	}
	return o.Decision
}

// Protected: its plugins (warden's among them) and config, in the project
// and the user's config folder.
func (Adapter) Protected() kit.Files {
	return kit.Files{Project: []string{".opencode", "opencode.json", "opencode.jsonc"}, Home: []string{".config/opencode"}}
}
