package client_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/client"
	"github.com/warden-run/warden/session"
)

const policyText = `version: 1
default: {safe: allow, destructive: ask}
protected: ["**/.env"]
rules:
  - id: no-bulk-delete
    effect: deny
    tool: gmail.batchDelete
    message: Deleting many emails at once is not allowed.
    suggestion: Delete messages one at a time, or ask the user.
  - id: send-internal
    effect: allow
    tool: gmail.send
    args: {to: "*@example.com"}
tools:
  gmail.send: other
  gmail.batchDelete: delete
`

func setup(t *testing.T, opt client.Options) (*client.Client, string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(file, []byte(policyText), 0o644); err != nil {
		t.Fatal(err)
	}
	opt.Policy = file
	c, err := client.Open(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, dir
}

// The wrapped executor runs allowed calls only; a denied call returns the
// decision as an error the model can read, and every call is audited in
// the SQLite store next to the policy.
func TestWrap(t *testing.T) {
	ctx := context.Background()
	c, dir := setup(t, client.Options{Session: "run-1", Host: "mail-agent"})
	var ran atomic.Int32
	exec := c.Wrap(func(ctx context.Context, call warden.ToolCall) (any, error) {
		ran.Add(1)
		return "sent", nil
	})
	out, err := exec(ctx, warden.ToolCall{Tool: "gmail.send", Args: map[string]any{"to": "bob@example.com"}})
	if err != nil || out != "sent" {
		t.Fatalf("allowed call: %v %v", out, err)
	}
	_, err = exec(ctx, warden.ToolCall{Tool: "gmail.batchDelete", Args: map[string]any{"ids": []any{"1", "2"}}})
	var de *client.DecisionError
	if !errors.As(err, &de) || de.Decision.Decision != warden.Deny || !strings.Contains(err.Error(), "one at a time") {
		t.Fatalf("denied call: %v", err)
	}
	if !strings.Contains(string(de.ModelError()), `"error":"RULE_DENY"`) {
		t.Errorf("model error: %s", de.ModelError())
	}
	if ran.Load() != 1 {
		t.Errorf("the executor ran %d times, want 1", ran.Load())
	}
	recs, err := c.Store().Audit(ctx, warden.AuditFilter{Session: "run-1"})
	if err != nil || len(recs) != 2 || recs[0].Host != "mail-agent" || recs[1].Rule != "no-bulk-delete" {
		t.Fatalf("audit: %+v %v", recs, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".warden", "warden.db")); err != nil {
		t.Errorf("no store next to the policy: %v", err)
	}
}

// A call that needs approval waits for a human's answer and then runs; a
// rejection reaches the caller with the human's message.
func TestWrapWaitsForApproval(t *testing.T) {
	ctx := context.Background()
	c, _ := setup(t, client.Options{Session: "run-2", Wait: 10 * time.Second})
	answer := func(approve bool, msg string) {
		for i := 0; i < 200; i++ {
			aps, _ := c.Store().Approvals(ctx, warden.ApprovalFilter{Status: warden.ApprovalPending})
			if len(aps) > 0 {
				var err error
				if approve {
					_, err = session.Approve(ctx, c.Store(), aps[0].ID, session.Answer{Scope: warden.ScopeOnce, By: "test"}, time.Now())
				} else {
					_, err = session.Reject(ctx, c.Store(), aps[0].ID, msg, "test")
				}
				if err != nil {
					t.Error(err)
				}
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Error("no approval was queued")
	}
	exec := c.Wrap(func(ctx context.Context, call warden.ToolCall) (any, error) { return "sent", nil })
	go answer(true, "")
	out, err := exec(ctx, warden.ToolCall{Tool: "gmail.send", Args: map[string]any{"to": "eve@elsewhere.org"}})
	if err != nil || out != "sent" {
		t.Fatalf("approved call: %v %v", out, err)
	}
	go answer(false, "Not to that address.")
	_, err = exec(ctx, warden.ToolCall{Tool: "gmail.send", Args: map[string]any{"to": "mallory@elsewhere.org"}})
	var de *client.DecisionError
	if !errors.As(err, &de) || de.Decision.Code != warden.CodeApprovalRejected || !strings.Contains(err.Error(), "Not to that address.") {
		t.Fatalf("rejected call: %v", err)
	}
}

// A policy that does not load is an error, never a client that allows.
func TestOpenFailsClosed(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.yaml")
	os.WriteFile(file, []byte("version: 1\nrules:\n  - id: x\n    effect: maybe\n"), 0o644)
	if _, err := client.Open(context.Background(), client.Options{Policy: file}); err == nil || !strings.Contains(err.Error(), "warden.yaml") {
		t.Errorf("a broken policy opened: %v", err)
	}
}
