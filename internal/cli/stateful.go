package cli

import (
	"context"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/session"
)

func init() {
	statefulDecider = openStateful
}

// openStateful is check's session layer: calls are decided with their
// session's state from the store (first tool, depth, role, intent, grants),
// an ask is queued as an approval (warden check has no prompt of its own)
// and waited for up to wait, and every decision is audited. A call without
// a session gets the --session one.
func openStateful(ctx context.Context, env *Env, eng *engine.Engine, storeURL, sess string, wait time.Duration) (func(context.Context, warden.ToolCall) (warden.Decision, error), func() error, error) {
	st, err := openStore(ctx, eng.Policy().File, storeURL)
	if err != nil {
		return nil, nil, err
	}
	tr := session.New(eng, st)
	decide := func(ctx context.Context, call warden.ToolCall) (warden.Decision, error) {
		if call.Session == "" {
			call.Session = sess
		}
		res, err := tr.Decide(ctx, call, session.Options{Wait: wait})
		return res.Decision, err
	}
	return decide, st.Close, nil
}
