package serve

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/warden-run/warden"
)

// hub fans the service's live events out to the server-sent event streams.
type hub struct {
	mu   sync.Mutex
	subs map[chan string]struct{}
}

func newHub() *hub { return &hub{subs: map[chan string]struct{}{}} }

func (h *hub) subscribe() chan string {
	c := make(chan string, 16)
	h.mu.Lock()
	h.subs[c] = struct{}{}
	h.mu.Unlock()
	return c
}

func (h *hub) unsubscribe(c chan string) {
	h.mu.Lock()
	delete(h.subs, c)
	h.mu.Unlock()
}

// publish sends an event name to every stream; a stream that lags drops
// it (every event means "look again", so the next one covers it).
func (h *hub) publish(event string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs {
		select {
		case c <- event:
		default:
		}
	}
}

// watch looks at the store for changes made anywhere (this replica,
// another replica on the same database, a local hook or `warden approvals`
// on the same store) and publishes them: "approvals" when the pending
// approvals change, "audit" when records were appended, "grants" when the
// grants in force change.
func (s *Server) watch(ctx context.Context) {
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	var lastApprovals, lastGrants string
	var lastAudit int64 = -1
	for {
		if sig, n, err := s.approvalsSig(ctx); err == nil {
			s.m.pending.Set(float64(n))
			if sig != lastApprovals {
				lastApprovals = sig
				s.hub.publish("approvals")
			}
		} else if ctx.Err() == nil {
			s.storeError(err)
		}
		if recs, err := s.store.Audit(ctx, warden.AuditFilter{Limit: 1}); err == nil {
			var id int64
			if len(recs) > 0 {
				id = recs[0].ID
			}
			if id != lastAudit {
				if lastAudit >= 0 {
					s.hub.publish("audit")
				}
				lastAudit = id
			}
		} else if ctx.Err() == nil {
			s.storeError(err)
		}
		if gs, err := s.store.Grants(ctx, warden.GrantFilter{}); err == nil {
			var b strings.Builder
			for _, g := range gs {
				fmt.Fprintf(&b, "%s:%d,", g.ID, g.UsesLeft)
			}
			if sig := b.String(); sig != lastGrants {
				if lastGrants != "" || sig != "" {
					s.hub.publish("grants")
				}
				lastGrants = sig
			}
		} else if ctx.Err() == nil {
			s.storeError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *Server) approvalsSig(ctx context.Context) (string, int, error) {
	list, err := s.store.Approvals(ctx, warden.ApprovalFilter{Status: warden.ApprovalPending})
	if err != nil {
		return "", 0, err
	}
	var b strings.Builder
	for _, a := range list {
		b.WriteString(a.ID)
		b.WriteByte(',')
	}
	return b.String(), len(list), nil
}

// storeError counts and logs a store failure.
func (s *Server) storeError(err error) {
	s.m.storeErrors.Inc()
	s.log.Printf("store: %v", err)
}

// events is the server-sent event stream: one "hello" at once, then the
// name of each kind of change (approvals, audit, grants) as it happens,
// and a comment every 15 seconds to keep proxies from closing it.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		httpError(w, http.StatusInternalServerError, "this connection cannot stream events")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	c := s.hub.subscribe()
	defer s.hub.unsubscribe(c)
	fmt.Fprint(w, "retry: 2000\nevent: hello\ndata: {}\n\n")
	fl.Flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		case ev := <-c:
			fmt.Fprintf(w, "event: %s\ndata: {}\n\n", ev)
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		}
		fl.Flush()
	}
}
