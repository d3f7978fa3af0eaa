package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SpawnRequest asks the runtime to start a follow-up agent session: the
// seed's createSession. A plugin asks for one from OnComplete with
// [CreateSession]; a plugin file asks with its `spawn:` key or with the
// on-complete command's output (see [ParseResult]). The runtime (warden's
// package spawn) checks the request against the policy, records the new
// session with its parent and starts the host's headless mode.
type SpawnRequest struct {
	// Host names the agent host to run (claude, codex, gemini, opencode).
	Host string `json:"host"`
	// Prompt is the follow-up session's first (and only) prompt.
	Prompt string `json:"prompt"`
	// Role is the new session's role; "" takes the parent's.
	Role string `json:"role,omitempty"`
	// Cwd is the folder the host runs in, relative to the project folder
	// (the policy's); "" is the project folder.
	Cwd string `json:"cwd,omitempty"`
	// Plugin and Parent are set by the runtime: the plugin that asked, and
	// the session whose completion it handled.
	Plugin string `json:"-"`
	Parent string `json:"-"`
}

// MaxSpawnPrompt bounds a spawn request's prompt, in bytes.
const MaxSpawnPrompt = 32 << 10

// Check reports what is wrong with a request as the plugin wrote it: a
// missing host or prompt, a prompt over MaxSpawnPrompt, not UTF-8 or
// starting with '-' (a flag to the host's command line). The
// runtime checks the rest (the host, the role, the limits) against the
// policy.
func (r SpawnRequest) Check() error {
	var bad []string
	if strings.TrimSpace(r.Host) == "" {
		bad = append(bad, `"host" is required`)
	}
	switch {
	case strings.TrimSpace(r.Prompt) == "":
		bad = append(bad, `"prompt" is required`)
	case len(r.Prompt) > MaxSpawnPrompt:
		bad = append(bad, fmt.Sprintf(`"prompt" is %d bytes, over %d`, len(r.Prompt), MaxSpawnPrompt))
	case !utf8.ValidString(r.Prompt):
		bad = append(bad, `"prompt" is not valid UTF-8`)
	case strings.HasPrefix(r.Prompt, "-"):
		// The prompt is an argument of the host's command line: one that
		// starts with '-' could be read as a flag.
		bad = append(bad, `"prompt" starts with '-', which the host's command line could read as a flag: start it with a word`)
	}
	if len(bad) > 0 {
		return errors.New("spawn request: " + strings.Join(bad, "; "))
	}
	return nil
}

// Spawner starts a follow-up session for a request, or says why not. It
// returns once the session is started (or refused); it does not wait for
// the session to end.
type Spawner func(ctx context.Context, r SpawnRequest) error

type spawnerKey struct{}

// WithSpawner returns a context whose OnComplete calls can start sessions
// with sp: Session.Complete hands the context's values to each plugin.
func WithSpawner(ctx context.Context, sp Spawner) context.Context {
	return context.WithValue(ctx, spawnerKey{}, sp)
}

// ErrNoSpawner is returned by CreateSession when the runtime that called
// OnComplete cannot start sessions.
var ErrNoSpawner = errors.New("this runtime cannot start sessions (no spawner in the context; `warden report complete` has one)")

// CreateSession asks the runtime that called OnComplete to start a
// follow-up session (the seed's createSession). The request is checked
// first (SpawnRequest.Check); the error says why a session was not
// started.
func CreateSession(ctx context.Context, r SpawnRequest) error {
	if err := r.Check(); err != nil {
		return err
	}
	sp, _ := ctx.Value(spawnerKey{}).(Spawner)
	if sp == nil {
		return ErrNoSpawner
	}
	return sp(ctx, r)
}

// ParseResult reads what an on-complete command printed on its standard
// output. Output that does not start with '{' (after white space) is not a
// result: nil, nil, so a command that prints a log line keeps working.
// Output that does must be exactly one JSON object with the only key
// "spawn", whose value is one request object or a list of them, each with
// the fields of SpawnRequest (host, prompt, role, cwd) and no others;
// anything else is an error that says what is wrong.
func ParseResult(out []byte) ([]SpawnRequest, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 || out[0] != '{' {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := strictJSON(out, &top); err != nil {
		return nil, fmt.Errorf("on-complete output: not one JSON object: %v", err)
	}
	var reqs []SpawnRequest
	for k, v := range top {
		if k != "spawn" {
			return nil, fmt.Errorf("on-complete output: unknown key %q (known: spawn)", k)
		}
		v = bytes.TrimSpace(v)
		var list []json.RawMessage
		switch {
		case len(v) > 0 && v[0] == '[':
			if err := json.Unmarshal(v, &list); err != nil {
				return nil, fmt.Errorf("on-complete output: \"spawn\": %v", err)
			}
		case len(v) > 0 && v[0] == '{':
			list = []json.RawMessage{v}
		default:
			return nil, errors.New(`on-complete output: "spawn" must be an object or a list of objects`)
		}
		for i, raw := range list {
			var r SpawnRequest
			if err := strictJSON(raw, &r); err != nil {
				return nil, fmt.Errorf("on-complete output: spawn[%d]: %v (known fields: host, prompt, role, cwd)", i, err)
			}
			if err := r.Check(); err != nil {
				return nil, fmt.Errorf("on-complete output: spawn[%d]: %v", i, err)
			}
			reqs = append(reqs, r)
		}
	}
	return reqs, nil
}

// ResultError is the error of a plugin file whose on-complete command
// printed a result ParseResult refuses: nothing was asked for. A runtime
// that keeps a record of follow-up sessions records it there too, so that
// a request that never was one is not only in a log.
type ResultError struct {
	Plugin string
	Err    error
}

func (e *ResultError) Error() string { return e.Err.Error() }
func (e *ResultError) Unwrap() error { return e.Err }

// strictJSON decodes one JSON value, refusing unknown fields and trailing
// data.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err == nil {
		return errors.New("more than one JSON value")
	}
	return nil
}

// SpawnTemplate is a plugin file's `spawn:` key: a follow-up session asked
// for after every completion. Its prompt may name the completion's fields:
// {{final_report}}, {{session_id}}, {{plugin}}, {{meta}} (the metadata as
// JSON) and {{meta.KEY}} (one top-level field of the metadata: a string
// as it is, anything else as JSON).
type SpawnTemplate struct {
	Host   string
	Prompt string
	Role   string
	Cwd    string
}

// spawnFields are the names a spawn prompt may use besides meta.KEY.
var spawnFields = map[string]bool{"final_report": true, "session_id": true, "plugin": true, "meta": true}

// checkTemplate reports a placeholder the prompt names that Expand does
// not know, or one left open.
func checkTemplate(prompt string) error {
	rest := prompt
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			return nil
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return fmt.Errorf("%q is not closed with }}", rest[i:min(len(rest), i+20)])
		}
		name := strings.TrimSpace(rest[i+2 : i+j])
		if !spawnFields[name] && !(strings.HasPrefix(name, "meta.") && len(name) > 5) {
			return fmt.Errorf("unknown placeholder {{%s}} (known: final_report, session_id, plugin, meta, meta.KEY)", name)
		}
		rest = rest[i+j+2:]
	}
}

// Expand makes the request of a completion.
func (t SpawnTemplate) Expand(c Completion) SpawnRequest {
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(c.Meta, &meta)
	var b strings.Builder
	rest := t.Prompt
	for {
		i := strings.Index(rest, "{{")
		j := strings.Index(rest[max(i, 0):], "}}")
		if i < 0 || j < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		name := strings.TrimSpace(rest[i+2 : i+j])
		switch name {
		case "final_report":
			b.WriteString(c.FinalReport)
		case "session_id":
			b.WriteString(c.SessionID)
		case "plugin":
			b.WriteString(c.Plugin)
		case "meta":
			b.Write(c.Meta)
		default:
			raw := meta[strings.TrimPrefix(name, "meta.")]
			var s string
			if json.Unmarshal(raw, &s) == nil {
				b.WriteString(s)
			} else {
				b.Write(raw)
			}
		}
		rest = rest[i+j+2:]
	}
	return SpawnRequest{Host: t.Host, Prompt: b.String(), Role: t.Role, Cwd: t.Cwd}
}
