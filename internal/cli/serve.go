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
	if code := parseFlags(fs, env.Args); code >= 0 {
		return code
	}
	if (*cert == "") != (*key == "") {
		return cmdError(env, "serve", errors.New("--tls-cert and --tls-key go together"))
	}
	file := *sf.policy
	if file == "" {
		var err error
		if file, err = findPolicy(); err != nil {
			return cmdError(env, "serve", err)
		}
	}
	s, err := serve.New(ctx, serve.Config{Policy: file, Store: *sf.store, Tokens: *tokens, URL: *public,
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
		"serve token", "add --kind agent|person NAME | ls | revoke NAME [--policy FILE] [--tokens FILE]", "add, ls or revoke",
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
	t, pos, code := tokensFlags(env, fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return cmdError(env, "serve token add", errors.New("want one NAME: who or what uses the token"))
	}
	tok, err := t.Add(pos[0], *kind)
	if err != nil {
		return cmdError(env, "serve token add", err)
	}
	fmt.Fprintln(env.Stdout, tok)
	fmt.Fprintf(env.Stderr, "%s token %q added to %s; it is shown only this once.\n", *kind, pos[0], t.File())
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
	fmt.Fprintln(tw, "NAME\tKIND\tCREATED")
	for _, tk := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", tk.Name, tk.Kind, tk.Created.Format("2006-01-02 15:04"))
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
