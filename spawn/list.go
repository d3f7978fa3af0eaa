package spawn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/warden-run/warden"
)

// Spawn is one follow-up session as the audit trail tells it.
type Spawn struct {
	// ID is the spawn's id; a refused request has "-".
	ID string `json:"id"`
	// Parent is the session whose completion asked for it; Child the
	// host's session once it started ("" until then).
	Parent string `json:"parent"`
	Child  string `json:"child,omitempty"`
	Host   string `json:"host"`
	Role   string `json:"role,omitempty"`
	Depth  int    `json:"depth,omitempty"`
	Plugin string `json:"plugin,omitempty"`
	Prompt string `json:"prompt,omitempty"`
	// Status is the last event: refused, started, linked or exited.
	Status string `json:"status"`
	// ExitCode is the process's exit status once it exited (-1: it could
	// not start, or was killed).
	ExitCode *int `json:"exit_code,omitempty"`
	// Reason says why a request was refused, or how the process failed.
	Reason string `json:"reason,omitempty"`
	// Log is the process's output, relative to the policy's folder.
	Log  string    `json:"log,omitempty"`
	Time time.Time `json:"time"`
}

// Outcome is the spawn's state in a few words: "refused: ...", "started",
// "running", "exited 0".
func (s Spawn) Outcome() string {
	switch s.Status {
	case Refused:
		return "refused: " + s.Reason
	case Exited:
		if s.ExitCode != nil && *s.ExitCode == 0 {
			return "exited 0"
		}
		if s.Reason != "" {
			return "failed: " + s.Reason
		}
		if s.ExitCode != nil {
			return fmt.Sprintf("exited %d", *s.ExitCode)
		}
		return "exited"
	case Linked:
		return "running"
	}
	return s.Status
}

// List returns the follow-up sessions of parent ("" for every parent),
// oldest first.
func List(ctx context.Context, st warden.AuditLog, parent string) ([]Spawn, error) {
	recs, err := st.Audit(ctx, warden.AuditFilter{Tool: Tool})
	if err != nil {
		return nil, err
	}
	var out []Spawn
	at := map[string]int{}
	for _, a := range recs {
		str := func(k string) string { s, _ := a.Args[k].(string); return s }
		ev := str("event")
		switch ev {
		case Refused:
			out = append(out, Spawn{ID: "-", Parent: a.Session, Host: a.Host, Role: str("role"), Plugin: str("plugin"),
				Prompt: str("prompt"), Status: Refused, Reason: a.Reason, Time: a.Time})
		case Started:
			id := strings.TrimPrefix(a.CallID, startedID)
			at[id] = len(out)
			out = append(out, Spawn{ID: id, Parent: a.Session, Host: a.Host, Role: a.Role, Depth: a.Depth,
				Plugin: str("plugin"), Prompt: str("prompt"), Status: Started, Log: str("log"), Time: a.Time})
		case Linked, Exited:
			id := strings.TrimPrefix(strings.TrimPrefix(a.CallID, linkedID), exitedID)
			i, ok := at[id]
			if !ok {
				continue
			}
			s := &out[i]
			if ev == Linked {
				s.Child = a.Session
				if s.Status == Started {
					s.Status = Linked
				}
				continue
			}
			s.Status = Exited
			code := exitCode(a.Args["exit_code"])
			s.ExitCode = &code
			if e := str("error"); e != "" {
				s.Reason = e
			}
		}
	}
	if parent == "" {
		return out, nil
	}
	var mine []Spawn
	for _, s := range out {
		if s.Parent == parent {
			mine = append(mine, s)
		}
	}
	return mine, nil
}

// exitCode reads a JSON number back (stores give float64 or json.Number).
func exitCode(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	case int64:
		return int(n)
	case interface{ Int64() (int64, error) }:
		i, _ := n.Int64()
		return int(i)
	}
	return -1
}
