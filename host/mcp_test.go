package host_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/mcpserve"
)

// TestRegisterMCP: warden's MCP server goes into each host's MCP config
// next to the user's own servers and settings, a second run changes
// nothing, another server named warden is left alone, and removing takes
// out warden's entry only.
func TestRegisterMCP(t *testing.T) {
	const bin = "/opt/warden/bin/warden"
	cases := map[string]struct{ file, before, want string }{
		"claude":   {".mcp.json", `{"mcpServers": {"github": {"command": "gh-mcp"}}, "other": 1}`, `"warden": {"args": ["mcp", "serve"], "command": "/opt/warden/bin/warden", "type": "stdio"}`},
		"gemini":   {".gemini/settings.json", `{"hooks": {}, "mcpServers": {"github": {"command": "gh-mcp"}}}`, `"warden": {"args": ["mcp", "serve"], "command": "/opt/warden/bin/warden"}`},
		"opencode": {"opencode.json", `{"$schema": "https://opencode.ai/config.json", "mcp": {"github": {"type": "local", "command": ["gh-mcp"]}}}`, `"warden": {"command": ["/opt/warden/bin/warden", "mcp", "serve"], "enabled": true, "type": "local"}`},
		"codex":    {".codex/config.toml", "model = \"o4\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n", "[mcp_servers.warden]\ncommand = \"/opt/warden/bin/warden\"\nargs = [\"mcp\", \"serve\"]\n"},
	}
	for host, c := range cases {
		t.Run(host, func(t *testing.T) {
			root := t.TempDir()
			file := filepath.Join(root, c.file)
			os.MkdirAll(filepath.Dir(file), 0o755)
			os.WriteFile(file, []byte(c.before), 0o644)
			changes, err := kit.RegisterMCP(lookup(t, host).MCP(root), bin, false)
			if err != nil || len(changes) != 2 || !strings.HasPrefix(changes[0], "backed up") {
				t.Fatalf("register: %v, %v", changes, err)
			}
			data, _ := os.ReadFile(file)
			if host == "codex" {
				if !strings.HasPrefix(string(data), c.before) || !strings.Contains(string(data), c.want) {
					t.Fatalf("codex config:\n%s", data)
				}
			} else {
				var got map[string]any
				if err := json.Unmarshal(data, &got); err != nil {
					t.Fatal(err)
				}
				var before map[string]any
				json.Unmarshal([]byte(c.before), &before)
				key := map[string]string{"claude": "mcpServers", "gemini": "mcpServers", "opencode": "mcp"}[host]
				servers := got[key].(map[string]any)
				if servers["github"] == nil || len(got) != len(before) {
					t.Fatalf("the user's entries are gone:\n%s", data)
				}
				js, _ := json.Marshal(map[string]any{"warden": servers["warden"]})
				var w map[string]any
				json.Unmarshal([]byte("{"+c.want+"}"), &w)
				wj, _ := json.Marshal(w)
				if string(js) != string(wj) {
					t.Fatalf("warden's entry %s, want %s", js, wj)
				}
			}
			if changes, err := kit.RegisterMCP(lookup(t, host).MCP(root), bin, false); err != nil || len(changes) != 0 {
				t.Fatalf("second register: %v, %v", changes, err)
			}
			changes, err = kit.UnregisterMCP(lookup(t, host).MCP(root))
			if err != nil || len(changes) == 0 {
				t.Fatalf("unregister: %v, %v", changes, err)
			}
			data, _ = os.ReadFile(file)
			if strings.Contains(string(data), "warden") || !strings.Contains(string(data), "gh-mcp") {
				t.Fatalf("after unregister:\n%s", data)
			}
			if host == "codex" && string(data) != c.before {
				t.Errorf("codex config after unregister %q, want the user's %q", data, c.before)
			}
		})
	}
	// Another server under the name warden is not overwritten.
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(`{"mcpServers": {"warden": {"command": "someone-elses"}}}`), 0o644)
	if _, err := kit.RegisterMCP(lookup(t, "claude").MCP(root), bin, false); err == nil || !strings.Contains(err.Error(), "another server") {
		t.Errorf("another server named warden: %v", err)
	}
	// A file warden made for the server alone is removed with it.
	root = t.TempDir()
	if _, err := kit.RegisterMCP(lookup(t, "opencode").MCP(root), bin, true); err != nil {
		t.Fatal(err)
	}
	if changes, err := kit.UnregisterMCP(lookup(t, "opencode").MCP(root)); err != nil || !strings.Contains(strings.Join(changes, " "), "removed") {
		t.Errorf("unregister of warden's own file: %v, %v", changes, err)
	}
	if _, err := os.Stat(filepath.Join(root, "opencode.json")); err == nil {
		t.Error("opencode.json left behind")
	}
}

// TestServerName: the name warden registers its MCP server under is the
// name the server gives itself.
func TestServerName(t *testing.T) {
	if kit.ServerName != mcpserve.Name {
		t.Errorf("kit.ServerName %q, mcpserve.Name %q", kit.ServerName, mcpserve.Name)
	}
}

func lookup(t *testing.T, name string) kit.Host {
	t.Helper()
	h, ok := host.Lookup(name)
	if !ok {
		t.Fatalf("no host %s", name)
	}
	return h
}
