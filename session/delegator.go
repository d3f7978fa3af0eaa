package session

import (
	"context"
	"strings"

	"github.com/warden-run/warden"
)

// delegatorScan bounds the sessions and records Delegator reads.
const (
	delegatorSessions = 200
	delegatorRecords  = 20
)

// Delegator returns the session that started a subagent the host reports
// in the session root without saying which of root's agents started it.
// Claude Code's SubagentStart names the new agent and the main session
// only, whether the main agent or one of its subagents (root/AGENT, as the
// hooks name them) made the delegate call; the subagent's depth, and the
// level of governance text it reads, depend on which.
//
// The delegator is the deepest active session of root's tree with an open
// delegate call: one that was allowed and whose outcome the host has not
// reported (its subagent still runs), beyond the calls whose subagents
// run already. When two such sessions are as deep, the one seen most
// recently wins. Without one (no active subagent, or none of them delegating),
// root. An ambiguous case, a subagent of root's main agent started while
// a subagent's own delegate call still waits for its subagent's start,
// errs deeper: the new subagent then reads the deeper level and meets its
// depth limit sooner, never the other way around.
func (t *Tracker) Delegator(ctx context.Context, root string) (string, error) {
	if root == "" {
		return root, nil
	}
	active, err := t.Store.Sessions(ctx, warden.SessionFilter{Status: warden.SessionActive, Limit: delegatorSessions})
	if err != nil {
		return "", err
	}
	var tree []warden.Session
	children := map[string]int{}
	for _, s := range active {
		if s.ID == root || strings.HasPrefix(s.ID, root+"/") {
			tree = append(tree, s)
			if s.Parent != "" {
				children[s.Parent]++
			}
		}
	}
	best, bestDepth := root, -1
	for _, s := range tree {
		if s.ID == root || s.Depth <= bestDepth {
			continue
		}
		open, err := t.openDelegations(ctx, s.ID)
		if err != nil {
			return "", err
		}
		if open > children[s.ID] {
			best, bestDepth = s.ID, s.Depth
		}
	}
	return best, nil
}

// openDelegations counts the session's latest delegate calls that were
// allowed and whose outcome no host event reported yet.
func (t *Tracker) openDelegations(ctx context.Context, sid string) (int, error) {
	recs, err := t.Store.Recent(ctx, sid, delegatorRecords)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range recs {
		if r.Decision == warden.Allow && r.Outcome == "" && t.policy().KindOf(r.Tool) == "delegate" {
			n++
		}
	}
	return n, nil
}
