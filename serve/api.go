package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/hook/handler"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/internal/reqbody"
	"github.com/warden-run/warden/internal/sqlstore"
	"github.com/warden-run/warden/mcpproxy"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/remote"
	"github.com/warden-run/warden/serve/web"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/wire"
	"github.com/warden-run/warden/workspace"
)

// hookDeadline bounds a remote hook event beyond its own flags.
const hookDeadline = hook.Deadline

// MaxWait bounds how long one decide or hook request may wait for a human.
const MaxWait = 30 * time.Minute

// Handler is the service's HTTP API, its page and /metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	agent := func(h http.HandlerFunc) http.HandlerFunc { return s.auth(h, KindAgent) }
	person := func(h http.HandlerFunc) http.HandlerFunc { return s.auth(h, KindPerson) }

	mux.HandleFunc("GET /healthz", s.health)
	mux.Handle("GET /metrics", s.auth(s.m.handler().ServeHTTP))
	mux.HandleFunc("GET /v1/whoami", s.whoamiOrNobody)

	mux.HandleFunc("POST /v1/decide", agent(s.decide))
	mux.HandleFunc("POST /v1/hook", agent(s.hook))
	mux.HandleFunc("POST /v1/hidden", agent(s.hidden))

	mux.HandleFunc("GET /v1/events", person(s.events))
	mux.HandleFunc("GET /v1/approvals", person(s.approvals))
	mux.HandleFunc("GET /v1/approvals/{id}", person(s.approval))
	mux.HandleFunc("POST /v1/approvals/{id}/approve", person(s.approve))
	mux.HandleFunc("POST /v1/approvals/{id}/reject", person(s.reject))
	mux.HandleFunc("GET /v1/grants", person(s.grants))
	mux.HandleFunc("POST /v1/grants", person(s.addGrant))
	mux.HandleFunc("POST /v1/grants/{id}/revoke", person(s.revokeGrant))
	mux.HandleFunc("GET /v1/halts", person(s.halts))
	mux.HandleFunc("POST /v1/halts", person(s.halt))
	mux.HandleFunc("POST /v1/halts/resume", person(s.resume))
	mux.HandleFunc("GET /v1/audit", person(s.audit))
	mux.HandleFunc("GET /v1/audit/export", person(s.exportAudit))
	mux.HandleFunc("GET /v1/sessions", person(s.sessions))
	mux.HandleFunc("GET /v1/sessions/{id...}", person(s.session))
	mux.HandleFunc("GET /v1/state", person(s.state))
	mux.HandleFunc("POST /v1/policy/lint", person(s.lint))
	mux.HandleFunc("POST /v1/policy/explain", person(s.explain))
	mux.HandleFunc("POST /v1/policy/replay", person(s.replayAudit))

	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.auth(s.logout))
	mux.Handle("GET /", web.Handler())
	return s.limits(mux)
}

// limits caps every request body, in size and in the time it may take to
// arrive (Config.BodyTimeout), and sets the headers every answer has.
func (s *Server) limits(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			// The connection's read deadline holds until the body is read
			// to its end, then is lifted: a request that then waits (for a
			// human's answer) must not be ended by it.
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, late: s.m.refused.WithLabelValues("body_timeout").Inc}
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the connection's read deadline once the body is read
// to its end.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	late func() // counts a body that missed its deadline
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case b.done:
	case err == io.EOF:
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	case bodyTimedOut(err):
		b.done = true
		b.late()
	}
	return n, err
}

// bodyTimedOut reports whether a body read failed on its deadline.
func bodyTimedOut(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// httpError answers an error as JSON: {"error": message, "code": CODE}
// (wire.ErrorBody), with the code the status means (statusCode).
func httpError(w http.ResponseWriter, status int, msg string) {
	httpErrorCode(w, status, statusCode(status), msg)
}

// httpErrorCode is httpError with a code of the caller's.
func httpErrorCode(w http.ResponseWriter, status int, code warden.Code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(wire.ErrorBody{Error: msg, Code: string(code)})
}

// statusCode is the code of an error answered with an HTTP status: what
// a client that fails closed on it says (warden.FailClosed).
func statusCode(status int) warden.Code {
	switch status {
	case http.StatusBadRequest, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return warden.CodeBadInput
	case http.StatusUnauthorized, http.StatusForbidden:
		return warden.CodeRefused
	case http.StatusNotFound, http.StatusConflict:
		return ""
	}
	return warden.CodeUnavailable
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}

// readJSON decodes a request body into v, refusing unknown fields. It
// answers the error itself and reports false: 413 for a body over the
// limit, 400 for anything that is not the JSON asked for.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	data, ok := readBody(w, r)
	return ok && decodeJSON(w, data, v)
}

// readBody reads a request body whole. It answers the error itself and
// reports false: 413 for a body over the limit, 408 for one that did not
// arrive in time, 400 for one that cannot be read.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", tooBig.Limit))
			return nil, false
		}
		if bodyTimedOut(err) {
			w.Header().Set("Connection", "close")
			httpError(w, http.StatusRequestTimeout, "the request body did not arrive in time: send the whole body at once")
			return nil, false
		}
		httpError(w, http.StatusBadRequest, "unreadable request body: "+err.Error())
		return nil, false
	}
	return data, true
}

// decodeJSON is readJSON's decoding of a body read whole.
func decodeJSON(w http.ResponseWriter, data []byte, v any) bool {
	if err := reqbody.Strict(data, v); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return false
	}
	return true
}

// readCall decodes the "call" of a request body as warden.ParseToolCall
// does; it answers 400 itself and reports false for a missing or bad one.
func readCall(w http.ResponseWriter, raw json.RawMessage) (warden.ToolCall, bool) {
	call, err := reqbody.Call(raw)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return warden.ToolCall{}, false
	}
	return call, true
}

// storeStatus is the status for a store error: 404 and 409 for the
// record's own state, 500 for a store that failed.
func (s *Server) storeStatus(w http.ResponseWriter, err error) {
	var owner *session.OwnerError
	switch {
	case errors.As(err, &owner):
		httpError(w, http.StatusForbidden, err.Error())
	case errors.Is(err, warden.ErrNotFound):
		httpError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, warden.ErrConflict):
		httpError(w, http.StatusConflict, err.Error())
	default:
		s.storeError(err)
		httpErrorCode(w, http.StatusInternalServerError, warden.CodeStoreUnavailable, err.Error())
	}
}

// health answers whether the service can decide, and nothing else: no
// path, no policy name, no error text (which would name them). The reason
// is in the service's log.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if _, err := s.engine(); err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "the policy does not load: every call is denied until it does (the service's log says why)"})
		return
	}
	writeJSON(w, map[string]any{"ok": true})
}

// whoamiOrNobody is whoami, or {"kind": ""} for a request with no token at
// all (the page before its login: not an error).
func (s *Server) whoamiOrNobody(w http.ResponseWriter, r *http.Request) {
	if tok, _ := token(r); tok == "" && r.Header.Get("Authorization") == "" {
		writeJSON(w, map[string]string{"kind": ""})
		return
	}
	s.auth(s.whoami)(w, r)
}

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	t := who(r.Context())
	out := map[string]string{"name": t.Name, "kind": t.Kind}
	if tok, cookie := token(r); cookie {
		out["csrf"] = s.csrfFor(tok)
	}
	writeJSON(w, out)
}

// DecideRequest is the body of POST /v1/decide (wire.DecideRequest).
type DecideRequest = wire.DecideRequest

// DecideResponse is the answer of POST /v1/decide (remote.DecideResponse,
// which warden's Go client for the service reads).
type DecideResponse = remote.DecideResponse

// requestNonce is the nonce a request carries (wire.NonceHeader), to
// echo in its answer; "" for a client that sends none. A malformed one is
// answered 400 here, and reports false.
func requestNonce(w http.ResponseWriter, r *http.Request) (string, bool) {
	n := r.Header.Get(wire.NonceHeader)
	if n != "" && !wire.ValidNonce(n) {
		httpError(w, http.StatusBadRequest, wire.NonceHeader+": want 1 to 128 letters, digits, '-', '_' or '.'")
		return "", false
	}
	return n, true
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	nonce, ok := requestNonce(w, r)
	if !ok {
		return
	}
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	// One pass over the body; what it does not take is decoded as every
	// other body is, for the same answer in that decoding's words.
	req, call, ok := reqbody.DecodeDecide(data)
	if !ok {
		var err error
		if req, call, err = reqbody.Decide(data); err != nil {
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	var err error
	var wait time.Duration
	if req.Wait != "" {
		if wait, err = time.ParseDuration(req.Wait); err != nil || wait < 0 || wait > MaxWait {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("wait %q: want a duration from 0 to %s, such as 30s", req.Wait, MaxWait))
			return
		}
	}
	if call.Host == "" {
		call.Host = "http"
	}
	// The gate decides, fails closed and records: a policy that does not
	// load, a store that failed, a caller that left or a service that
	// stops while the call waited each give a deny on record (in the
	// call's session only when it is the agent's).
	// The halts and grants the call reads may be the ones an earlier call
	// read, checked where its decision is recorded (sqlstore.CachedReads).
	res, err := s.gate.Decide(sqlstore.CachedReads(r.Context()), call, session.Options{HostPrompts: req.HostPrompts, Wait: wait, CallID: req.CallID, AnswerAt: s.pageURL(r), Agent: who(r.Context()).Name})
	resp := DecideResponse{Decision: res.Decision, Approval: res.Approval, AuditID: res.Audit.ID, Replayed: res.Replayed}
	if err != nil {
		if warden.ErrorCode(err) == warden.CodeStoreUnavailable {
			s.storeError(err)
		}
		resp.Error = err.Error()
	}
	if res.Approval != nil && res.Approval.Status == warden.ApprovalPending {
		s.changed("approvals")
	}
	resp.Nonce = nonce
	writeJSON(w, resp)
}

// hook answers a remote hook event (the body is the warden-hook client's
// request, as it would send it to hookd) exactly as `warden hook` would
// answer it locally, with the service's policy and store: the hook's own
// --policy, --store and --stateless flags are the service's business and
// are ignored.
func (s *Server) hook(w http.ResponseWriter, r *http.Request) {
	nonce, ok := requestNonce(w, r)
	if !ok {
		return
	}
	var req wire.HookRequest
	if !readJSON(w, r, &req) {
		return
	}
	if req.Op != wire.OpHook || len(req.Args) == 0 {
		httpError(w, http.StatusBadRequest, `request body is not a hook event: want {"op":"hook","args":["HOST",...],"stdin":...}`)
		return
	}
	resp := wire.HookResponse{V: wire.Version}
	h, ok := host.Lookup(req.Args[0])
	var f hook.Flags
	event := hook.EventName(req.Stdin)
	switch {
	case !ok:
		resp = reply(handler.Fatal(host.Default, event, fmt.Errorf("warden serve: unknown host %q (want %s)", req.Args[0], host.Want())))
	case f.FlagSet(io.Discard).Parse(req.Args[1:]) != nil:
		resp = reply(handler.Fatal(h, event, fmt.Errorf("warden serve: bad hook command line %q", req.Args[1:])))
	case f.Wait > MaxWait:
		resp = reply(handler.Fatal(h, event, fmt.Errorf("warden serve: --wait %s is over %s", f.Wait, MaxWait)))
	default:
		// The service's policy and store decide, and every event is
		// audited: a remote hook cannot ask for --stateless. Paths are the
		// service's own (a failure the store cannot take is spooled next
		// to the service's SQLite store, never by the caller's folder).
		f.Policy, f.Store, f.Stateless, f.Serve = s.file, s.cfg.Store, false, ""
		rt := &handler.Runtime{Interactive: func(hook.Host) bool { return req.Interactive }, CallID: req.CallID, AnswerAt: s.pageURL(r), Agent: who(r.Context()).Name,
			Engine: func(string, string) (*engine.Engine, error) { return s.engine() },
			Store: func(context.Context, string, string) (warden.Store, func(), error) {
				return s.store, func() {}, nil
			}}
		// An approval this queued shows on the pages with the next look
		// at the store (Server.watch): no notification per hook event.
		resp = reply(handler.Run(r.Context(), rt, h, req.Stdin, f))
	}
	s.m.hooks.WithLabelValues(req.Args[0], strconv.Itoa(resp.Code)).Inc()
	resp.Nonce = nonce
	writeJSON(w, resp)
}

// hidden answers which of the tools an MCP front end must not list for a
// session's role (the tools it may not use at all), as `warden mcp proxy`
// decides it locally (mcpproxy.SessionGate.Hidden).
func (s *Server) hidden(w http.ResponseWriter, r *http.Request) {
	nonce, ok := requestNonce(w, r)
	if !ok {
		return
	}
	var req HiddenRequest
	if !readJSON(w, r, &req) {
		return
	}
	if err := warden.CheckSessionID(req.Session); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	eng, err := s.engine()
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	tr := session.New(eng, s.store)
	tr.Agent = who(r.Context()).Name
	if req.Session != "" {
		// Another agent's session: its role is none of this token's
		// business.
		if sess, err := s.store.Session(r.Context(), req.Session); err == nil && sess.Agent != tr.Agent {
			s.storeStatus(w, &session.OwnerError{Session: req.Session, Agent: tr.Agent})
			return
		} else if err != nil && !errors.Is(err, warden.ErrNotFound) {
			s.storeStatus(w, err)
			return
		}
	}
	g := &mcpproxy.SessionGate{Tracker: tr, Session: req.Session, Role: req.Role, Cwd: req.Cwd}
	m, err := g.Hidden(r.Context(), req.Tools)
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	out := []string{}
	for _, t := range req.Tools {
		if m[t] {
			out = append(out, t)
		}
	}
	writeJSON(w, HiddenResponse{Hidden: out, Nonce: nonce})
}

func reply(r handler.Reply) wire.HookResponse {
	return wire.HookResponse{V: wire.Version, Code: r.Code, Stdout: r.Stdout, Stderr: []byte(r.Stderr)}
}

// withExpiry fills in when each approval's lifetime ends.
func (s *Server) withExpiry(list []warden.Approval) []warden.Approval {
	var life time.Duration
	if eng, err := s.engine(); err == nil {
		life = session.ApprovalLifetime(eng.Policy())
	} else {
		life = session.ApprovalLifetime(nil)
	}
	for i := range list {
		list[i].ExpiresAt = session.ApprovalExpiry(list[i], life)
	}
	return list
}

func (s *Server) approvals(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := warden.ApprovalFilter{Status: q.Get("status"), Session: q.Get("session")}
	if f.Status == "" {
		f.Status = warden.ApprovalPending
	} else if f.Status == "all" {
		f.Status = ""
	}
	list, err := s.store.Approvals(r.Context(), f)
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	if list == nil {
		list = []warden.Approval{}
	}
	writeJSON(w, s.withExpiry(list))
}

// ApprovalDetail is an approval with its session's recent calls.
type ApprovalDetail struct {
	warden.Approval
	History []warden.AuditRecord `json:"history"`
}

func (s *Server) approval(w http.ResponseWriter, r *http.Request) {
	a, err := s.store.Approval(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	out := ApprovalDetail{Approval: s.withExpiry([]warden.Approval{a})[0], History: []warden.AuditRecord{}}
	if a.Session != "" {
		if out.History, err = s.store.Audit(r.Context(), warden.AuditFilter{Session: a.Session, Limit: 10}); err != nil {
			s.storeStatus(w, err)
			return
		}
	}
	writeJSON(w, out)
}

// ApproveRequest is the body of POST /v1/approvals/{id}/approve.
type ApproveRequest struct {
	Scope   string `json:"scope"`
	Pattern string `json:"pattern,omitempty"`
	// Expires ends a session or always grant after this long ("8h", "7d").
	Expires string `json:"expires,omitempty"`
	Uses    int    `json:"uses,omitempty"`
	Message string `json:"message,omitempty"`
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	var req ApproveRequest
	if !readJSON(w, r, &req) {
		return
	}
	a := session.Answer{Scope: req.Scope, Pattern: strings.TrimSpace(req.Pattern), Uses: req.Uses, Message: req.Message, By: who(r.Context()).Name}
	if req.Expires != "" {
		d, err := policy.ParseDuration(req.Expires)
		if err != nil || d <= 0 {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("expires %q: want a positive duration such as 90m, 8h or 7d", req.Expires))
			return
		}
		a.Expires = d
	}
	id := r.PathValue("id")
	if _, err := s.store.Approval(r.Context(), id); err != nil {
		s.storeStatus(w, err)
		return
	}
	ap, err := session.Approve(r.Context(), s.store, id, a, s.store.Now())
	if err != nil {
		if errors.Is(err, warden.ErrConflict) || errors.Is(err, warden.ErrNotFound) {
			s.storeStatus(w, err)
		} else {
			httpError(w, http.StatusBadRequest, err.Error())
		}
		return
	}
	s.m.answered.WithLabelValues(ap.Status, ap.Scope).Inc()
	s.changed("approvals")
	writeJSON(w, ap)
}

// RejectRequest is the body of POST /v1/approvals/{id}/reject.
type RejectRequest struct {
	Message string `json:"message"`
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request) {
	var req RejectRequest
	if !readJSON(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Message) == "" {
		httpError(w, http.StatusBadRequest, "a rejection needs a message for the model: what to do instead")
		return
	}
	ap, err := session.Reject(r.Context(), s.store, r.PathValue("id"), req.Message, who(r.Context()).Name)
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	s.m.answered.WithLabelValues(ap.Status, "").Inc()
	s.changed("approvals")
	writeJSON(w, ap)
}

func (s *Server) grants(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Grants(r.Context(), warden.GrantFilter{All: r.URL.Query().Get("all") == "1", Session: r.URL.Query().Get("session")})
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	if list == nil {
		list = []warden.Grant{}
	}
	for i := range list {
		list[i].Value, list[i].Pattern = warden.RedactString(list[i].Value), warden.RedactString(list[i].Pattern)
	}
	writeJSON(w, list)
}

// GrantRequest is the body of POST /v1/grants: exactly one of Command,
// Path and Pattern.
type GrantRequest struct {
	Tool    string `json:"tool"`
	Role    string `json:"role,omitempty"`
	Session string `json:"session,omitempty"`
	Command string `json:"command,omitempty"`
	Path    string `json:"path,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Expires string `json:"expires,omitempty"`
	Uses    int    `json:"uses,omitempty"`
}

func (s *Server) addGrant(w http.ResponseWriter, r *http.Request) {
	var req GrantRequest
	if !readJSON(w, r, &req) {
		return
	}
	n := 0
	for _, v := range []string{req.Command, req.Path, req.Pattern} {
		if v != "" {
			n++
		}
	}
	switch {
	case req.Tool == "":
		httpError(w, http.StatusBadRequest, "tool: the host's tool name (Bash, Write, run_shell_command, ...) is required")
		return
	case n != 1:
		httpError(w, http.StatusBadRequest, "give exactly one of command, path, pattern")
		return
	case req.Uses < 0:
		httpError(w, http.StatusBadRequest, "uses must not be negative")
		return
	}
	if err := warden.CheckSessionID(req.Session); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	eng, err := s.engine()
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	base := warden.Grant{Tool: req.Tool, Role: req.Role, Session: req.Session, UsesLeft: req.Uses, CreatedBy: who(r.Context()).Name, CreatedAt: s.store.Now()}
	if req.Expires != "" {
		d, err := policy.ParseDuration(req.Expires)
		if err != nil || d <= 0 {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("expires %q: want a positive duration such as 90m, 8h or 7d", req.Expires))
			return
		}
		base.Expires = base.CreatedAt.Add(d)
	}
	list, err := session.NewGrants(eng.Policy(), base, req.Command, req.Path, req.Pattern)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	out := []warden.Grant{}
	for _, g := range list {
		g, err := s.store.AddGrant(r.Context(), g)
		if err != nil {
			s.storeStatus(w, err)
			return
		}
		out = append(out, g)
	}
	s.changed("grants")
	writeJSON(w, out)
}

func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request) {
	if err := s.store.RevokeGrant(r.Context(), r.PathValue("id")); err != nil {
		s.storeStatus(w, err)
		return
	}
	s.changed("grants")
	writeJSON(w, map[string]string{"revoked": r.PathValue("id")})
}

func (s *Server) halts(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Halts(r.Context())
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	writeJSON(w, list)
}

// HaltRequest is the body of POST /v1/halts and /v1/halts/resume: a
// session, or an agent token's name (every call it sends, in any
// session), or neither: the whole project.
type HaltRequest struct {
	Session string `json:"session,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Message string `json:"message,omitempty"`
}

// check answers 400 itself and reports false for a request that names
// both a session and an agent, or a session id that cannot be one.
func (req HaltRequest) check(w http.ResponseWriter) bool {
	if req.Session != "" && req.Agent != "" {
		httpError(w, http.StatusBadRequest, "give a session or an agent, not both")
		return false
	}
	if err := warden.CheckSessionID(req.Session); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return false
	}
	return true
}

func (s *Server) halt(w http.ResponseWriter, r *http.Request) {
	var req HaltRequest
	if !readJSON(w, r, &req) || !req.check(w) {
		return
	}
	h, err := s.store.SetHalt(r.Context(), warden.Halt{Session: req.Session, Agent: req.Agent, Message: req.Message, By: who(r.Context()).Name})
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	writeJSON(w, h)
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	var req HaltRequest
	if !readJSON(w, r, &req) || !req.check(w) {
		return
	}
	if req.Agent != "" {
		if err := s.store.ClearAgentHalt(r.Context(), req.Agent); err != nil {
			s.storeStatus(w, err)
			return
		}
		writeJSON(w, map[string]string{"resumed_agent": req.Agent})
		return
	}
	if err := s.store.ClearHalt(r.Context(), req.Session); err != nil {
		s.storeStatus(w, err)
		return
	}
	writeJSON(w, map[string]string{"resumed": req.Session})
}

// auditFilter reads the audit filters of a query: session, agent,
// decision, tool, rule, since and until (RFC 3339 or a duration back from
// now: "1h"), limit.
func auditFilter(r *http.Request, defLimit int) (warden.AuditFilter, error) {
	q := r.URL.Query()
	f := warden.AuditFilter{Session: q.Get("session"), Agent: q.Get("agent"), Tool: q.Get("tool"), Rule: q.Get("rule"),
		Decision: warden.Effect(q.Get("decision")), Limit: defLimit}
	switch f.Decision {
	case "", warden.Allow, warden.Deny, warden.Ask:
	default:
		return f, fmt.Errorf("decision %q: want allow, deny or ask", f.Decision)
	}
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		if d, err := policy.ParseDuration(v); err == nil {
			*p.t = time.Now().Add(-d)
		} else if t, err := time.Parse(time.RFC3339, v); err == nil {
			*p.t = t
		} else {
			return f, fmt.Errorf("%s %q: want a time (RFC 3339) or a duration back from now (1h, 7d)", p.name, v)
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, fmt.Errorf("limit %q: want a number", v)
		}
		f.Limit = n
	}
	return f, nil
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	f, err := auditFilter(r, 200)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	list, err := s.store.Audit(r.Context(), f)
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	if list == nil {
		list = []warden.AuditRecord{}
	}
	writeJSON(w, list)
}

// exportAudit writes the records the filters select as JSON lines, oldest
// first (no limit unless one is given).
func (s *Server) exportAudit(w http.ResponseWriter, r *http.Request) {
	f, err := auditFilter(r, 0)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	list, err := s.store.Audit(r.Context(), f)
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="warden-audit.jsonl"`)
	enc := json.NewEncoder(w)
	for _, rec := range list {
		if err := enc.Encode(rec); err != nil {
			return
		}
	}
}

func (s *Server) sessions(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Sessions(r.Context(), warden.SessionFilter{Status: r.URL.Query().Get("status"), Limit: 200})
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	if list == nil {
		list = []warden.Session{}
	}
	writeJSON(w, list)
}

// SessionDetail is a session with its recent calls and its halt.
type SessionDetail struct {
	Session warden.Session       `json:"session"`
	Recent  []warden.AuditRecord `json:"recent"`
	Halt    *warden.Halt         `json:"halt,omitempty"`
}

func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	sess, err := s.store.Session(r.Context(), id)
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	out := SessionDetail{Session: sess}
	if out.Recent, err = s.store.Audit(r.Context(), warden.AuditFilter{Session: id, Limit: 20}); err != nil {
		s.storeStatus(w, err)
		return
	}
	if h, ok, err := s.store.Halted(r.Context(), id); err != nil {
		s.storeStatus(w, err)
		return
	} else if ok {
		out.Halt = &h
	}
	if out.Halt == nil || out.Halt.Session == "" {
		// The agent's halt is narrower than the project's.
		if h, ok, err := s.store.AgentHalted(r.Context(), sess.Agent); err != nil {
			s.storeStatus(w, err)
			return
		} else if ok {
			out.Halt = &h
		}
	}
	writeJSON(w, out)
}

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	st, err := s.store.State(r.Context())
	if err != nil {
		s.storeStatus(w, err)
		return
	}
	writeJSON(w, st)
}

// PolicyRequest is the body of POST /v1/policy/lint and explain: Policy is
// the text of a policy to try (lint needs it; explain without it uses the
// live policy). Explain also takes a call, and a session to explain it in
// (with the session's role, first tool and grants from the store).
type PolicyRequest struct {
	Policy  string          `json:"policy,omitempty"`
	Call    json.RawMessage `json:"call,omitempty"`
	Session string          `json:"session,omitempty"`
}

// Finding is one lint finding.
type Finding struct {
	Line     int    `json:"line,omitempty"`
	Col      int    `json:"col,omitempty"`
	Severity string `json:"severity"`
	Field    string `json:"field,omitempty"`
	Message  string `json:"message"`
	Text     string `json:"text"`
}

// parsePolicy parses a posted policy as if it were the live policy file
// (same workspace root and protected files). The engine is nil when it has
// errors.
func (s *Server) parsePolicy(text string) (*engine.Engine, []Finding) {
	p, findings := policy.Parse(s.file, []byte(text))
	out := []Finding{}
	bad := false
	for _, f := range findings {
		out = append(out, Finding{Line: f.Pos.Line, Col: f.Pos.Col, Severity: f.Severity, Field: f.Field, Message: f.Message, Text: f.String()})
		bad = bad || f.Severity == policy.SevError
	}
	if bad {
		return nil, out
	}
	eng, err := engine.Compile(p, workspace.Live())
	if err != nil {
		out = append(out, Finding{Severity: policy.SevError, Message: err.Error(), Text: "error: " + err.Error()})
		return nil, out
	}
	return eng, out
}

func (s *Server) lint(w http.ResponseWriter, r *http.Request) {
	var req PolicyRequest
	if !readJSON(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Policy) == "" {
		httpError(w, http.StatusBadRequest, `request body is not the JSON expected: no "policy" text`)
		return
	}
	eng, findings := s.parsePolicy(req.Policy)
	writeJSON(w, map[string]any{"ok": eng != nil, "findings": findings})
}

// ExplainResponse is the answer of POST /v1/policy/explain.
type ExplainResponse struct {
	Decision warden.Decision `json:"decision"`
	Tool     string          `json:"tool"`
	Kind     string          `json:"kind"`
	Parts    []engine.Part   `json:"parts"`
	Checks   []engine.Check  `json:"checks"`
	Grants   []string        `json:"grants,omitempty"`
	Session  *warden.Session `json:"session,omitempty"`
	// Policy says which policy decided: "live" or "posted".
	Policy string `json:"policy"`
}

func (s *Server) explain(w http.ResponseWriter, r *http.Request) {
	var req PolicyRequest
	if !readJSON(w, r, &req) {
		return
	}
	call, ok := readCall(w, req.Call)
	if !ok {
		return
	}
	var err error
	which := "live"
	var eng *engine.Engine
	if req.Policy != "" {
		which = "posted"
		var findings []Finding
		if eng, findings = s.parsePolicy(req.Policy); eng == nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			json.NewEncoder(w).Encode(map[string]any{"error": "the posted policy has errors", "findings": findings})
			return
		}
	} else if eng, err = s.engine(); err != nil {
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	out := ExplainResponse{Policy: which}
	var tr *engine.Trace
	if err := warden.CheckSessionID(req.Session); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	if req.Session != "" {
		call.Session = req.Session
		var sess warden.Session
		// Explain changes nothing in the store.
		if tr, _, sess, err = session.New(eng, s.store).Explain(r.Context(), call); err != nil {
			s.storeStatus(w, err)
			return
		}
		out.Session = &sess
	} else {
		tr = eng.Explain(call, nil)
	}
	out.Decision, out.Tool, out.Kind, out.Parts, out.Checks, out.Grants = tr.Decision, tr.Tool, tr.Kind, tr.Parts, tr.Checks, tr.Grants
	writeJSON(w, out)
}
