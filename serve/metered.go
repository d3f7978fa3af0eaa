package serve

import (
	"context"
	"errors"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

// metered counts every decision the service records, whichever way it
// came (POST /v1/decide, a remote hook, a failure record), from its audit
// record: outcome, code, rule and latency; and the store's failures.
type metered struct {
	warden.Store
	m *metrics
}

func meter(st warden.Store, m *metrics) warden.Store {
	return &metered{Store: st, m: m}
}

func (s *metered) record(r warden.AuditRecord, err error) {
	if err != nil {
		if !errors.Is(err, warden.ErrConflict) && !errors.Is(err, warden.ErrNotFound) {
			s.m.storeErrors.Inc()
		}
		return
	}
	if r.ID == 0 {
		return
	}
	d := warden.Decision{Decision: r.Decision, Code: r.Code, Rule: r.Rule}
	s.m.decided(d, r.Latency.Seconds())
}

// AppendAudit counts a decision recorded on its own (a call outside a
// session, an ask, a failure).
func (s *metered) AppendAudit(ctx context.Context, r warden.AuditRecord) (warden.AuditRecord, error) {
	r, err := s.Store.AppendAudit(ctx, r)
	s.record(r, err)
	return r, err
}

// WriteDecision counts the decision the session layer writes with its
// session (warden.DecisionWriter).
func (s *metered) WriteDecision(ctx context.Context, id string, fn func(*warden.Session, bool) (*warden.DecisionRecord, error)) (warden.Session, warden.AuditRecord, error) {
	sess, r, err := s.Store.WriteDecision(ctx, id, fn)
	s.record(r, err)
	return sess, r, err
}

// Spool passes the store's spool on (warden.Spooler): the record of a
// call answered while the store was down waits there until it is back.
func (s *metered) Spool(r warden.AuditRecord) error {
	sp, ok := s.Store.(warden.Spooler)
	if !ok {
		return errors.New("spool an audit record: the store keeps no spool")
	}
	return sp.Spool(r)
}

// Close closes the store itself.
func (s *metered) Close() error { return s.Store.Close() }

// Interface guards.
var (
	_ warden.Spooler = (*metered)(nil)
	_ session.Store  = (*metered)(nil)
)
