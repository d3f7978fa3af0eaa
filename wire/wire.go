// Package wire is what warden's front ends and their clients say to each
// other: the hook request and answer that warden-hook sends to `warden
// hookd` and to `warden serve` (POST /v1/hook), the bodies of POST
// /v1/decide and /v1/hidden, the nonce every request to the service
// carries, and the error body that carries an error's code.
//
// It links the standard library only, and little of it (no net/http, no
// crypto): warden-hook, which hosts start for every event, imports it.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Version is the hook protocol's version. hookd answers only requests of
// its own version; the client runs `warden hook` itself otherwise.
const Version = 1

// Hook request operations.
const (
	OpHook = "hook"
	OpPing = "ping"
	OpStop = "stop"
)

// HookRequest is one hook event from warden-hook to hookd (over its Unix
// socket) or to warden serve (POST /v1/hook).
type HookRequest struct {
	V  int    `json:"v"`
	Op string `json:"op"` // OpHook, OpPing or OpStop
	// Args are the arguments after `warden hook`: the host and its flags.
	Args []string `json:"args,omitempty"`
	// Dir is the client's working directory, for relative paths and for
	// finding the policy when the host reports no project directory.
	Dir string `json:"dir,omitempty"`
	// Stdin is the host's hook JSON.
	Stdin []byte `json:"stdin,omitempty"`
	// Home is the client's $HOME: policies expand ~ with it, so a hookd
	// with another home does not answer.
	Home string `json:"home,omitempty"`
	// Interactive reports, for Gemini CLI and Claude Code, whether the
	// host that runs the client can show its own confirmation prompt (only
	// the client can tell: it looks at its parent processes and its
	// environment).
	Interactive bool `json:"interactive,omitempty"`
	// CallID identifies this call in the audit trail: when hookd dies
	// mid-call, the client runs `warden hook` with the same id, and a call
	// hookd had decided is not decided again.
	CallID string `json:"call_id,omitempty"`
}

// HookResponse is the answer to a HookRequest: what `warden hook` would
// have written and its exit code. Refused is set when hookd did not run
// the hook at all (another protocol version, a request it cannot read);
// the client then runs `warden hook` itself.
type HookResponse struct {
	V       int    `json:"v"`
	Code    int    `json:"code"`
	Stdout  []byte `json:"stdout,omitempty"`
	Stderr  []byte `json:"stderr,omitempty"`
	Refused string `json:"refused,omitempty"`
	// PID is hookd's process id (ping).
	PID int `json:"pid,omitempty"`
	// Nonce is the request's nonce (NonceHeader), echoed by `warden serve`
	// in its answer to POST /v1/hook.
	Nonce string `json:"nonce,omitempty"`
}

// DecideRequest is the body of POST /v1/decide.
type DecideRequest struct {
	// Call is the tool call, as warden.ParseToolCall reads it.
	Call json.RawMessage `json:"call"`
	// Wait is how long to wait for a human's answer to an ask (a Go
	// duration: "30s"; empty: do not wait, the ask names the approval).
	Wait string `json:"wait,omitempty"`
	// HostPrompts: the caller asks its user itself; an ask is returned as
	// it is and no approval is queued.
	HostPrompts bool `json:"host_prompts,omitempty"`
	// CallID makes a retried call get the decision on record: the same
	// call (tool and arguments) from the same agent token in the same
	// session. Any other call with an id on record is denied (BAD_INPUT,
	// "call id ... was given already for another call") and that refusal
	// is recorded; it is never given the recorded call's answer.
	CallID string `json:"call_id,omitempty"`
}

// HiddenRequest is the body of POST /v1/hidden.
type HiddenRequest struct {
	Tools   []string `json:"tools"`
	Role    string   `json:"role,omitempty"`
	Session string   `json:"session,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
}

// HiddenResponse is the answer of POST /v1/hidden.
type HiddenResponse struct {
	Hidden []string `json:"hidden"`
	// Nonce echoes the request's NonceHeader.
	Nonce string `json:"nonce,omitempty"`
}

// ErrorBody is the body of every answer of the service that is not a
// decision: the message, and the error's code where it has one (the codes
// of warden.Code: SERVICE_REFUSED, BAD_INPUT, STORE_UNAVAILABLE, ...), so
// that a client fails closed with the service's own code rather than one
// guessed from the HTTP status.
type ErrorBody struct {
	Error string `json:"error"`
	Code  string `json:"code,omitempty"`
}

// NonceHeader carries a fresh nonce with every request a client sends to
// the service (POST /v1/decide, /v1/hook, /v1/hidden); the service echoes
// it in its answer ("nonce"). The client takes only an answer that echoes
// its own nonce: an answer meant for another request (a proxy or cache in
// between, a replayed response, a load balancer that mixes up
// connections) is no answer. It is a header, not a field of the body, so
// that a service older than the echo still reads the request (it answers
// without the echo, which the client refuses as too old).
const NonceHeader = "X-Warden-Nonce"

// MaxNonce bounds the nonce the service echoes.
const MaxNonce = 128

// NewNonce is a fresh nonce for one request: "n-" and 24 hex digits from
// the system's random source ("" if that failed: the caller must not send
// the request).
func NewNonce() string {
	var b [12]byte
	if RandomBytes(b[:]) != nil {
		return ""
	}
	return string(appendHex(append(make([]byte, 0, 2+2*len(b)), "n-"...), b[:]))
}

const hexDigits = "0123456789abcdef"

// appendHex appends b in lower-case hex (the package links no
// encoding/hex).
func appendHex(out, b []byte) []byte {
	for _, c := range b {
		out = append(out, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return out
}

// OrderedID is a call id that sorts by the time it was made: prefix, the
// milliseconds of t since 1970 as 12 hex digits, then rnd in hex. Ids made
// in time order are in order as strings too, so the audit's index of call
// ids takes each new one at its end: a group of decisions writes one page
// of that index, not a page a decision (random ids), and a large store
// keeps the pages it writes in memory. The random part keeps each id
// unguessable and unique.
func OrderedID(prefix string, t time.Time, rnd []byte) string {
	out := make([]byte, 0, len(prefix)+12+2*len(rnd))
	out = append(out, prefix...)
	ms := uint64(t.UnixMilli())
	for shift := 44; shift >= 0; shift -= 4 {
		out = append(out, hexDigits[ms>>shift&0xf])
	}
	return string(appendHex(out, rnd))
}

// ValidNonce reports whether n is a nonce the service echoes: 1 to 128
// characters of letters, digits, '-', '_' and '.'.
func ValidNonce(n string) bool {
	if n == "" || len(n) > MaxNonce {
		return false
	}
	return strings.IndexFunc(n, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.')
	}) < 0
}

// CheckAnswer reports a hook answer that is not one `warden hook` can
// give: an exit code other than 0 or 2 (a crash, a signal: hosts read
// those as a hook that failed, and go on with the call), or an output
// that is not one JSON object (hosts read text as "no objection").
func CheckAnswer(stdout []byte, code int) error {
	if code != 0 && code != 2 {
		return fmt.Errorf("exit code %d, not a hook answer (0 or 2)", code)
	}
	out := bytes.TrimSpace(stdout)
	if len(out) == 0 || out[0] != '{' || !json.Valid(out) {
		if len(out) > 200 {
			out = append(out[:200:200], "..."...)
		}
		return fmt.Errorf("the answer is not one JSON object: %q", out)
	}
	return nil
}
