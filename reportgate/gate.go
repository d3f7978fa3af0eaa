package reportgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/report"
)

// Tool is the pseudo-tool name of the gate's audit records.
const Tool = "final_report"

// Store is what the gate needs of a warden store.
type Store interface {
	warden.ReportStore
	warden.ReportCache
	warden.AuditLog
	// Session gives the agent's identity to the plugins' completions.
	Session(ctx context.Context, id string) (warden.Session, error)
	// Now is the store's clock, which judges a cache entry's age.
	Now() time.Time
}

// errUnchanged ends an UpdateReport that has nothing to store.
var errUnchanged = errors.New("unchanged")

// errTentative ends the UpdateReport of a tentative held turn: nothing is
// stored.
var errTentative = errors.New("tentative")

// newSession builds the report session of a policy with a known nonce.
func newSession(rp *policy.Report, nonce, sid string, logger *slog.Logger) (*report.Session, error) {
	return report.NewSession(&report.Config{Nonce: nonce, Plugins: rp.Files.Factories(), SessionID: sid, Logger: logger})
}

// Instructions returns the report instructions for session s when the
// policy holds it to the report contract, and "" otherwise. The first call
// for a session draws its nonce and stores it; later calls (after a
// compaction, a resume) give the same nonce. A session whose report is
// final or failed gets "".
func Instructions(ctx context.Context, pol *policy.Policy, st warden.ReportStore, s warden.Session) (string, error) {
	rp := pol.Report
	if !rp.Applies(s.Role, s.Depth) || s.ID == "" {
		return "", nil
	}
	// Most calls find the nonce drawn already (OpenCode asks at every
	// request): a read, no write.
	r, err := st.Report(ctx, s.ID)
	if err == nil && r.Nonce != "" {
		return instructionsFor(rp, r)
	}
	r, err = st.UpdateReport(ctx, s.ID, func(r *warden.Report, created bool) error {
		if r.Nonce != "" {
			return errUnchanged
		}
		t, err := report.NewTags("", nil)
		if err != nil {
			return err
		}
		r.Nonce, r.Status = t.Nonce, warden.ReportPending
		return nil
	})
	if errors.Is(err, errUnchanged) {
		r, err = st.Report(ctx, s.ID)
	}
	if err != nil {
		return "", fmt.Errorf("report instructions for session %s: %w", s.ID, err)
	}
	return instructionsFor(rp, r)
}

// instructionsFor is the instructions text of a report, "" once it is
// final or failed.
func instructionsFor(rp *policy.Report, r warden.Report) (string, error) {
	if r.Status != warden.ReportPending {
		return "", nil
	}
	rs, err := newSession(rp, r.Nonce, r.Session, nil)
	if err != nil {
		return "", err
	}
	return text(rs.Instructions()), nil
}

// text makes model-facing text terminal-safe with one final line break.
func text(s string) string {
	return strings.TrimRight(warden.TerminalSafe(s), "\n") + "\n"
}

// Turn is the end of one turn, as a host's hook reports it.
type Turn struct {
	// Session is the session (its ID, Role and Depth decide whether the
	// contract applies); Host names the host for the audit trail.
	Session warden.Session
	Host    string
	// Message is the text of the last assistant message.
	Message string
	// CannotHold: the host cannot hold the turn open (OpenCode's run):
	// the report is checked and kept as when it is not required.
	CannotHold bool
	// Tentative: the end of the turn is not certain yet (OpenCode's
	// plugin, as an answer's text completes: the answer may still go on
	// with a tool call). A verdict that holds the turn is returned but not
	// stored or recorded (a nonce drawn for the session is kept); the
	// caller stores it with another Stop once the turn has ended. Any
	// other verdict is stored as usual.
	Tentative bool
	// Unknown: warden never saw the session start (its start hook was not
	// wired or failed, or the store lost it). The report is checked all
	// the same, failing closed: a session without a role is held to the
	// contract when any role is, and the turn gets one audit record that
	// says so, whatever the verdict.
	Unknown bool
	// Transcript is the host's transcript file, "" when it gives none:
	// the plugins' completions read the conversation from it.
	Transcript string
}

// unknownNote heads the audit reason of a turn of a session warden never
// saw start.
const unknownNote = "warden never saw this session start; its report was checked all the same"

// applies reports whether the contract holds the turn's session.
func applies(rp *policy.Report, in Turn) bool {
	s := in.Session
	if in.Unknown && s.Role == "" && s.Depth == 0 && rp != nil && len(rp.Roles) > 0 {
		return true // its role is unknown: it may be one the contract holds
	}
	return rp.Applies(s.Role, s.Depth)
}

// Verdict is the gate's answer at the end of a turn.
type Verdict struct {
	// Block holds the turn open; Reason is then the retry text for the
	// model.
	Block  bool
	Reason string
	// Report is the session's report after this turn (zero when the
	// contract does not apply to the session).
	Report warden.Report
	// Changed reports that this turn was checked (false for a session the
	// contract does not apply to, or whose report was already final or
	// failed).
	Changed bool
}

// Gate is the end-of-turn gate of one policy on one store.
type Gate struct {
	Policy *policy.Policy
	Store  Store
	// Complete hands a session's final report to the plugins' on-complete
	// commands; nil runs them in this process (RunCompleteWith) and waits.
	// A hook process that must answer at once starts them in a process of
	// its own (with the transcript of the Turn or Request at hand).
	Complete func(ctx context.Context, sid string)
	// Logger receives warnings; nil is slog.Default().
	Logger *slog.Logger
}

func (g *Gate) logger() *slog.Logger {
	if g.Logger != nil {
		return g.Logger
	}
	return slog.Default()
}

// Stop checks the end of a turn. It returns a verdict that blocks only
// after the session's retry counter was counted up in the store; any
// error means the turn ends (the caller answers as at any failure at the
// end of a turn, without a block).
func (g *Gate) Stop(ctx context.Context, in Turn) (Verdict, error) {
	rp := g.Policy.Report
	s := in.Session
	if !applies(rp, in) || s.ID == "" {
		return Verdict{}, nil
	}
	var v Verdict
	var turn *report.Turn
	tentative := false // a tentative held turn: only a new nonce is stored
	r, err := g.Store.UpdateReport(ctx, s.ID, func(r *warden.Report, created bool) error {
		v, turn, tentative = Verdict{}, nil, false
		if r.Status == warden.ReportFinal || r.Status == warden.ReportFailed {
			return errUnchanged
		}
		orig := *r
		fresh := r.Nonce == ""
		if fresh {
			// The session never got its instructions (it started before
			// the policy asked for a report, or its start failed): a nonce
			// now, and the instructions as the retry text.
			t, err := report.NewTags("", nil)
			if err != nil {
				return err
			}
			r.Nonce = t.Nonce
		}
		rs, err := newSession(rp, r.Nonce, s.ID, g.logger())
		if err != nil {
			return err
		}
		var final *string
		if r.FinalReport != "" {
			final = &r.FinalReport
		}
		if err := rs.Resume(final, r.Metas, r.Turns); err != nil {
			// A plugin's schema changed since: its metadata is asked again.
			if err := rs.Resume(final, nil, r.Turns); err != nil {
				return err
			}
		}
		turn = rs.Turn([]byte(in.Message))
		r.Turns++
		r.Status = warden.ReportPending
		r.FinalReport, _ = rs.Final()
		r.Metas = rs.Accepted()
		v.Changed = true
		reason := turn.Feedback
		if fresh {
			reason = "Your turn ended, but this session must end with a final report, and you were not given its format before. This is the format:\n\n" + rs.Instructions()
		}
		switch {
		case turn.Done:
			r.Status, r.Problem = warden.ReportFinal, ""
		case !rp.Required || in.CannotHold:
			r.Problem = reason
		case r.Retries < rp.Retries:
			r.Retries++
			r.Problem = reason
			v.Block, v.Reason = true, text(reason)
		default:
			r.Status = warden.ReportFailed
			r.Problem = fmt.Sprintf("The report was still not valid after %d retries; the turn ended without it.\n\n%s", r.Retries, reason)
		}
		if in.Tentative && v.Block {
			tentative = true
			if !fresh {
				return errTentative
			}
			nonce := r.Nonce
			*r = orig
			r.Nonce, r.Status = nonce, warden.ReportPending
		}
		return nil
	})
	if tentative && (err == nil || errors.Is(err, errTentative)) {
		v.Report = r
		return v, nil
	}
	if errors.Is(err, errUnchanged) {
		if in.Unknown {
			g.auditUnknown(ctx, in, r)
		}
		return Verdict{Report: r}, nil
	}
	if err != nil {
		return Verdict{}, fmt.Errorf("report gate for session %s: %w", s.ID, err)
	}
	v.Report = r
	if err := g.audit(ctx, in, r, turn, v); err != nil {
		// The report is stored; a missing audit record must not hold the
		// turn open.
		g.logger().Warn("report: audit record failed", "session", s.ID, "error", err)
	}
	if r.Status == warden.ReportFinal {
		if err := g.keep(ctx, s, in.Host, r); err != nil {
			g.logger().Warn("report cache: keep the report", "session", s.ID, "error", err)
		}
		g.complete(ctx, s.ID, in.Transcript)
	}
	return v, nil
}

// complete hands a final report to the plugins: through g.Complete, or
// in this process.
func (g *Gate) complete(ctx context.Context, sid, transcript string) {
	if g.Complete != nil {
		g.Complete(ctx, sid)
	} else if err := RunCompleteWith(ctx, g.Policy, g.Store, sid, CompleteOptions{Transcript: transcript, Logger: g.logger()}); err != nil {
		g.logger().Warn("report: on-complete", "session", sid, "error", err)
	}
}

// audit records the turn: an allow when the report became final, a deny
// with REPORT_INVALID for a retry and for a report that failed. A turn
// without a report when none is required is not recorded.
func (g *Gate) audit(ctx context.Context, in Turn, r warden.Report, turn *report.Turn, v Verdict) error {
	rec := warden.AuditRecord{Session: in.Session.ID, Role: in.Session.Role, Host: in.Host, Depth: in.Session.Depth,
		Tool: Tool, Mode: "enforce"}
	args := map[string]any{"status": r.Status, "turn": r.Turns, "retries": r.Retries}
	switch {
	case r.Status == warden.ReportFinal:
		rec.Decision, rec.Code, rec.Reason = warden.Allow, warden.CodeAllowed, "the final report and the metadata of every plugin are valid"
		metas := map[string]any{}
		for name, raw := range r.Metas {
			var x any
			if json.Unmarshal(raw, &x) == nil {
				metas[name] = x
			}
		}
		args["final_report"] = r.FinalReport
		args["metas"] = metas
	case v.Block || r.Status == warden.ReportFailed:
		rec.Decision, rec.Code = warden.Deny, warden.CodeReportInvalid
		rec.Reason = problems(turn)
		if r.Status == warden.ReportFailed {
			rec.Reason = fmt.Sprintf("retry limit (%d) reached: %s", g.Policy.Report.Retries, rec.Reason)
		}
	case in.Unknown:
		// Not required, or the host cannot hold the turn: let through.
		rec.Decision, rec.Code, rec.Reason = warden.Allow, warden.CodeAllowed, "the turn ended without a valid report: "+problems(turn)
	default:
		return nil
	}
	if in.Unknown {
		rec.Reason = unknownNote + ": " + rec.Reason
	}
	rec.Args = warden.RedactArgsCut(args, 4000)
	_, err := g.Store.AppendAudit(ctx, rec)
	return err
}

// auditUnknown records the turn of a session warden never saw start whose
// report was final or failed already: nothing was checked again.
func (g *Gate) auditUnknown(ctx context.Context, in Turn, r warden.Report) {
	if r.Status == "" {
		if got, err := g.Store.Report(ctx, in.Session.ID); err == nil {
			r = got
		}
	}
	rec := warden.AuditRecord{Session: in.Session.ID, Role: in.Session.Role, Host: in.Host, Depth: in.Session.Depth,
		Tool: Tool, Mode: "enforce", Decision: warden.Allow, Code: warden.CodeAllowed,
		Reason: unknownNote + ": the report is " + string(r.Status) + " already"}
	rec.Args = warden.RedactArgsCut(map[string]any{"status": r.Status, "turn": r.Turns, "retries": r.Retries}, 4000)
	if _, err := g.Store.AppendAudit(ctx, rec); err != nil {
		g.logger().Warn("report: audit record failed", "session", in.Session.ID, "error", err)
	}
}

// problems summarises a turn's verdict in one line.
func problems(t *report.Turn) string {
	if t == nil {
		return ""
	}
	var out []string
	switch t.Final {
	case report.FinalMissing, report.FinalEmpty, report.FinalTruncated, report.FinalDuplicate, report.FinalQuoted, report.FinalPlaceholder:
		out = append(out, "final report "+string(t.Final))
	}
	for _, m := range t.Metas {
		if m.Status != report.MetaValid && m.Status != report.MetaKept {
			out = append(out, fmt.Sprintf("metadata for plugin %q %s", m.Plugin, m.Status))
		}
	}
	if len(out) == 0 {
		return "the report instructions were not given before this turn"
	}
	return strings.Join(out, "; ")
}

// RunComplete hands a final report to each plugin's on-complete command,
// once: the first call for a session marks the report completed in the
// store and runs the commands (each with its timeout, waiting for all);
// later calls do nothing. Failures are logged as warnings and returned;
// they never change the report. Its completions carry no origin and
// from_cache false; RunCompleteWith gives both.
func RunComplete(ctx context.Context, pol *policy.Policy, st warden.ReportStore, sid string, logger *slog.Logger) error {
	rp, r, logger, err := toComplete(ctx, pol, st, sid, logger)
	if err != nil || rp == nil {
		return err
	}
	return completeReport(ctx, rp, r, report.Origin{}, false, logger)
}

// toComplete marks a session's final report completed for the
// on-complete commands, once: a nil Report section with a nil error means
// it was completed before (nothing to do). logger nil is slog.Default().
func toComplete(ctx context.Context, pol *policy.Policy, st warden.ReportStore, sid string, logger *slog.Logger) (*policy.Report, warden.Report, *slog.Logger, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if pol.Report == nil {
		return nil, warden.Report{}, logger, errors.New("the policy has no report section")
	}
	r, err := markCompleted(ctx, st, sid)
	if errors.Is(err, errUnchanged) {
		return nil, r, logger, nil
	}
	if err != nil {
		return nil, r, logger, err
	}
	return pol.Report, r, logger, nil
}

// completeReport runs the on-complete commands of a final report.
func completeReport(ctx context.Context, rp *policy.Report, r warden.Report, origin report.Origin, fromCache bool, logger *slog.Logger) error {
	rs, err := report.NewSession(&report.Config{Nonce: r.Nonce, Plugins: rp.Files.Factories(), SessionID: r.Session, Logger: logger, Origin: origin})
	if err != nil {
		return err
	}
	final := r.FinalReport
	if err := rs.Resume(&final, r.Metas, r.Turns); err != nil {
		return err
	}
	pend, err := rs.Complete(ctx, fromCache)
	if err != nil {
		return err
	}
	return errors.Join(pend.Wait()...)
}

// CompleteOptions are the options of RunCompleteWith.
type CompleteOptions struct {
	// Transcript is the host's transcript file of the session, "" when
	// there is none: the completions' messages come from it.
	Transcript string
	// Logger receives the warnings; nil is slog.Default().
	Logger *slog.Logger
}

// RunCompleteWith is RunComplete with the completion's origin: the
// session's request, messages and agent (Origin), and from_cache set for
// a session answered from the response cache. A transcript that cannot be
// read is logged and leaves the messages out.
func RunCompleteWith(ctx context.Context, pol *policy.Policy, st Store, sid string, opt CompleteOptions) error {
	rp, r, logger, err := toComplete(ctx, pol, st, sid, opt.Logger)
	if err != nil || rp == nil {
		return err
	}
	s, err := st.Session(ctx, sid)
	if errors.Is(err, warden.ErrNotFound) {
		s, err = warden.Session{ID: sid}, nil
	}
	if err != nil {
		return err
	}
	var req *warden.ReportRequest
	fromCache := false
	if rr, err := st.ReportRequest(ctx, sid); err == nil {
		req, fromCache = &rr, rr.Served != ""
	} else if !errors.Is(err, warden.ErrNotFound) {
		return err
	}
	origin, err := Origin(s, opt.Transcript, req)
	if err != nil {
		logger.Warn("report: on-complete without the conversation", "session", sid, "error", err)
	}
	return completeReport(ctx, rp, r, origin, fromCache, logger)
}

// markCompleted marks a final report completed, once: errUnchanged when
// it is not final or was completed already.
func markCompleted(ctx context.Context, st warden.ReportStore, sid string) (warden.Report, error) {
	return st.UpdateReport(ctx, sid, func(r *warden.Report, created bool) error {
		if created {
			return fmt.Errorf("session %s has no report: %w", sid, warden.ErrNotFound)
		}
		if r.Status != warden.ReportFinal || r.Completed {
			return errUnchanged
		}
		r.Completed = true
		return nil
	})
}
