package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/warden-run/warden/mcpserve"
)

// The MCP configs warden init registers warden's MCP server in (warden mcp
// serve, named mcpserve.Name), next to the hooks.

// mcpConfig is where a host reads a project's MCP servers: a JSON file and
// the key of its server map, or Codex's TOML.
func mcpConfig(host, root string) (file, key string) {
	switch host {
	case "claude":
		return filepath.Join(root, ".mcp.json"), "mcpServers"
	case "codex":
		return filepath.Join(root, ".codex", "config.toml"), ""
	case "gemini":
		return filepath.Join(root, ".gemini", "settings.json"), "mcpServers"
	case "opencode":
		return filepath.Join(root, "opencode.json"), "mcp"
	}
	return "", ""
}

// mcpEntry is warden's server entry in a host's JSON config.
func mcpEntry(host, bin string) any {
	args := []string{"mcp", "serve"}
	switch host {
	case "opencode":
		return map[string]any{"type": "local", "command": append([]string{bin}, args...), "enabled": true}
	case "claude":
		return map[string]any{"type": "stdio", "command": bin, "args": args}
	}
	return map[string]any{"command": bin, "args": args}
}

// registerMCP registers warden's MCP server (bin mcp serve) in the host's
// MCP config in root, keeping the user's other servers and settings. An
// entry of the same name that is not warden's is left alone (an error).
// fresh reports that the file did not exist before this init (Gemini CLI's
// settings.json holds the hooks too): it is not backed up.
func registerMCP(host, root, bin string, fresh bool) ([]string, error) {
	file, key := mcpConfig(host, root)
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	exists := err == nil
	var out []byte
	if key == "" {
		if out, err = codexMCP(data, bin, file); err != nil {
			return nil, err
		}
	} else {
		if out, err = jsonMCP(data, key, mcpEntry(host, bin), file); err != nil {
			return nil, err
		}
	}
	if out == nil || exists && bytes.Equal(out, data) {
		return nil, nil
	}
	changes, err := rewrite(file, data, out, exists && !fresh)
	if err != nil {
		return changes, err
	}
	return append(changes, fmt.Sprintf("registered warden's MCP server (%s mcp serve) as %q in %s", bin, mcpserve.Name, file)), nil
}

// isWardenServer reports whether a server entry runs warden mcp serve.
func isWardenServer(raw []byte) bool {
	return bytes.Contains(raw, []byte(`"mcp"`)) && bytes.Contains(raw, []byte(`"serve"`)) && bytes.Contains(raw, []byte("warden"))
}

// jsonMCP sets warden's entry under key in a JSON config (nil: unchanged).
func jsonMCP(data []byte, key string, entry any, file string) ([]byte, error) {
	settings, err := parseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v); fix it or move it away, warden will not overwrite it", file, err)
	}
	servers := &jsonObject{vals: map[string]json.RawMessage{}}
	if raw, ok := settings.vals[key]; ok {
		if servers, err = parseObject(raw); err != nil {
			return nil, fmt.Errorf("%s: %q is not a JSON object (%v); warden will not overwrite it", file, key, err)
		}
	}
	want, _ := json.Marshal(entry)
	if old, ok := servers.vals[mcpserve.Name]; ok {
		if !isWardenServer(old) {
			return nil, fmt.Errorf("%s: %s.%s is another server, not warden's; rename it, or run warden init with --no-mcp", file, key, mcpserve.Name)
		}
		var a, b any
		json.Unmarshal(old, &a)
		json.Unmarshal(want, &b)
		if fmt.Sprint(a) == fmt.Sprint(b) {
			return nil, nil
		}
	}
	servers.set(mcpserve.Name, json.RawMessage(want))
	sj, _ := servers.MarshalJSON()
	settings.set(key, json.RawMessage(sj))
	return settings.indent()
}

// codexHeader is the TOML table of warden's server in Codex's config.
const codexHeader = "[mcp_servers." + mcpserve.Name + "]"

// codexMCP sets the [mcp_servers.warden] table of a Codex config.toml,
// changing nothing else in the file (nil: unchanged).
func codexMCP(data []byte, bin, file string) ([]byte, error) {
	table := codexHeader + "\ncommand = " + strconv.Quote(bin) + "\nargs = [\"mcp\", \"serve\"]\n"
	lines, start, end := codexTable(string(data))
	if start < 0 {
		s := string(data)
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		if s != "" {
			s += "\n"
		}
		return []byte(s + table), nil
	}
	old := strings.Join(lines[start:end], "\n")
	if !strings.Contains(old, "warden") || !strings.Contains(old, "serve") {
		return nil, fmt.Errorf("%s: %s is another server, not warden's; rename it, or run warden init with --no-mcp", file, codexHeader)
	}
	if strings.TrimSpace(old) == strings.TrimSpace(table) {
		return nil, nil
	}
	out := append(append(append([]string{}, lines[:start]...), strings.Split(strings.TrimSuffix(table, "\n"), "\n")...), lines[end:]...)
	return []byte(strings.Join(out, "\n")), nil
}

// codexTable finds warden's table in a TOML text: its lines, and the
// table's first line and the line after it (-1 when absent). The table
// ends at the next table header; trailing blank lines stay outside it.
func codexTable(s string) (lines []string, start, end int) {
	lines = strings.Split(s, "\n")
	start = -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if start < 0 {
			if t == codexHeader {
				start = i
			}
			continue
		}
		if strings.HasPrefix(t, "[") {
			end = i
			break
		}
	}
	if start < 0 {
		return lines, -1, -1
	}
	if end == 0 {
		end = len(lines)
	}
	for end > start+1 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	return lines, start, end
}

// unregisterMCP takes warden's MCP server out of the host's MCP config in
// root, keeping everything else; a file that held nothing else and was
// made by warden (no backup of it) is removed.
func unregisterMCP(host, root string) ([]string, error) {
	file, key := mcpConfig(host, root)
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []byte
	empty := false
	if key == "" {
		lines, start, end := codexTable(string(data))
		if start < 0 {
			return nil, nil
		}
		if old := strings.Join(lines[start:end], "\n"); !strings.Contains(old, "warden") || !strings.Contains(old, "serve") {
			return nil, nil // not warden's
		}
		rest := append(append([]string{}, lines[:start]...), lines[end:]...)
		text := strings.Trim(strings.Join(rest, "\n"), "\n")
		empty = strings.TrimSpace(text) == ""
		out = []byte(text + "\n")
	} else {
		settings, err := parseObject(data)
		if err != nil {
			return nil, fmt.Errorf("%s is not valid JSON (%v); fix it first", file, err)
		}
		raw, ok := settings.vals[key]
		if !ok {
			return nil, nil
		}
		servers, err := parseObject(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a JSON object (%v)", file, key, err)
		}
		if old, ok := servers.vals[mcpserve.Name]; !ok || !isWardenServer(old) {
			return nil, nil
		}
		servers.delete(mcpserve.Name)
		if len(servers.keys) == 0 {
			settings.delete(key)
		} else {
			sj, _ := servers.MarshalJSON()
			settings.set(key, json.RawMessage(sj))
		}
		empty = len(settings.keys) == 0
		if out, err = settings.indent(); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(file + ".warden-backup"); empty && errors.Is(err, fs.ErrNotExist) {
		if err := os.Remove(file); err != nil {
			return nil, err
		}
		return []string{"removed " + file + " (it held only warden's MCP server)"}, nil
	}
	// A file that was the user's before warden is backed up. (One warden
	// made holds the user's later edits, which stay.)
	_, berr := os.Stat(file + ".warden-backup")
	changes, err := rewrite(file, data, out, berr == nil)
	if err != nil {
		return changes, err
	}
	return append(changes, "took warden's MCP server out of "+file+"; your other servers and settings are kept"), nil
}

// wardenBinary is the absolute path of the running warden, for the hosts'
// MCP configs.
func wardenBinary() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if isTempBuild(p) {
		return "", errTempBuild
	}
	return p, nil
}

// errTempBuild: a warden that is removed when it exits cannot be a host's
// MCP server.
var errTempBuild = errors.New("warden runs from a temporary build (go run, go test) that is removed when it exits, so its MCP server is not registered: install warden (go install ./cmd/warden) and run warden init again")

// rewrite writes out to file, backing up its old content data first when
// keep says so.
func rewrite(file string, data, out []byte, keep bool) ([]string, error) {
	var changes []string
	if keep {
		bak, err := backup(file, data)
		if err != nil {
			return nil, err
		}
		changes = append(changes, "backed up "+file+" to "+bak)
	}
	return changes, writeFileAtomic(file, out)
}
