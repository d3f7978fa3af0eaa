package report

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Plugin adds a metadata requirement to the final report. Each plugin gets
// its own META block, named by its plugin attribute, validated against its
// schema.
//
// A Session calls Name and Requirements once, when it starts, and OnComplete
// at most once per call of [Session.Complete], from a goroutine of its own.
// An instance belongs to one session (see [Factory]), so it may keep state
// without locking unless it shares it with other sessions itself.
type Plugin interface {
	// Name identifies the plugin in its META tag: 1 to 64 ASCII letters,
	// digits, '.', '_' or '-', starting with a letter or digit, unique among
	// a session's plugins.
	Name() string
	// Requirements returns what the plugin requires and the text a runtime
	// shows the model.
	Requirements() Requirements
	// OnComplete receives the finished session's final report and this
	// plugin's validated metadata. It runs fire-and-forget with a timeout
	// (the context's deadline): an error or panic is logged as a warning and
	// never fails the session.
	OnComplete(ctx context.Context, c Completion) error
}

// Factory makes a fresh plugin instance. [NewSession] calls each factory
// once, so no state leaks from one session to another. A factory that
// returns nil, or a plugin whose requirements are invalid, makes NewSession
// fail: a configuration error.
type Factory func() Plugin

// Requirements is what a plugin requires of the final report. Schema,
// Instruction and ShortInstruction are required, so
// that the metadata guidance can appear everywhere the final report does.
type Requirements struct {
	// Schema is the JSON Schema (draft 2020-12 unless it says otherwise)
	// the META content must satisfy. It may not refer to other documents.
	Schema json.RawMessage
	// Instruction is the full guidance for the system prompt.
	Instruction string
	// ShortInstruction is the one-line guidance for per-turn reminders,
	// final-report examples and retry feedback.
	ShortInstruction string
	// Example, when set, is a valid META value shown to the model in
	// examples and retry feedback.
	Example json.RawMessage
	// CompleteTimeout bounds OnComplete; 0 means the session's default.
	CompleteTimeout time.Duration

	compiled *jsonschema.Schema // set by plugin files, which compile at load
}

// Completion is what OnComplete receives, and what an on-complete command of
// a plugin file reads as JSON on its standard input.
type Completion struct {
	Plugin    string `json:"plugin"`
	SessionID string `json:"session_id,omitempty"`
	// FinalReport is the locked final report, as the model wrote it.
	FinalReport string `json:"final_report"`
	// Meta is this plugin's validated metadata (compact JSON).
	Meta json.RawMessage `json:"meta"`
	// FromCache reports that the session was served from a cache (see
	// [Session.Restore]) rather than generated.
	FromCache bool `json:"from_cache"`

	// The fields below are the session's [Origin], as the runtime gave it
	// ([Config].Origin); each is absent when the runtime does not know it.

	// Request is the user's request: the first user message of the
	// session.
	Request string `json:"request,omitempty"`
	// Messages are the conversation's last messages, oldest first, as the
	// runtime bounds them; MessagesOmitted counts the older ones left out.
	Messages        []Message `json:"messages,omitempty"`
	MessagesOmitted int       `json:"messages_omitted,omitempty"`
	// Agent identifies the agent whose session completed.
	Agent *Agent `json:"agent,omitempty"`
	// Transcript is the path of the host's transcript of the session.
	Transcript string `json:"transcript,omitempty"`
}

// Message is one message of a conversation: what the user asked or the
// agent answered, as text (tool calls and their results are not
// messages).
type Message struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	Text string `json:"text"`
}

// Agent identifies the agent of a session.
type Agent struct {
	// Host is the agent host (claude, codex, gemini, opencode, or what a
	// Go runtime names itself).
	Host string `json:"host,omitempty"`
	// Session is the session id; Parent the delegating session's, for a
	// subagent.
	Session string `json:"session,omitempty"`
	Parent  string `json:"parent,omitempty"`
	// Role is the agent's role in the policy; Name the host's name for a
	// subagent (its agent id), "" for a top-level agent.
	Role string `json:"role,omitempty"`
	Name string `json:"name,omitempty"`
	// Depth is the delegation depth: 0 for a top-level session.
	Depth int `json:"depth"`
}

// Origin is what a runtime knows of a session besides its report: the
// user's request, the conversation, the agent and where its transcript
// is. A session hands it to every plugin's OnComplete in the [Completion].
// The runtime bounds and redacts it: the session passes it on as it is.
type Origin struct {
	Request         string
	Messages        []Message
	MessagesOmitted int
	Agent           *Agent
	Transcript      string
}

// completion fills c's origin fields, with copies of its slice and
// pointer: one plugin cannot change what another receives.
func (o Origin) completion(c Completion) Completion {
	c.Request, c.MessagesOmitted, c.Transcript = o.Request, o.MessagesOmitted, o.Transcript
	c.Messages = slices.Clone(o.Messages)
	if o.Agent != nil {
		a := *o.Agent
		c.Agent = &a
	}
	return c
}
