package session

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
)

// GrantSpec is a grant a person adds by hand (`warden grants add`, warden
// serve's POST /v1/grants), as they wrote it: the tool, exactly one of
// Command, Path, Pattern and All, and the grant's bounds.
type GrantSpec struct {
	// Tool is the host's tool name (Bash, Write, run_shell_command, ...)
	// or a kind (shell, write, ...) for the tool of that kind on every
	// host.
	Tool    string
	Command string // the command line, exactly (NewGrants)
	Path    string // the file, exactly (NewGrants)
	Pattern string // a command or path glob (NewGrants)
	All     bool   // every call of the tool (AllGrant)
	Role    string // the role the grant is for ("": calls without a role)
	Session string // only this session ("": every session)
	// Expires, when set, ends the grant after that long ("90m", "8h",
	// "7d"); Uses, when positive, after that many calls.
	Expires string
	Uses    int
	// By names the person who adds it.
	By string
}

// Grants checks the spec and makes its grants under the policy, created
// at now: one per part of a command or path (NewGrants), one for a
// pattern, or one of every call (AllGrant). A spec that is not exactly one
// grant's worth (no tool, none or several of Command, Path, Pattern and
// All, negative uses, an expiry that is no positive duration, a session id
// no session can have) is an error that says what to give instead.
func (s GrantSpec) Grants(pol *policy.Policy, now time.Time) ([]warden.Grant, error) {
	if strings.TrimSpace(s.Tool) == "" {
		return nil, errors.New("the tool is required: the host's tool name (Bash, run_shell_command, bash, Write, ...), or a kind (shell, write, ...) for the tool of that kind on every host")
	}
	n := 0
	for _, v := range []string{s.Command, s.Path, s.Pattern} {
		if v != "" {
			n++
		}
	}
	if s.All {
		n++
	}
	if n != 1 {
		return nil, errors.New("give exactly one of command, path, pattern and all")
	}
	if s.Uses < 0 {
		return nil, fmt.Errorf("uses %d: must not be negative", s.Uses)
	}
	if err := warden.CheckSessionID(s.Session); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	base := warden.Grant{Tool: s.Tool, Role: s.Role, Session: s.Session, UsesLeft: s.Uses, CreatedBy: s.By, CreatedAt: now}
	if s.Expires != "" {
		d, err := policy.ParseDuration(s.Expires)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("expires %q: want a positive duration such as 90m, 8h or 7d", s.Expires)
		}
		base.Expires = now.Add(d)
	}
	if s.All {
		g, err := AllGrant(pol, base)
		if err != nil {
			return nil, err
		}
		return []warden.Grant{g}, nil
	}
	return NewGrants(pol, base, s.Command, s.Path, s.Pattern)
}
