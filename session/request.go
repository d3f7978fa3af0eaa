package session

import (
	"context"

	"github.com/warden-run/warden"
)

// RequestApproval queues a human approval for a call before it is made
// (warden's MCP tool request_approval). The call is decided as Explain
// decides it, in its session and changing nothing there, and no grant is
// spent. Only an ask queues an approval (or finds the pending one for the
// same call, or the answer waiting for it); the returned decision then
// names it and how a person answers it. An allow needs none, and a deny
// stays a deny: an approval cannot turn it into an allow. The approval
// grants nothing by itself: a human's answer reaches the call when it is
// made, as for any ask (see Decide).
func (t *Tracker) RequestApproval(ctx context.Context, call warden.ToolCall) (Result, error) {
	tr, call, _, err := t.Explain(ctx, call)
	if err != nil {
		return Result{Decision: warden.FailClosed(err)}, err
	}
	res := Result{Decision: tr.Decision, Grants: tr.Grants}
	if tr.Decision.Decision != warden.Ask {
		return res, nil
	}
	now := t.now()
	life := ApprovalLifetime(t.policy())
	if _, err := t.Store.PurgeApprovals(ctx, now.Add(-life), now.Add(-life)); err != nil {
		return Result{Decision: warden.FailClosed(err)}, err
	}
	fp := Fingerprint(call, tr)
	existing, err := t.Store.Approvals(ctx, warden.ApprovalFilter{Fingerprint: fp})
	if err != nil {
		return Result{Decision: warden.FailClosed(err)}, err
	}
	for i := len(existing) - 1; i >= 0; i-- {
		if a := existing[i]; a.Status == warden.ApprovalPending || !a.Consumed {
			res.Approval = &a
			break
		}
	}
	if res.Approval == nil {
		a, err := t.Store.CreateApproval(ctx, newApproval(&call, tr, fp))
		if err != nil {
			return Result{Decision: warden.FailClosed(err)}, err
		}
		res.Approval = &a
		res.Notice, res.NoticeErr = t.announce(ctx, a, "")
	}
	if res.Approval.Status == warden.ApprovalPending {
		res.Decision = waiting(res.Decision, res.Approval, life, "")
	}
	return res, nil
}
