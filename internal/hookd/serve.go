package hookd

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
)

// The environment of a remote hook: the service (`warden serve`) that
// decides and audits every call of a team's agents, and the agent token.
// The hook's --serve flag names the service too (`warden init HOST
// --serve URL` writes it); the token is never on a command line.
const (
	ServeURLEnv   = "WARDEN_SERVE_URL"
	ServeTokenEnv = "WARDEN_SERVE_TOKEN"
)

// ServeTokenFile is where the agent token is read from when
// WARDEN_SERVE_TOKEN is not set: $XDG_CONFIG_HOME/warden/serve-token, or
// ~/.config/warden/serve-token.
func ServeTokenFile() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "warden", "serve-token")
}

// ServeToken is the agent token for the service: $WARDEN_SERVE_TOKEN, else
// the first line of ServeTokenFile.
func ServeToken() (string, error) {
	if t := strings.TrimSpace(os.Getenv(ServeTokenEnv)); t != "" {
		return t, nil
	}
	file := ServeTokenFile()
	data, err := os.ReadFile(file)
	if err != nil {
		return "", warden.Errorf(warden.CodeRefused, "no agent token for warden serve: set %s or write it to %s (`warden serve token add --kind agent NAME` makes one)", ServeTokenEnv, file)
	}
	tok, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(tok), nil
}

// ServeURL is the service a hook with these flags (the arguments after
// the host) sends its events to: its --serve flag, else $WARDEN_SERVE_URL,
// else "" (decide here).
func ServeURL(flags []string) string {
	var f hook.Flags
	if len(flags) > 0 && f.FlagSet(io.Discard).Parse(flags) == nil && f.Serve != "" {
		return f.Serve
	}
	return os.Getenv(ServeURLEnv)
}
