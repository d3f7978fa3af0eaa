package handler_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/hook/handler"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/report"
	"github.com/warden-run/warden/spawn"
	"github.com/warden-run/warden/sqlite"
)

// TestSpawnLinksSessionStart: a host started as a follow-up (the hook's
// runtime has its spawn id, from $WARDEN_SPAWN) starts its session as the
// child of the session that asked for it, at depth 1 with the role it was
// asked with. The spawn id links one session only, of the host it was
// started on; a session without it starts at depth 0 as before.
func TestSpawnLinksSessionStart(t *testing.T) {
	ctx := context.Background()
	cwd := project(t, hookTestPolicy+"roles:\n  reviewer: {}\n")
	root := filepath.Dir(filepath.Dir(cwd))
	pol, err := policy.Load(filepath.Join(root, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(root, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.UpdateSession(ctx, "parent", func(s *warden.Session, created bool) error { return nil }); err != nil {
		t.Fatal(err)
	}
	// A real follow-up process: true(1) stands in for the host's program.
	r := &spawn.Runner{Policy: pol, Store: st, LookPath: func(string) (string, error) { return exec.LookPath("true") }}
	if err := r.Spawn(ctx, report.SpawnRequest{Host: "claude", Prompt: "check it", Role: "reviewer", Parent: "parent"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := spawn.List(ctx, st, "parent")
	if err != nil || len(list) != 1 {
		t.Fatalf("spawns: %+v %v", list, err)
	}
	start := func(hostName, sid, spawnID string) warden.Session {
		t.Helper()
		h, _ := host.Lookup(hostName)
		rt := handler.Local()
		rt.Spawn = spawnID
		in := js(map[string]any{"session_id": sid, "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"})
		var f hook.Flags
		if err := f.FlagSet(&bytes.Buffer{}).Parse(nil); err != nil {
			t.Fatal(err)
		}
		if res := handler.Run(ctx, rt, h, []byte(in), f); res.Code != 0 {
			t.Fatalf("session start: exit %d: %s %s", res.Code, res.Stdout, res.Stderr)
		}
		s, err := st.Session(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := start("codex", "other-host", list[0].ID); s.Parent != "" || s.Depth != 0 {
		t.Errorf("a codex session took a claude spawn: %+v", s)
	}
	if s := start("claude", "child", list[0].ID); s.Parent != "parent" || s.Depth != 1 || s.Role != "reviewer" || s.Host != "claude" {
		t.Errorf("the follow-up's session: %+v", s)
	}
	if s := start("claude", "second", list[0].ID); s.Parent != "" || s.Depth != 0 {
		t.Errorf("a second session took the same spawn: %+v", s)
	}
	if s := start("claude", "plain", ""); s.Parent != "" || s.Depth != 0 {
		t.Errorf("a session without a spawn id: %+v", s)
	}
	list, _ = spawn.List(ctx, st, "parent")
	if list[0].Child != "child" || list[0].Outcome() != "exited 0" {
		t.Errorf("spawn: %+v", list[0])
	}
}
