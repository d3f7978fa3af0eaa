package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mvdan.cc/sh/v3/shell"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/mcpproxy"
	"github.com/warden-run/warden/mcpserve"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/remote"
	"github.com/warden-run/warden/session"
)

// upstreamEnv names the variable that can carry the upstream command line
// (for clients that swallow `--`, such as the MCP inspector's CLI).
const upstreamEnv = "WARDEN_MCP_UPSTREAM"

func runMCP(ctx context.Context, env *Env) int {
	sub, args, code := subcommand(env, "mcp", "serve [--http ADDR] | proxy [flags] -- CMD ARGS...\n\nRun `warden mcp serve -h` or `warden mcp proxy -h` for their flags.")
	if code >= 0 {
		return code
	}
	switch sub {
	case "proxy":
		return runMCPProxy(ctx, env, args)
	case "serve":
		return runMCPServe(ctx, env, args)
	}
	fmt.Fprintf(env.Stderr, "warden mcp: unknown subcommand %q (want serve or proxy)\n", sub)
	return ExitError
}

func runMCPProxy(ctx context.Context, env *Env, args []string) int {
	fs := flag.NewFlagSet("mcp proxy", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	sf := addStoreFlags(fs)
	name := fs.String("name", "", "the server's `name` in tool names, mcp__NAME__TOOL: the name the client knows it by (default: derived from the command or URL)")
	role := fs.String("role", "", "`role` of the agent behind the client (a stored session keeps its own)")
	sid := fs.String("session", "", "session `ID` the calls belong to (default: $WARDEN_SESSION, else a new one per run)")
	upURL := fs.String("upstream", "", "the upstream server's streamable HTTP `URL`, instead of a command")
	var headers headerFlag
	fs.Var(&headers, "header", "with --upstream: an HTTP `header` to send, \"Name: value\" (repeatable), such as an API token")
	serveURL := fs.String("serve", "", "let the warden service at this `URL` (warden serve) decide and audit the calls (also $WARDEN_SERVE_URL; the agent token from $WARDEN_SERVE_TOKEN)")
	upCmd := fs.String("upstream-cmd", "", "the upstream server's `command line`, as one string (also $"+upstreamEnv+"), instead of -- CMD ARGS...")
	callTimeout := fs.Duration("call-timeout", mcpproxy.DefaultCallTimeout, "how long to wait for the upstream's answer to a request before answering it with an error and asking the server to cancel it (a progress notification restarts the wait, up to 10 times this); 0 waits for ever")
	noSandbox := fs.Bool("no-sandbox", false, "run the upstream command unconfined even when the policy's sandbox.shell is on or required (recorded in the audit trail)")
	grace := fs.Duration("shutdown-grace", mcpproxy.TerminateAfter, "when the client goes or the proxy is stopped: how long the upstream command gets to exit once its input is closed, and again after SIGTERM, before SIGKILL")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "Usage: warden mcp proxy [flags] -- CMD ARGS...\n"+
			"       warden mcp proxy [flags] --upstream URL\n\n"+
			"Serves MCP on stdin/stdout in front of one MCP server, and decides every\n"+
			"tools/call against the policy (as mcp__NAME__TOOL) with the session, approvals\n"+
			"and audit trail the hooks use. tools/list hides the tools the role may not use.")
		fs.PrintDefaults()
	}
	var argv []string
	for i, a := range args {
		if a == "--" {
			args, argv = args[:i], args[i+1:]
			break
		}
	}
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if *callTimeout < 0 {
		return cmdError(env, "mcp proxy", fmt.Errorf("--call-timeout %v: give a duration such as 2m, or 0 to wait for ever", *callTimeout))
	}
	if *grace <= 0 {
		return cmdError(env, "mcp proxy", fmt.Errorf("--shutdown-grace %v: give a positive duration such as 5s", *grace))
	}
	if fs.NArg() > 0 {
		if len(argv) > 0 {
			return cmdError(env, "mcp proxy", fmt.Errorf("unexpected arguments %q before --", fs.Args()))
		}
		argv = fs.Args()
	}
	cmdline := *upCmd
	if cmdline == "" && len(argv) == 0 && *upURL == "" {
		cmdline = os.Getenv(upstreamEnv)
	}
	if cmdline != "" {
		if len(argv) > 0 {
			return cmdError(env, "mcp proxy", errors.New("give the upstream command once: after -- or in --upstream-cmd"))
		}
		fields, err := shell.Fields(cmdline, nil)
		if err != nil {
			return cmdError(env, "mcp proxy", fmt.Errorf("--upstream-cmd %q: %v", cmdline, err))
		}
		argv = fields
	}
	switch {
	case len(argv) == 0 && *upURL == "":
		fs.Usage()
		return cmdError(env, "mcp proxy", errors.New("no upstream server: give -- CMD ARGS..., --upstream-cmd or --upstream URL"))
	case len(argv) > 0 && *upURL != "":
		return cmdError(env, "mcp proxy", errors.New("give either an upstream command or --upstream URL, not both"))
	case len(headers) > 0 && *upURL == "":
		return cmdError(env, "mcp proxy", errors.New("--header needs --upstream URL"))
	}
	if *name == "" {
		if *upURL != "" {
			*name = mcpproxy.ServerNameURL(*upURL)
		} else {
			*name = mcpproxy.ServerName(argv)
		}
		if *name == "" {
			return cmdError(env, "mcp proxy", errors.New("cannot derive the server's name from its command; give --name"))
		}
	}
	if !validServerName(*name) {
		return cmdError(env, "mcp proxy", fmt.Errorf("--name %q: use letters, digits, - and _ (and no __), as in the client's config", *name))
	}
	if *serveURL == "" {
		*serveURL = os.Getenv(hookd.ServeURLEnv)
	}
	var gate mcpproxy.Gate
	var local *mcpproxy.SessionGate
	var store warden.Store // the local store, for the record of the server's start
	own := false
	if *serveURL != "" {
		// The team's service decides and audits: no local policy or store.
		remote, err := remoteMCPGate(*serveURL, *sid, *role, *name)
		if err != nil {
			return cmdError(env, "mcp proxy", err)
		}
		gate = remote
	} else {
		g, st, o, err := mcpGate(ctx, sf, *sid, *role, *name)
		if err != nil {
			return cmdError(env, "mcp proxy", err)
		}
		defer st.Close()
		*sid, gate, local, own, store = g.Session, g, g, o, st
	}

	var upConn mcp.Connection
	var err error
	if *upURL != "" {
		upConn, err = mcpproxy.HTTPUpstream(*upURL, http.Header(headers)).Connect(ctx)
	} else {
		var cmd *exec.Cmd // confined by the policy's sandbox (mcpproxy.Upstream)
		up := mcpproxy.Upstream{Argv: argv, Name: *name, Session: *sid, Role: *role, PolicyFile: *sf.policy, Store: store,
			NoSandbox: *noSandbox, Exe: sandboxExe(), Log: env.Stderr}
		if cmd, err = up.Command(ctx); err == nil {
			cmd.Stderr = env.Stderr
			upConn, err = mcpproxy.StartServer(cmd, *grace)
		}
	}
	if err != nil {
		return cmdError(env, "mcp proxy", fmt.Errorf("start the upstream server: %w", err))
	}
	// A client gone while the proxy writes to it is a write error (EPIPE),
	// not SIGPIPE's end of the process, which would leave the upstream
	// server running; the proxy then ends the server and exits.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	clientConn := mcpproxy.NewLineConn(env.Stdin, env.Stdout, nil)
	clientConn.Answer = true // a line that is no message is answered, not the end
	clientConn.Log = env.Stderr
	p := &mcpproxy.Proxy{Name: *name, Gate: gate, Log: env.Stderr, CallTimeout: *callTimeout}
	err = p.Run(ctx, clientConn, upConn)
	if own {
		endOwnSession(ctx, env, "mcp proxy", local)
	}
	if err != nil {
		return cmdError(env, "mcp proxy", err)
	}
	return ExitOK
}

// remoteMCPGate is the gate of `warden mcp proxy --serve URL`: the
// session sid (else $WARDEN_SESSION, else a new one of this run) decided
// by the service with the agent token.
func remoteMCPGate(url, sid, role, name string) (*remote.MCPGate, error) {
	token, err := hookd.ServeToken()
	if err != nil {
		return nil, err
	}
	if sid == "" {
		sid = os.Getenv("WARDEN_SESSION")
	}
	if sid == "" {
		sid = "mcp-" + name + "-" + randomHex(6)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return &remote.MCPGate{Client: &remote.Client{URL: url, Token: token}, Session: sid, Role: role, Cwd: wd}, nil
}

func runMCPServe(ctx context.Context, env *Env, args []string) int {
	fs := flag.NewFlagSet("mcp serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	sf := addStoreFlags(fs)
	role := fs.String("role", "", "`role` of the agent behind the client (a stored session keeps its own)")
	sid := fs.String("session", "", "session `ID` the calls belong to (default: $WARDEN_SESSION, else a new one per run; over HTTP, one per MCP session under this prefix)")
	addr := fs.String("http", "", "serve streamable HTTP on `ADDR` (host:port or :port, 127.0.0.1 when no host is given) at /mcp, instead of stdio")
	remote := fs.Bool("allow-remote", false, "with --http: allow an address other than the loopback (anyone who reaches it can use the tools)")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "Usage: warden mcp serve [flags]\n"+
			"       warden mcp serve --http 127.0.0.1:8765 [flags]\n\n"+
			"Serves warden's own MCP tools on stdin/stdout (or streamable HTTP):\n"+
			"select_active_intent, check_call, request_approval, list_anchors and add_anchor.\n"+
			"Each call of them is decided and audited as mcp__warden__TOOL.")
		fs.PrintDefaults()
	}
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		return cmdError(env, "mcp serve", fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	listen := ""
	if *addr != "" {
		host, port, err := net.SplitHostPort(*addr)
		if err != nil {
			return cmdError(env, "mcp serve", fmt.Errorf("--http %q: want host:port or :port", *addr))
		}
		if host == "" {
			host = "127.0.0.1"
		}
		if ip := net.ParseIP(host); !*remote && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return cmdError(env, "mcp serve", fmt.Errorf("--http %q is not a loopback address: anyone who reaches it could use warden's tools; give --allow-remote to serve it anyway", *addr))
		}
		listen = net.JoinHostPort(host, port)
	} else if *remote {
		return cmdError(env, "mcp serve", errors.New("--allow-remote needs --http ADDR"))
	}
	gate, st, own, err := mcpGate(ctx, sf, *sid, *role, mcpserve.Name)
	if err != nil {
		return cmdError(env, "mcp serve", err)
	}
	defer st.Close()
	srv := &mcpserve.Server{Gate: gate, Version: versionLine()}
	if listen == "" {
		conn := mcpproxy.NewLineConn(env.Stdin, env.Stdout, nil)
		conn.Answer = true // a line that is no message is answered, not the end
		err = srv.New().Run(ctx, conn)
		if own {
			endOwnSession(ctx, env, "mcp serve", gate)
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			return cmdError(env, "mcp serve", err)
		}
		return ExitOK
	}
	srv.PerClient = true
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return cmdError(env, "mcp serve", err)
	}
	m := srv.New()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m }, nil))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(env.Stderr, "warden mcp serve: listening on http://%s/mcp\n", ln.Addr())
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return cmdError(env, "mcp serve", err)
	}
	return ExitOK
}

// mcpGate opens what an MCP front end decides with: the policy, compiled
// again when it (or its intents file) changes while the front end runs,
// the store, and the session the calls belong to (sid, else
// $WARDEN_SESSION, else a new one of this run, own). A policy that does not
// load, or a store that does not open, is an error before any call; a
// policy that stops loading later denies.
func mcpGate(ctx context.Context, sf storeFlags, sid, role, name string) (gate *mcpproxy.SessionGate, st warden.Store, own bool, err error) {
	if sid == "" {
		sid = os.Getenv("WARDEN_SESSION")
	}
	own = sid == "" // a session of this run alone, ended with it
	if own {
		sid = "mcp-" + name + "-" + randomHex(6)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, nil, false, err
	}
	file := *sf.policy
	if file == "" {
		if file, err = policy.Find(wd); err != nil {
			return nil, nil, false, err
		}
	}
	if file, err = filepath.Abs(file); err != nil {
		return nil, nil, false, err
	}
	pol := &mcpproxy.Policy{File: file}
	eng, err := pol.Compiled()
	if err != nil {
		return nil, nil, false, err
	}
	st, err = openStore(ctx, eng.Policy().File, *sf.store)
	if err != nil {
		return nil, nil, false, fmt.Errorf("open the warden store: %w", err)
	}
	return &mcpproxy.SessionGate{Tracker: session.New(eng, st), Engine: pol.Engine, Session: sid, Role: role, Cwd: wd}, st, own, nil
}

// endOwnSession ends the session a front end made for its run (a session
// that made no call was never stored).
func endOwnSession(ctx context.Context, env *Env, what string, gate *mcpproxy.SessionGate) {
	if _, err := gate.Tracker.End(context.WithoutCancel(ctx), gate.Session, session.Ended); err != nil && !errors.Is(err, warden.ErrNotFound) {
		fmt.Fprintf(env.Stderr, "warden %s: end session %s: %v\n", what, gate.Session, err)
	}
}

// validServerName reports whether name can stand in mcp__NAME__TOOL.
func validServerName(name string) bool {
	if name == "" || strings.Contains(name, "__") {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// headerFlag collects --header "Name: value" flags.
type headerFlag http.Header

func (h *headerFlag) String() string { return "" }

func (h *headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	if name = strings.TrimSpace(name); !ok || name == "" || strings.ContainsAny(name, " \t") {
		return fmt.Errorf("want \"Name: value\", got %q", warden.RedactString(s))
	}
	if *h == nil {
		*h = headerFlag{}
	}
	http.Header(*h).Add(name, strings.TrimSpace(value))
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
