package kit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/warden-run/warden/internal/cfgfile"
)

// ServerName is the name of warden's MCP server (warden mcp serve) in a
// host's MCP configuration; mcpserve.Name says the same (a test checks).
const ServerName = "warden"

// MCPConfig is a host's list of a project's MCP servers, in one file.
type MCPConfig interface {
	// File is the file.
	File() string
	// Set returns the file's content data with warden's server (bin mcp
	// serve) registered, keeping everything else; nil when it is already
	// there. A server of warden's name that is not warden's is an error.
	Set(data []byte, bin string) ([]byte, error)
	// Unset returns data without warden's server; found is false when
	// there was none, empty true when nothing else is left.
	Unset(data []byte) (out []byte, found, empty bool, err error)
}

// RegisterMCP registers warden's MCP server (bin mcp serve) in c, keeping
// the user's other servers and settings. fresh reports that the file did
// not exist before this init (Gemini CLI's settings.json holds the hooks
// too): it is not backed up.
func RegisterMCP(c MCPConfig, bin string, fresh bool) ([]string, error) {
	file := c.File()
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	exists := err == nil
	out, err := c.Set(data, bin)
	if err != nil {
		return nil, err
	}
	if out == nil || exists && bytes.Equal(out, data) {
		return nil, nil
	}
	changes, err := cfgfile.Rewrite(file, data, out, exists && !fresh)
	if err != nil {
		return changes, err
	}
	return append(changes, fmt.Sprintf("registered warden's MCP server (%s mcp serve) as %q in %s", bin, ServerName, file)), nil
}

// UnregisterMCP takes warden's MCP server out of c, keeping everything
// else; a file that held nothing else and was made by warden (no backup
// of it) is removed.
func UnregisterMCP(c MCPConfig) ([]string, error) {
	file := c.File()
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out, found, empty, err := c.Unset(data)
	if err != nil || !found {
		return nil, err
	}
	if empty && !cfgfile.HasBackup(file) {
		if err := os.Remove(file); err != nil {
			return nil, err
		}
		return []string{"removed " + file + " (it held only warden's MCP server)"}, nil
	}
	// A file that was the user's before warden is backed up. (One warden
	// made holds the user's later edits, which stay.)
	changes, err := cfgfile.Rewrite(file, data, out, cfgfile.HasBackup(file))
	if err != nil {
		return changes, err
	}
	return append(changes, "took warden's MCP server out of "+file+"; your other servers and settings are kept"), nil
}

// JSONServers is an MCP server list in a JSON file: an object of servers
// by name under Key.
type JSONServers struct {
	Path string
	Key  string
	// Entry is warden's server entry for bin.
	Entry func(bin string) any
}

// File is the JSON file.
func (j JSONServers) File() string { return j.Path }

// IsWardenServer reports whether a server entry runs warden mcp serve.
func IsWardenServer(raw []byte) bool {
	return bytes.Contains(raw, []byte(`"mcp"`)) && bytes.Contains(raw, []byte(`"serve"`)) && bytes.Contains(raw, []byte("warden"))
}

// Set registers warden's entry under Key.
func (j JSONServers) Set(data []byte, bin string) ([]byte, error) {
	settings, err := cfgfile.ParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v); fix it or move it away, warden will not overwrite it", j.Path, err)
	}
	servers := cfgfile.NewObject()
	if raw, ok := settings.Get(j.Key); ok {
		if servers, err = cfgfile.ParseObject(raw); err != nil {
			return nil, fmt.Errorf("%s: %q is not a JSON object (%v); warden will not overwrite it", j.Path, j.Key, err)
		}
	}
	want, _ := json.Marshal(j.Entry(bin))
	if old, ok := servers.Get(ServerName); ok {
		if !IsWardenServer(old) {
			return nil, fmt.Errorf("%s: %s.%s is another server, not warden's; rename it, or run warden init with --no-mcp", j.Path, j.Key, ServerName)
		}
		var a, b any
		json.Unmarshal(old, &a)
		json.Unmarshal(want, &b)
		if fmt.Sprint(a) == fmt.Sprint(b) {
			return nil, nil
		}
	}
	servers.Set(ServerName, json.RawMessage(want))
	settings.Set(j.Key, servers)
	return settings.Indent()
}

// Unset removes warden's entry from under Key.
func (j JSONServers) Unset(data []byte) ([]byte, bool, bool, error) {
	settings, err := cfgfile.ParseObject(data)
	if err != nil {
		return nil, false, false, fmt.Errorf("%s is not valid JSON (%v); fix it first", j.Path, err)
	}
	raw, ok := settings.Get(j.Key)
	if !ok {
		return nil, false, false, nil
	}
	servers, err := cfgfile.ParseObject(raw)
	if err != nil {
		return nil, false, false, fmt.Errorf("%s: %q is not a JSON object (%v)", j.Path, j.Key, err)
	}
	if old, ok := servers.Get(ServerName); !ok || !IsWardenServer(old) {
		return nil, false, false, nil
	}
	servers.Delete(ServerName)
	if servers.Len() == 0 {
		settings.Delete(j.Key)
	} else {
		settings.Set(j.Key, servers)
	}
	out, err := settings.Indent()
	return out, true, settings.Len() == 0, err
}
