package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/warden-run/warden"
)

// CheckID reports whether id can name a session (warden.CheckSessionID).
func CheckID(id string) error { return warden.CheckSessionID(id) }

// CallSum is the digest of a call for its call id (warden.AuditRecord.
// CallSum): SHA-256 of the id, the tool and the arguments as JSON (keys
// sorted), in hex. The id salts it, so that equal calls under other ids
// have unrelated sums. A call id answers a later call only when the sums,
// the agent and the session agree (see Options.CallID).
func CallSum(callID string, call warden.ToolCall) string {
	h := sha256.New()
	h.Write([]byte("warden call v1\x00"))
	h.Write([]byte(callID))
	h.Write([]byte{0})
	h.Write([]byte(call.Tool))
	h.Write([]byte{0})
	args := call.Args
	if args == nil {
		args = map[string]any{}
	}
	if err := json.NewEncoder(h).Encode(args); err != nil {
		// Arguments that do not encode (never from JSON): a sum no other
		// call has.
		fmt.Fprintf(h, "%#v", args)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sameCall reports whether a record is of the call a later call with its
// call id is: same agent, same session, same tool and arguments.
// opt.sum is the later call's CallSum.
func sameCall(rec warden.AuditRecord, session string, opt Options) bool {
	return rec.CallSum != "" && rec.Agent == opt.Agent && rec.Session == session && rec.CallSum == opt.sum
}

// CallIDTaken is the decision for a call whose call id is on record for
// another call (another agent's, another session's, or another tool or
// arguments): never that call's answer.
func CallIDTaken(callID string) warden.Decision {
	return warden.Decision{Decision: warden.Deny, Code: warden.CodeBadInput,
		Reason:      fmt.Sprintf("warden did not decide this call: its call id %q was given already for another call; a call id answers only the call it was given for", callID),
		Suggestion:  "Send this call again with a new call id, or with none. A retry repeats its call exactly (same agent, session, tool and arguments) under the same id.",
		Recoverable: true, Warnings: []string{}, Matched: []string{}}
}

// badSession is the decision for a call whose session id CheckID refuses.
func badSession(err error) warden.Decision {
	msg := err.Error()
	var e *warden.Error
	if errors.As(err, &e) {
		msg = e.Message
	}
	return warden.Decision{Decision: warden.Deny, Code: warden.CodeBadInput,
		Reason:      "warden did not decide this call: " + msg + ".",
		Suggestion:  "This is not a policy problem: the call named its session wrongly. Ask the user to check how the host or the program names its sessions; a session id is sent exactly as the host gave it.",
		Recoverable: false, Warnings: []string{}, Matched: []string{}}
}

// OwnerError is the error for a call or session event that names a
// session opened by another agent (or a subagent session of one): a
// session belongs to the agent that opened it (warden.Session.Agent).
type OwnerError struct {
	Session string
	Agent   string // the agent that asked, "" for the local hooks
}

func (e *OwnerError) Error() string {
	who := "this agent token"
	if e.Agent != "" {
		who = "the agent token " + e.Agent
	} else {
		who = "a caller without an agent token"
	}
	return fmt.Sprintf("session %q belongs to another agent: %s cannot use it", e.Session, who)
}

// notOwner is the decision for a call in another agent's session.
func notOwner(e *OwnerError) warden.Decision {
	return warden.Decision{Decision: warden.Deny, Code: warden.CodeRefused,
		Reason:      "warden did not decide this call: " + e.Error() + ". A session, its grants and its approvals belong to the agent token that opened it.",
		Suggestion:  "Use a session of your own: send the session id your host gave you. If this is your session, ask the user to check which agent token this machine sends.",
		Recoverable: false, Warnings: []string{}, Matched: []string{}}
}

// own checks, inside a session's update, that the session is the agent's,
// and gives a new session to the agent.
func own(s *warden.Session, created bool, agent string) error {
	if created {
		s.Agent = agent
		return nil
	}
	if s.Agent != agent {
		return &OwnerError{Session: s.ID, Agent: agent}
	}
	return nil
}

// ownParent checks that a subagent session's parent (PARENT/AGENT ids),
// when it exists, is the agent's: a subagent of another agent's session
// would take that session's role and depth.
func ownParent(p warden.Session, id, agent string) error {
	if p.Agent != agent {
		return &OwnerError{Session: id, Agent: agent}
	}
	return nil
}

// update is Store.UpdateSession for the tracker's agent (Tracker.Agent):
// a session it creates is the agent's, and another agent's session is an
// *OwnerError; a bad id is refused (CheckID).
func (t *Tracker) update(ctx context.Context, id string, fn func(s *warden.Session, created bool) error) (warden.Session, error) {
	if err := CheckID(id); err != nil {
		return warden.Session{}, err
	}
	return t.Store.UpdateSession(ctx, id, func(s *warden.Session, created bool) error {
		if err := own(s, created, t.Agent); err != nil {
			return err
		}
		return fn(s, created)
	})
}

// refused records a call warden refused to decide (a bad session id,
// another agent's session, a call id taken) and returns the result. The
// record names no session (its reason quotes the id): a refused call never
// lands in a session's history, which the sequence rules read.
func (t *Tracker) refused(ctx context.Context, call warden.ToolCall, opt Options, d warden.Decision) (Result, error) {
	call.Session = ""
	rec := FailureRecord(call, Options{Agent: opt.Agent}, d)
	rec.Time = t.now()
	rec, err := t.Store.AppendAudit(ctx, rec)
	if err != nil {
		return Result{Decision: d}, fmt.Errorf("audit: %w", err)
	}
	return Result{Decision: d, Audit: rec}, nil
}

// asOwnerError reports whether err is an *OwnerError.
func asOwnerError(err error) (*OwnerError, bool) {
	var oe *OwnerError
	ok := errors.As(err, &oe)
	return oe, ok
}

// agentFingerprint scopes a call's Fingerprint to an agent token.
func agentFingerprint(fp, agent string) string {
	sum := sha256.Sum256([]byte("agent\x00" + agent + "\x00" + fp))
	return hex.EncodeToString(sum[:])
}
