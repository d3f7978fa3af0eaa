// Package serve is `warden serve`: one decision service for a team, over
// HTTP and JSON. Agents (remote hooks, the Go middleware, any program)
// send their calls and session events to it with an agent token; people
// answer approvals, manage grants, read the audit trail and sessions and
// try policies with a person token, from the approvals web page it serves
// (package serve/web) or any HTTP client. Every replica on one PostgreSQL
// database behaves as one: approvals, grants, halts and the audit trail
// live in the store, and each replica watches it for changes.
//
// The service decides with one policy file through package gate, as every
// front end does: loaded the way the hooks load it (whole files only,
// policy.ReadStable) and loaded again when it changes (gate.Source); a
// policy that stops loading fails closed: every call is denied with the
// reason, and recorded, until it is fixed. Shutdown finishes every decision
// under way, so that no acknowledged decision is lost.
//
// # Endpoints
//
// Bodies are JSON (unknown fields refused, at most Config.MaxBody bytes,
// arriving within Config.BodyTimeout); errors are {"error": "...",
// "code": "..."} (wire.ErrorBody: the code a client fails closed with) with
// 400 (bad body, a session id with white space at an end or a control
// character), 401 (no, unknown or expired token: the body says which),
// 403 (wrong kind of token, cross-site request, missing CSRF token), 404,
// 408 (the body did not arrive in time; the connection is closed), 409
// (answered already), 413 (body too large), 429 (the token has
// Config.MaxPerToken requests under way).
//
// # Agents apart
//
// A session belongs to the agent token that opened it (warden.Session.
// Agent): another token's call in it, or in a subagent session of it
// (S/AGENT), is denied SERVICE_REFUSED and recorded in no session; its
// grants are then out of that token's reach. An ask's approval is the
// token's own: another token's identical call, also from a new session,
// neither shares a pending approval nor takes an answered one. A halt can
// name an agent token (HaltRequest.Agent): its every call is denied
// HALTED, in any session. A call_id replays only its own call (see
// DecideRequest.CallID), through /v1/decide and /v1/hook alike.
//
// An agent's request may carry a nonce in the header X-Warden-Nonce (1 to
// 128 letters, digits, '-', '_', '.'); the answer of /v1/decide, /v1/hook
// and /v1/hidden echoes it as "nonce", and warden's own clients take no
// answer that does not echo theirs.
//
//	agent token:
//	POST /v1/decide                  DecideRequest -> DecideResponse
//	POST /v1/hook                    a hook event as warden-hook sends it -> the hook's answer
//	POST /v1/hidden                  HiddenRequest -> the tools a role may not see (warden mcp proxy)
//	person token:
//	GET  /v1/events                  server-sent events: approvals, audit, grants
//	GET  /v1/approvals[?status=]     pending (or all) approvals
//	GET  /v1/approvals/{id}          one, with its session's recent calls
//	POST /v1/approvals/{id}/approve  ApproveRequest (scope, pattern, expires, uses)
//	POST /v1/approvals/{id}/reject   RejectRequest (message)
//	GET  /v1/grants, POST /v1/grants (GrantRequest), POST /v1/grants/{id}/revoke
//	GET  /v1/halts, POST /v1/halts, POST /v1/halts/resume (HaltRequest)
//	GET  /v1/audit[?session=&agent=&decision=&tool=&rule=&since=&until=&limit=]
//	GET  /v1/audit/export[?same filters]   JSON lines
//	GET  /v1/sessions, /v1/sessions/{id}, /v1/state
//	POST /v1/policy/lint, /v1/policy/explain   PolicyRequest (what-if)
//	any token: GET /metrics (Prometheus), GET /v1/whoami
//	no token: GET /healthz ({"ok":true}, or 503: nothing else), the page (GET /), POST /login
//
// The page's requests carry the person token in an HttpOnly,
// SameSite=Strict cookie; every POST with it must come from this origin
// and carry the session's CSRF token (header X-Warden-CSRF).
package serve

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/client"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/gate"
)

// MaxBody bounds a request body (the default of Config.MaxBody): a tool
// call or hook event is at most warden.MaxInput, and a posted policy far
// less.
const MaxBody = warden.MaxInput + 1<<20

// Config is how a service runs.
type Config struct {
	// Policy is the policy file every call is decided with.
	Policy string
	// Store is the store URL ("": .warden/warden.db next to the policy).
	Store string
	// Tokens is the tokens file ("": DefaultTokensFile).
	Tokens string
	// MaxBody bounds request bodies (0: MaxBody).
	MaxBody int64
	// Poll is how often the service looks at the store for approvals
	// created or answered elsewhere (0: 500ms).
	Poll time.Duration
	// Grace is how long shutdown waits for calls waiting on a human before
	// it answers them deny (0: 10s).
	Grace time.Duration
	// URL is the address people open the page at (https://warden.example/),
	// which the model's instructions for an approval name. Empty: the
	// address the agent's request came to.
	URL string
	// HeaderTimeout bounds how long a request's headers may take to
	// arrive (0: DefaultHeaderTimeout).
	HeaderTimeout time.Duration
	// BodyTimeout bounds how long a request's body may take to arrive,
	// from the end of its headers (0: DefaultBodyTimeout): a client that
	// sends it slower is answered 408 and its connection closed. A
	// request waiting for its answer (a call waiting on a human, the
	// events stream) is not bound by it.
	BodyTimeout time.Duration
	// IdleTimeout bounds how long a kept-alive connection may wait for
	// its next request (0: DefaultIdleTimeout).
	IdleTimeout time.Duration
	// MaxPerToken bounds the requests one token may have under way at
	// once (0: DefaultMaxPerToken; negative: no bound); one more is
	// answered 429.
	MaxPerToken int
	Log         *log.Logger
}

// The defaults of Config's bounds.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 60 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
	DefaultMaxPerToken   = 64
)

// Server is one `warden serve` replica. Make one with New.
type Server struct {
	cfg    Config
	file   string // the policy file, absolute
	store  warden.Store
	tokens *Tokens
	log    *log.Logger
	secret []byte // keys the CSRF tokens of this replica's page sessions
	hub    *hub
	m      *metrics
	// notifyDB tells the other replicas on PostgreSQL about changes.
	notifyDB *sql.DB

	// src is the policy, compiled again as package gate's one reload
	// rule says; gate decides every agent's call with it.
	src  *gate.Source
	gate *gate.Gate

	base   context.Context // cancelled when shutdown's grace ends
	cancel context.CancelFunc
	closed chan struct{} // closed when shutdown starts: SSE streams end

	flightMu sync.Mutex
	inflight map[string]int // requests under way, by token hash
}

// New opens the store and loads the policy. A policy that does not load is
// an error here: the service does not start with one.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Policy == "" {
		return nil, errors.New("no policy file")
	}
	file, err := filepath.Abs(cfg.Policy)
	if err != nil {
		return nil, err
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = MaxBody
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = DefaultHeaderTimeout
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxPerToken == 0 {
		cfg.MaxPerToken = DefaultMaxPerToken
	}
	if cfg.Log == nil {
		cfg.Log = log.New(os.Stderr, "warden serve: ", log.LstdFlags)
	}
	if cfg.Tokens == "" {
		cfg.Tokens = DefaultTokensFile(file)
	}
	s := &Server{cfg: cfg, file: file, tokens: OpenTokens(cfg.Tokens), log: cfg.Log, hub: newHub(), m: newMetrics(),
		closed: make(chan struct{}), inflight: map[string]int{}}
	s.secret = make([]byte, 32)
	if _, err := rand.Read(s.secret); err != nil {
		return nil, err
	}
	if s.src, err = gate.NewSource(file); err != nil {
		return nil, err
	}
	if _, err := s.engine(); err != nil {
		return nil, err
	}
	s.src.Logf = s.log.Printf
	st, err := client.OpenStore(ctx, file, cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("open the store: %w", err)
	}
	s.store = meter(st, s.m)
	s.gate = &gate.Gate{Policy: s.src, Store: s.store}
	if isPostgres(cfg.Store) {
		if s.notifyDB, err = openNotify(cfg.Store); err != nil {
			st.Close()
			return nil, err
		}
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Store is the service's store (for tests and the CLI).
func (s *Server) Store() warden.Store { return s.store }

// StoreName says which store the service uses, with no password: the
// SQLite file, or the PostgreSQL URL redacted.
func (s *Server) StoreName() string {
	if s.cfg.Store == "" {
		return client.DefaultStorePath(s.file)
	}
	return warden.RedactString(s.cfg.Store)
}

// Tokens is the service's tokens file.
func (s *Server) Tokens() *Tokens { return s.tokens }

// engine returns the compiled policy as the policy file is now (package
// gate's one reload rule). A policy that no longer loads is an error (the
// call is denied with it), never the last good one: the file on disk is
// the policy a person reads and means.
func (s *Server) engine() (*engine.Engine, error) { return s.src.Engine() }

// pageURL is the address of the approvals page for the model's
// instructions: Config.URL, else the scheme and host the request came to
// (which reach this service from the agent's machine).
func (s *Server) pageURL(r *http.Request) string {
	if s.cfg.URL != "" {
		return strings.TrimSuffix(s.cfg.URL, "/") + "/"
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/"
}

// csrfFor is the CSRF token of a page session: an HMAC of its cookie's
// token hash under this replica's secret.
func (s *Server) csrfFor(tok string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(hashToken(tok)))
	return hex.EncodeToString(m.Sum(nil))
}

// Serve serves HTTP on ln until ctx ends, then shuts down: it stops taking
// requests, lets every decision under way finish (calls waiting on a human
// get Config.Grace, then are answered deny and recorded), and closes the
// store. tlsCert and tlsKey, when set, serve HTTPS.
func (s *Server) Serve(ctx context.Context, ln net.Listener, tlsCert, tlsKey string) error {
	gcForService()
	// No ReadTimeout: it would also end a request that waits for a human
	// (its connection's read deadline cancels the request). The body has
	// its own deadline (Config.BodyTimeout, see limits).
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: s.cfg.HeaderTimeout, IdleTimeout: s.cfg.IdleTimeout, ErrorLog: s.log,
		BaseContext: func(net.Listener) context.Context { return s.base }}
	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	go s.watch(watchCtx)
	if s.notifyDB != nil {
		go s.listen(watchCtx)
	}
	errc := make(chan error, 1)
	go func() {
		if tlsCert != "" {
			errc <- hs.ServeTLS(ln, tlsCert, tlsKey)
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	s.log.Printf("serving %s (policy %s, store %s)", ln.Addr(), s.file, s.StoreName())
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	close(s.closed)
	// Requests under way finish; calls waiting on a human get the grace
	// period, then their context ends and they are answered deny (and
	// recorded as such) before the response goes out.
	timer := time.AfterFunc(s.cfg.Grace, s.cancel)
	defer timer.Stop()
	sdCtx, cancel := context.WithTimeout(context.Background(), s.cfg.Grace+hookDeadline)
	defer cancel()
	if serr := hs.Shutdown(sdCtx); serr != nil && err == nil {
		err = serr
	}
	stopWatch()
	s.cancel()
	if s.notifyDB != nil {
		s.notifyDB.Close()
	}
	if cerr := s.store.Close(); cerr != nil && err == nil {
		err = cerr
	}
	s.log.Printf("stopped")
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// serviceGC is the garbage collector's target (GOGC) while the service
// runs, unless GOGC is set: a request allocates some 40 KB that is
// garbage once it is answered, and at the default 100 the collector took
// 6% of a request's CPU (10% with its allocation assists) on a heap of a
// few MB; at 400 it runs a quarter as often, the heap staying small.
const serviceGC = 400

var gcOnce sync.Once

// gcForService sets the collector's target for the service (serviceGC),
// once, where GOGC does not set it.
func gcForService() {
	gcOnce.Do(func() {
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(serviceGC)
		}
	})
}

// Close closes the store of a server that never served.
func (s *Server) Close() error {
	s.cancel()
	if s.notifyDB != nil {
		s.notifyDB.Close()
	}
	return s.store.Close()
}
