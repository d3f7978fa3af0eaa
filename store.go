package warden

import (
	"context"
	"errors"
	"io"
	"time"
)

// Store errors. Implementations wrap them, so test with errors.Is.
var (
	// ErrNotFound: no session, approval, grant or anchor has that id.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the change does not apply to the record's current state
	// (for example, answering an approval that was already answered).
	ErrConflict = errors.New("conflict")
)

// The store interfaces below are declared for their consumers: the session
// layer (SessionStore, GrantStore, ApprovalStore, AuditLog, StateStore) and
// the CLI. Every method of every implementation is safe for concurrent use
// by goroutines and by processes sharing one database; a method that returns
// a nil error has made its change durable (it survives a kill -9 of the
// process right after). A store that fails returns an error, never a
// zero value that could be read as "nothing forbids this".
//
// Times are stored with at least microsecond precision and returned in UTC.

// DecisionWriter writes what one decision changes (the session, a history
// entry, the grant uses, the audit record) in a single transaction: one
// disk sync per decision instead of three. Every Store is one.
type DecisionWriter interface {
	// WriteDecision is UpdateSession, except that fn may also return the
	// decision's audit record and history entry, which are stored in the
	// same transaction with the grant uses; the record is returned with
	// its ID. fn returning nil stores the session alone, as UpdateSession
	// would. A record whose CallID the store holds already stores nothing
	// and returns an error wrapping ErrConflict.
	WriteDecision(ctx context.Context, id string, fn func(s *Session, created bool) (*DecisionRecord, error)) (Session, AuditRecord, error)
}

// Spooler is implemented by stores that keep an audit record they cannot
// take now (the database is down, or too busy to answer in time) in a
// spool file, synced, and take it in when they answer again: the session
// layer spools the record of a call it answered while the store failed,
// so that every answered call has its record.
type Spooler interface {
	// Spool keeps r (secrets already redacted) until the store takes it;
	// a record whose CallID the store holds by then is dropped.
	Spool(r AuditRecord) error
}

// DecisionReader reads what a decision needs first, the halt in force and
// the grants, in one query: one round trip (or read transaction) instead
// of two. Every Store is one.
type DecisionReader interface {
	// HaltAndGrants is Halted(session), AgentHalted(agent) (when agent is
	// not empty; the narrower of the two halts when both hold) and
	// Grants({Session: session}) at once; for an empty session, the grants
	// that belong to no session.
	HaltAndGrants(ctx context.Context, session, agent string) (Halt, bool, []Grant, error)
}

// DecisionRecord is what WriteDecision stores besides the session.
type DecisionRecord struct {
	Audit   AuditRecord
	History *HistoryEntry // nil: none
	// MoreHistory are further entries, stored after History: a call that
	// broke more than one rule has an entry for each.
	MoreHistory []HistoryEntry
	// HistoryKeep, when positive, archives all but the newest HistoryKeep
	// live history entries, as ArchiveHistory does, in the same
	// transaction.
	HistoryKeep int
	// UseGrants are the grants the decision used: each is counted as
	// UseGrant does, in the same transaction. A grant that cannot be used
	// any more fails the whole write with a *GrantUnusableError.
	UseGrants []string
	// HistoryRead reports that the decision read the session's audit
	// records (sequence rules), the newest of them HistoryThrough (0: it
	// had none). The write is then recorded only when the session has no
	// newer record: one recorded meanwhile (by a call decided at the same
	// time, or in another process) fails the write with an error whose
	// StaleRead method reports true, nothing stored, and the caller
	// decides again on the records as they are. So calls of one session
	// decided at once count each other as calls one after the other do
	// (a repeat or rate rule holds under parallel calls).
	HistoryRead    bool
	HistoryThrough int64
}

// GrantUnusableError is WriteDecision's error when a grant the decision
// used was used up, revoked, expired or removed meanwhile: nothing was
// stored, and the caller decides again without that grant.
type GrantUnusableError struct{ ID string }

func (e *GrantUnusableError) Error() string {
	return "grant " + e.ID + " is used up, revoked or expired"
}

// SessionStore keeps sessions.
type SessionStore interface {
	// Session returns the session with the id, or an error wrapping
	// ErrNotFound.
	Session(ctx context.Context, id string) (Session, error)
	// UpdateSession runs fn on the session with the id, creating it (with
	// ID set and every other field zero, created true) when there is none,
	// and stores what fn leaves. It is atomic: concurrent updates of one
	// session, from any process, run one after the other, so fn sees the
	// result of the previous one. If fn returns an error nothing is stored
	// (not even the creation) and UpdateSession returns that error.
	UpdateSession(ctx context.Context, id string, fn func(s *Session, created bool) error) (Session, error)
	// Sessions lists sessions, most recently seen first.
	Sessions(ctx context.Context, f SessionFilter) ([]Session, error)
	// ArchiveSessions marks the sessions last seen before the time as
	// archived and returns how many it marked.
	ArchiveSessions(ctx context.Context, before time.Time) (int, error)
}

// GrantFilter selects grants.
type GrantFilter struct {
	// Session, when set, selects the grants that apply to that session:
	// those without a session and those for it. Empty selects all.
	Session string
	// All includes revoked, expired and used-up grants.
	All bool
}

// GrantStore keeps the standing approvals humans gave.
type GrantStore interface {
	// AddGrant stores a grant. It assigns ID (when empty) and CreatedAt
	// (when zero) and returns the stored grant. UsesLeft 0 is taken as
	// unlimited (-1); a grant's Tool and Subject must not be empty.
	AddGrant(ctx context.Context, g Grant) (Grant, error)
	// Grants lists grants, oldest first. Without f.All it returns only
	// grants that are in force at the store's current time: not revoked,
	// not expired, with uses left.
	Grants(ctx context.Context, f GrantFilter) ([]Grant, error)
	// UseGrant records one use of a grant. It decrements a limited grant's
	// UsesLeft atomically and reports false, changing nothing, when the
	// grant is revoked, expired or used up (the caller must then decide
	// again without it). An unknown id is ErrNotFound.
	UseGrant(ctx context.Context, id string) (bool, error)
	// RevokeGrant ends a grant. An unknown id is ErrNotFound.
	RevokeGrant(ctx context.Context, id string) error
}

// ApprovalStore keeps the approvals queue.
type ApprovalStore interface {
	// CreateApproval records a pending approval. It assigns ID and
	// CreatedAt, sets Status to pending, and returns the stored approval.
	// A call has at most one pending approval: when one with the same
	// non-empty Fingerprint is pending, CreateApproval returns that one
	// and stores nothing, also when several processes race.
	CreateApproval(ctx context.Context, a Approval) (Approval, error)
	// Approval returns one approval, or an error wrapping ErrNotFound.
	Approval(ctx context.Context, id string) (Approval, error)
	// Approvals lists approvals, oldest first.
	Approvals(ctx context.Context, f ApprovalFilter) ([]Approval, error)
	// ResolveApproval answers a pending approval and stores grants in the
	// same transaction (their ids are recorded in Approval.Grants; each
	// grant's Approval field is set to the approval's id). Answering an
	// approval that is not pending is ErrConflict; an unknown id is
	// ErrNotFound.
	ResolveApproval(ctx context.Context, id string, r Resolution, grants []Grant) (Approval, error)
	// ConsumeApproval marks an answered approval as consumed (an approval
	// let a call through on its strength; a rejection was delivered to a
	// call) and reports whether this call did it: of any number of
	// concurrent callers, exactly one gets true. It reports false for an
	// approval that is pending or was consumed already.
	ConsumeApproval(ctx context.Context, id string) (bool, error)
	// PurgeApprovals deletes the approvals whose lifetime ended: pending
	// ones created before pendingBefore, answered ones decided before
	// answeredBefore. It returns how many it deleted.
	PurgeApprovals(ctx context.Context, pendingBefore, answeredBefore time.Time) (int, error)
}

// AuditLog keeps the audit trail.
type AuditLog interface {
	// AppendAudit appends one record, assigning its ID (and its Time when
	// zero), and returns it. A record whose non-empty CallID is stored
	// already is not appended: the error wraps ErrConflict.
	AppendAudit(ctx context.Context, r AuditRecord) (AuditRecord, error)
	// Audit returns the records f selects, oldest first.
	Audit(ctx context.Context, f AuditFilter) ([]AuditRecord, error)
	// Recent returns the session's newest limit records, oldest first: the
	// records Audit(AuditFilter{Session: session, Limit: limit}) returns.
	// A store may keep records it read in memory between calls (the
	// sequence rules read them on every decision); their outcomes are read
	// fresh. The records' maps and slices are shared: callers must not
	// change them.
	Recent(ctx context.Context, session string, limit int) ([]AuditRecord, error)
	// SetOutcome records what a call did on the audit record of the call:
	// the session's record with o.ToolUse when it has one, otherwise the
	// session's latest call of o.Tool that ran and has no outcome yet. No
	// such record is ErrNotFound.
	SetOutcome(ctx context.Context, o Outcome) error
	// PurgeAudit deletes the records older than the time and returns how
	// many it deleted.
	PurgeAudit(ctx context.Context, before time.Time) (int, error)
}

// StateStore keeps the project state.
type StateStore interface {
	// State returns the phase, every anchor (most important first, then
	// oldest first) and the live history (oldest first). A project with
	// no state yet has the zero state, not an error.
	State(ctx context.Context) (ProjectState, error)
	// SetPhase sets the project phase.
	SetPhase(ctx context.Context, phase string) error
	// AddAnchor stores an anchor, assigning ID (when empty) and CreatedAt
	// (when zero). It does not apply the anchor limits (PlanAnchors does).
	AddAnchor(ctx context.Context, a Anchor) (Anchor, error)
	// DemoteAnchor sets a high anchor's priority to normal and its
	// DemotedAt to the store's current time.
	DemoteAnchor(ctx context.Context, id string) error
	// RemoveAnchor deletes an anchor. An unknown id is ErrNotFound.
	RemoveAnchor(ctx context.Context, id string) error
	// AddHistory appends a history entry (assigning ID, and Time when zero).
	AddHistory(ctx context.Context, h HistoryEntry) error
	// ArchiveHistory archives all but the newest keep live entries and
	// returns how many it archived. Archived entries are kept in the store
	// but State no longer returns them.
	ArchiveHistory(ctx context.Context, keep int) (int, error)
	// ArchivedHistory returns the archived history entries, oldest first;
	// limit > 0 keeps the newest limit of them.
	ArchivedHistory(ctx context.Context, limit int) ([]HistoryEntry, error)
}

// Store is everything warden keeps between calls. sqlite.Store and
// postgres.Store implement it; storetest.Run checks the contract.
type Store interface {
	SessionStore
	GrantStore
	ApprovalStore
	AuditLog
	StateStore
	HaltStore
	ReportStore
	ReportCache
	DecisionWriter
	DecisionReader
	io.Closer
	// Now is the time on the store's clock: it stamps what the store
	// writes and judges whether a grant has expired, and the session layer
	// takes its time from it, so that one clock rules a decision.
	Now() time.Time
}

// Halt stops every call of a session (and of its subagents), or with an
// empty Session every call of every session of the project, until it is
// cleared (warden halt and warden resume). A halt with Agent set (and no
// Session) stops every call of that agent token, in any session, new ones
// included (warden halt --agent).
type Halt struct {
	Agent   string    `json:"agent,omitempty"`
	Session string    `json:"session,omitempty"`
	Message string    `json:"message,omitempty"`
	By      string    `json:"by,omitempty"`
	At      time.Time `json:"at"`
}

// HaltStore keeps the emergency halts. Safe for concurrent use.
type HaltStore interface {
	// SetHalt halts a session ("" the whole project), or an agent (Agent
	// set, Session empty), replacing a halt it had. A halt with both
	// Agent and Session set is an error.
	SetHalt(ctx context.Context, h Halt) (Halt, error)
	// ClearHalt lifts a session's halt ("" the project's); lifting none is
	// ErrNotFound.
	ClearHalt(ctx context.Context, session string) error
	// ClearAgentHalt lifts an agent's halt; lifting none is ErrNotFound.
	ClearAgentHalt(ctx context.Context, agent string) error
	// AgentHalted returns the halt of an agent token, if it has one.
	AgentHalted(ctx context.Context, agent string) (h Halt, ok bool, err error)
	// Halts lists every halt, the project's first, agents' last.
	Halts(ctx context.Context) ([]Halt, error)
	// Halted returns the halt that stops a session: its own, a parent's
	// (PARENT/AGENT session ids), or the project's; ok is false when none.
	Halted(ctx context.Context, session string) (h Halt, ok bool, err error)
}
