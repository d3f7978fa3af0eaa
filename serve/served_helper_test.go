package serve_test

import (
	"context"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden/internal/pgtest"
	"github.com/warden-run/warden/serve"
)

// benchServed is a warden serve on 127.0.0.1 under benchPolicy, on SQLite
// or on a PostgreSQL schema of its own, stopped when the test ends.
type benchServed struct {
	url    string // of POST /v1/decide
	token  string // an agent token
	policy string // the policy file
	store  string // cfg.Store ("" for the SQLite default)
}

// startBenchServe starts it; maxPerToken is serve.Config.MaxPerToken.
func startBenchServe(tb testing.TB, store string, maxPerToken int) benchServed {
	tb.Helper()
	pf := filepath.Join(tb.TempDir(), "warden.yaml")
	if err := os.WriteFile(pf, []byte(benchPolicy), 0o644); err != nil {
		tb.Fatal(err)
	}
	cfg := serve.Config{Policy: pf, Log: log.New(io.Discard, "", 0), MaxPerToken: maxPerToken}
	if store == "postgres" {
		cfg.Store = pgtest.Schema(tb)
	}
	s, err := serve.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := s.Tokens().Add("bench", serve.KindAgent)
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, "", "") }()
	tb.Cleanup(func() { cancel(); <-done })
	return benchServed{url: "http://" + ln.Addr().String() + "/v1/decide", token: tok, policy: pf, store: cfg.Store}
}
