package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/warden-run/warden/serve"
)

const serveUsage = `[--addr 127.0.0.1:8787] [--policy FILE] [--store URL] [--tokens FILE] [--tls-cert F --tls-key F] [--url URL]
       warden serve token add --kind agent|person NAME | token ls | token revoke NAME

Serves decisions, the hooks' session events, approvals, grants, the audit trail and
the approvals page over HTTP (package serve). Agents use an agent token, people a
person token; tokens are kept hashed in --tokens (default .warden/serve-tokens.json
next to the policy). Several replicas on one PostgreSQL store behave as one.`

func runServe(ctx context.Context, env *Env) int {
	if len(env.Args) > 0 && env.Args[0] == "token" {
		return runServeToken(ctx, env)
	}
	fs := newFlags(env, "serve", serveUsage)
	sf := addStoreFlags(fs)
	addr := fs.String("addr", "127.0.0.1:8787", "`address` to listen on")
	tokens := fs.String("tokens", "", "tokens `file` (default: .warden/serve-tokens.json next to the policy)")
	cert := fs.String("tls-cert", "", "TLS certificate `file` (serve HTTPS)")
	key := fs.String("tls-key", "", "TLS key `file`")
	public := fs.String("url", "", "the `address` people open the page at, named in the model's instructions for an approval (default: the address the agent's request came to)")
	headerTimeout := fs.Duration("header-timeout", serve.DefaultHeaderTimeout, "how long a request's headers may take to arrive")
	bodyTimeout := fs.Duration("body-timeout", serve.DefaultBodyTimeout, "how long a request's body may take to arrive (a slower one is answered 408 and its connection closed)")
	perToken := fs.Int("max-per-token", serve.DefaultMaxPerToken, "requests one token may have under way at once (one more is answered 429; -1: no limit)")
	if code := parseFlags(fs, env.Args); code >= 0 {
		return code
	}
	if (*cert == "") != (*key == "") {
		return cmdError(env, "serve", errors.New("--tls-cert and --tls-key go together"))
	}
	if *headerTimeout <= 0 || *bodyTimeout <= 0 {
		return cmdError(env, "serve", errors.New("--header-timeout and --body-timeout must be positive (30s, 2m)"))
	}
	if *perToken == 0 || *perToken < -1 {
		return cmdError(env, "serve", errors.New("--max-per-token: want a positive number, or -1 for no limit"))
	}
	file := *sf.policy
	if file == "" {
		var err error
		if file, err = findPolicy(); err != nil {
			return cmdError(env, "serve", err)
		}
	}
	s, err := serve.New(ctx, serve.Config{Policy: file, Store: *sf.store, Tokens: *tokens, URL: *public,
		HeaderTimeout: *headerTimeout, BodyTimeout: *bodyTimeout, MaxPerToken: *perToken,
		Log: log.New(env.Stderr, "warden serve: ", log.LstdFlags)})
	if err != nil {
		return cmdError(env, "serve", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		s.Close()
		return cmdError(env, "serve", err)
	}
	scheme := "http"
	if *cert != "" {
		scheme = "https"
	}
	host := ln.Addr().String()
	tcp, _ := ln.Addr().(*net.TCPAddr)
	if tcp != nil && tcp.IP.IsUnspecified() {
		// Listening on every address: name the machine, not [::].
		name, err := os.Hostname()
		if err != nil || name == "" {
			name = "localhost"
		}
		host = net.JoinHostPort(name, strconv.Itoa(tcp.Port))
	}
	fmt.Fprintf(env.Stdout, "warden serve: %s://%s/ (tokens: %s; store: %s)\n", scheme, host, s.Tokens().File(), s.StoreName())
	if scheme == "http" && tcp != nil && !tcp.IP.IsLoopback() {
		fmt.Fprintf(env.Stderr, "warden serve: warning: plain HTTP on %s: tokens and the audit trail cross the network unencrypted; "+
			"serve HTTPS with --tls-cert and --tls-key, or put a TLS proxy in front\n", ln.Addr())
	}
	if err := s.Serve(ctx, ln, *cert, *key); err != nil {
		return cmdError(env, "serve", err)
	}
	return ExitOK
}

// runServeToken is `warden serve token add|ls|revoke`.
func runServeToken(ctx context.Context, env *Env) int {
	return runSubcommand(ctx, &Env{Args: env.Args[1:], Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr},
		"serve token", "add --kind agent|person [--expires 30d|TIME] NAME | ls | revoke NAME [--policy FILE] [--tokens FILE]", "add, ls or revoke",
		map[string]subcommandFunc{"add": runTokenAdd, "ls": runTokenList, "revoke": runTokenRevoke})
}

func tokensFlags(env *Env, fs *flag.FlagSet, args []string) (*serve.Tokens, []string, int) {
	pol := fs.String("policy", "", "policy file (default: warden.yaml here or in the nearest parent folder)")
	file := fs.String("tokens", "", "tokens file (default: .warden/serve-tokens.json next to the policy)")
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return nil, nil, code
	}
	if *file == "" {
		p := *pol
		if p == "" {
			var err error
			if p, err = findPolicy(); err != nil {
				return nil, nil, cmdError(env, "serve token", err)
			}
		}
		*file = serve.DefaultTokensFile(p)
	}
	return serve.OpenTokens(*file), pos, -1
}

func runTokenAdd(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	kind := fs.String("kind", "", "agent (decide calls, send session events) or person (answer approvals, read the audit trail)")
	expires := fs.String("expires", "", "the token stops working after this long (30d, 12h) or at this time (RFC 3339); default: never")
	t, pos, code := tokensFlags(env, fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return cmdError(env, "serve token add", errors.New("want one NAME: who or what uses the token"))
	}
	var at time.Time
	if *expires != "" {
		var err error
		if at, err = serve.ParseExpiry(*expires, time.Now()); err != nil {
			return cmdError(env, "serve token add", fmt.Errorf("--%w", err))
		}
	}
	tok, err := t.AddExpiring(pos[0], *kind, at)
	if err != nil {
		return cmdError(env, "serve token add", err)
	}
	fmt.Fprintln(env.Stdout, tok)
	until := ""
	if !at.IsZero() {
		until = ", valid until " + at.Format(time.RFC3339)
	}
	fmt.Fprintf(env.Stderr, "%s token %q added to %s%s; it is shown only this once.\n", *kind, pos[0], t.File(), until)
	return ExitOK
}

func runTokenList(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	t, _, code := tokensFlags(env, fs, args)
	if code >= 0 {
		return code
	}
	list, err := t.List()
	if err != nil {
		return cmdError(env, "serve token ls", err)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tCREATED\tEXPIRES")
	now := time.Now()
	for _, tk := range list {
		exp := "never"
		if !tk.Expires.IsZero() {
			exp = tk.Expires.UTC().Format("2006-01-02 15:04 UTC")
			if tk.Expired(now) {
				exp += " (expired)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", tk.Name, tk.Kind, tk.Created.Format("2006-01-02 15:04"), exp)
	}
	tw.Flush()
	return ExitOK
}

func runTokenRevoke(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	t, pos, code := tokensFlags(env, fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return cmdError(env, "serve token revoke", errors.New("want one NAME"))
	}
	if err := t.Revoke(pos[0]); err != nil {
		return cmdError(env, "serve token revoke", err)
	}
	fmt.Fprintf(env.Stdout, "revoked %s\n", pos[0])
	return ExitOK
}
