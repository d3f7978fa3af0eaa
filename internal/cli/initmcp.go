package cli

import (
	"errors"
	"os"
	"path/filepath"
)

// The MCP server warden init registers (warden mcp serve) in the host's
// MCP config, next to the hooks: each host package says where
// (kit.Host.MCP); package host/kit edits the file.

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
