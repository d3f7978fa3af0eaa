package report

import (
	"context"
	"encoding/json"
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
}
