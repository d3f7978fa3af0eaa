package server_test

import (
	"bytes"
	"context"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/internal/hookd/server"
)

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHookdLogsWhyBeforeClosing: once hookd stops answering, its log
// already says why it stopped.
func TestHookdLogsWhyBeforeClosing(t *testing.T) {
	dir, err := os.MkdirTemp("", "hookd-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "hookd.sock")
	var logb syncBuffer
	srv := server.New(sock, time.Minute, log.New(&logb, "", 0), nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		if _, err := hookd.Ask(sock, &hookd.Request{Op: hookd.OpPing}, time.Second); err == nil {
			break
		}
		if time.Since(start) > time.Minute { // room for a loaded machine
			t.Fatal("hookd did not come up")
		}
	}
	if _, err := hookd.Ask(sock, &hookd.Request{Op: hookd.OpStop}, time.Second); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		if _, err := hookd.Ask(sock, &hookd.Request{Op: hookd.OpPing}, time.Second); err != nil {
			break
		}
		if time.Since(start) > time.Minute { // room for a loaded machine
			t.Fatal("hookd still answers 5 s after stop")
		}
	}
	if l := logb.String(); !strings.Contains(l, "stopped: asked to stop") {
		t.Errorf("hookd stopped answering before its log said why:\n%s", l)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
}
