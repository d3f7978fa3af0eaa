package warden

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Session is what warden remembers about one agent session between tool
// calls (package session tracks them). A hook is a new process per call, so
// every field lives in a store.
type Session struct {
	ID string `json:"id"`
	// Role is the agent role of the session; empty means no role.
	Role string `json:"role,omitempty"`
	// Host is the agent host the session runs in (claude, codex, ...).
	Host string `json:"host,omitempty"`
	// Parent is the id of the session that delegated to this one, if any.
	Parent string `json:"parent,omitempty"`
	// Depth is the delegation depth: 0 for a top-level session, the
	// parent's depth plus one for a delegated one.
	Depth int `json:"depth"`
	// FirstTool is the name of the first tool call that was not denied;
	// empty until then. The role's `first` list is checked while it is
	// empty.
	FirstTool string `json:"first_tool,omitempty"`
	// Calls counts decided tool calls; Violations those that were denied
	// or broke the required-first-tool or depth rules.
	Calls      int `json:"calls"`
	Violations int `json:"violations"`
	// GovernanceInjected reports that the governance text due at this
	// moment (session-start prefix, or the reminder after a compaction)
	// was handed to the host.
	GovernanceInjected bool `json:"governance_injected"`
	// Compactions counts the host's context compactions; Resumes the
	// times the session was resumed.
	Compactions int `json:"compactions"`
	Resumes     int `json:"resumes"`
	// IntentID is the active intent; Intent the user's latest request, used
	// as the intent text of calls that carry none.
	IntentID string `json:"intent_id,omitempty"`
	Intent   string `json:"intent,omitempty"`
	// Status is one of the SessionActive, SessionIdle, SessionEnded.
	Status    string    `json:"status"`
	StartedAt time.Time `json:"started_at"`
	LastSeen  time.Time `json:"last_seen"`
	// EndedAt is set when the session went idle or ended.
	EndedAt time.Time `json:"ended_at,omitempty"`
	// Archived reports that the session is older than the state's session
	// age limit; archived sessions are kept but not listed by default.
	Archived bool `json:"archived,omitempty"`
	// Agent is who opened the session: the agent token's name for warden
	// serve, empty for the local hooks. Only that agent decides in it.
	Agent string `json:"agent,omitempty"`
}

// Session statuses.
const (
	SessionActive = "active"
	SessionIdle   = "idle"
	SessionEnded  = "ended"
)

// FirstToolUsed reports whether the session's first tool call was made.
func (s Session) FirstToolUsed() bool { return s.FirstTool != "" }

// SessionFilter selects sessions. Zero fields select everything; archived
// sessions are included only with Archived set.
type SessionFilter struct {
	Status   string
	Archived bool
	Limit    int
}

// MaxSessionID bounds a session id, in bytes.
const MaxSessionID = 1024

// CheckSessionID reports whether id can name a session: valid UTF-8, at most
// MaxSessionID bytes, no white space at its start or end and no control
// character anywhere. warden never trims or rewrites an id: "s1 " and "s1"
// would be two sessions, and a halted agent could carry on in the second,
// so an id that is not exactly what the host gave is refused. An empty id
// (a call without a session) is valid. The error is an *Error with
// CodeBadInput.
func CheckSessionID(id string) error {
	switch {
	case id == "":
		return nil
	case !utf8.ValidString(id):
		return Errorf(CodeBadInput, "session id %q is not valid UTF-8: send the id the host gave, unchanged", id)
	case len(id) > MaxSessionID:
		return Errorf(CodeBadInput, "session id of %d bytes is over %d: send the id the host gave, unchanged", len(id), MaxSessionID)
	}
	first, _ := utf8.DecodeRuneInString(id)
	last, _ := utf8.DecodeLastRuneInString(id)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return Errorf(CodeBadInput, "session id %q has white space at its start or end: send the id the host gave, unchanged", id)
	}
	if i := strings.IndexFunc(id, unicode.IsControl); i >= 0 {
		return Errorf(CodeBadInput, "session id %q has a control character (byte %d): send the id the host gave, unchanged", id, i+1)
	}
	return nil
}
