// Package servetest runs a real `warden serve` for tests: a loopback port,
// a SQLite store in a temporary folder, the policy given.
package servetest

import (
	"context"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden/serve"
)

// Service is a running service. The test's cleanup stops it.
type Service struct {
	URL, Dir string
	Server   *serve.Server

	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// Start writes policy as warden.yaml in a temporary folder and serves it
// on 127.0.0.1 (policy reload every 50 ms, 1 s of grace at shutdown, 64
// KiB bodies, no log).
func Start(t testing.TB, policy string) *Service {
	t.Helper()
	return StartConfig(t, policy, nil)
}

// StartConfig is Start with the service's configuration changed by set
// (nil: none) before it starts.
func StartConfig(t testing.TB, policy string, set func(*serve.Config)) *Service {
	t.Helper()
	dir := t.TempDir()
	pf := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(pf, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := serve.Config{Policy: pf, Poll: 50 * time.Millisecond, Grace: time.Second, MaxBody: 64 << 10,
		Log: log.New(io.Discard, "", 0)}
	if set != nil {
		set(&cfg)
	}
	s, err := serve.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	v := &Service{URL: "http://" + ln.Addr().String(), Dir: dir, Server: s, cancel: cancel, done: make(chan error, 1)}
	go func() { v.done <- s.Serve(ctx, ln, "", "") }()
	t.Cleanup(func() { v.Stop() })
	return v
}

// Token adds a token of the kind and returns it.
func (v *Service) Token(t testing.TB, name, kind string) string {
	t.Helper()
	tok, err := v.Server.Tokens().Add(name, kind)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Stop shuts the service down gracefully and returns what Serve
// returned; it may be called more than once.
func (v *Service) Stop() error {
	v.once.Do(func() {
		v.cancel()
		v.err = <-v.done
	})
	return v.err
}
