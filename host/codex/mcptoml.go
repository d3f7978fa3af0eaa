package codex

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/warden-run/warden/host/kit"
)

// tomlServers is Codex's MCP server list: the [mcp_servers.NAME] tables of
// its config.toml. warden edits its own table as lines of text, changing
// nothing else in the file (no TOML library: the file is the user's, with
// its comments and order).
type tomlServers struct{ path string }

// header is the TOML table of warden's server.
const header = "[mcp_servers." + kit.ServerName + "]"

func (t tomlServers) File() string { return t.path }

// Set sets the [mcp_servers.warden] table (nil: unchanged).
func (t tomlServers) Set(data []byte, bin string) ([]byte, error) {
	table := header + "\ncommand = " + strconv.Quote(bin) + "\nargs = [\"mcp\", \"serve\"]\n"
	lines, start, end := wardenTable(string(data))
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
		return nil, fmt.Errorf("%s: %s is another server, not warden's; rename it, or run warden init with --no-mcp", t.path, header)
	}
	if strings.TrimSpace(old) == strings.TrimSpace(table) {
		return nil, nil
	}
	out := append(append(append([]string{}, lines[:start]...), strings.Split(strings.TrimSuffix(table, "\n"), "\n")...), lines[end:]...)
	return []byte(strings.Join(out, "\n")), nil
}

// Unset removes warden's table.
func (t tomlServers) Unset(data []byte) ([]byte, bool, bool, error) {
	lines, start, end := wardenTable(string(data))
	if start < 0 {
		return nil, false, false, nil
	}
	if old := strings.Join(lines[start:end], "\n"); !strings.Contains(old, "warden") || !strings.Contains(old, "serve") {
		return nil, false, false, nil // not warden's
	}
	rest := append(append([]string{}, lines[:start]...), lines[end:]...)
	text := strings.Trim(strings.Join(rest, "\n"), "\n")
	return []byte(text + "\n"), true, strings.TrimSpace(text) == "", nil
}

// wardenTable finds warden's table in a TOML text: its lines, and the
// table's first line and the line after it (-1 when absent). The table
// ends at the next table header; trailing blank lines stay outside it.
func wardenTable(s string) (lines []string, start, end int) {
	lines = strings.Split(s, "\n")
	start = -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if start < 0 {
			if t == header {
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
