package report_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/report"
)

func TestParseResult(t *testing.T) {
	t.Parallel()
	for _, out := range []string{"", "  \n", "sent the notification\n", "[1, 2]"} {
		if reqs, err := report.ParseResult([]byte(out)); reqs != nil || err != nil {
			t.Errorf("%q: %v %v, want no result", out, reqs, err)
		}
	}
	reqs, err := report.ParseResult([]byte(`{"spawn": {"host": "claude", "prompt": "check it", "role": "reviewer", "cwd": "sub"}}`))
	if err != nil || len(reqs) != 1 || reqs[0] != (report.SpawnRequest{Host: "claude", Prompt: "check it", Role: "reviewer", Cwd: "sub"}) {
		t.Fatalf("one: %+v %v", reqs, err)
	}
	reqs, err = report.ParseResult([]byte("\n{\"spawn\": [{\"host\": \"codex\", \"prompt\": \"a\"}, {\"host\": \"gemini\", \"prompt\": \"b\"}]}\n"))
	if err != nil || len(reqs) != 2 || reqs[1].Host != "gemini" {
		t.Fatalf("list: %+v %v", reqs, err)
	}
	if reqs, err := report.ParseResult([]byte(`{}`)); reqs != nil || err != nil {
		t.Errorf("{}: %v %v", reqs, err)
	}
	for out, want := range map[string]string{
		`{"spawn": {"host": "claude"`:                                        "not one JSON object",
		`{"spawn": {"host": "claude", "prompt": "x"}} {"spawn": {}}`:         "more than one JSON value",
		`{"spwan": {"host": "claude", "prompt": "x"}}`:                       `unknown key "spwan" (known: spawn)`,
		`{"spawn": "claude"}`:                                                `"spawn" must be an object or a list of objects`,
		`{"spawn": null}`:                                                    `"spawn" must be an object or a list of objects`,
		`{"spawn": {"host": "claude", "prompt": "x", "env": {"A": "b"}}}`:    `spawn[0]: json: unknown field "env" (known fields: host, prompt, role, cwd)`,
		`{"spawn": [{"host": "claude", "prompt": "x"}, {"host": "claude"}]}`: `spawn[1]: spawn request: "prompt" is required`,
		`{"spawn": {"prompt": "x"}}`:                                         `"host" is required`,
		`{"spawn": {"host": "claude", "prompt": "-p --yolo"}}`:               "could read as a flag",
	} {
		if reqs, err := report.ParseResult([]byte(out)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v %v, want an error with %q", out, reqs, err, want)
		}
	}
}

func TestCreateSessionWithoutSpawner(t *testing.T) {
	t.Parallel()
	err := report.CreateSession(context.Background(), report.SpawnRequest{Host: "claude", Prompt: "x"})
	if !errors.Is(err, report.ErrNoSpawner) {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadPluginSpawn(t *testing.T) {
	t.Parallel()
	const head = "name: p\nschema: {type: object}\nlong_instruction: l\nshort_instruction: s\n"
	dir := writePlugin(t, "p.yaml", head+"spawn:\n  host: claude\n  prompt: \"On {{ plugin }} of {{session_id}}: {{final_report}} {{meta}} {{meta.n}} {{meta.s}}\"\n")
	files, err := report.LoadPlugins(dir, []string{"p.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	sp := files[0].Spawn
	if sp == nil || sp.Host != "claude" {
		t.Fatalf("spawn = %+v", sp)
	}
	got := sp.Expand(report.Completion{Plugin: "p", SessionID: "s1", FinalReport: "done", Meta: []byte(`{"n":2,"s":"two"}`)})
	if got.Prompt != `On p of s1: done {"n":2,"s":"two"} 2 two` || got.Host != "claude" {
		t.Errorf("expanded: %+v", got)
	}
	for body, want := range map[string]string{
		"spawn: claude\n":                                  `line 5: field "spawn": want a mapping`,
		"spawn:\n  prompt: x\n":                            `field "spawn.host" is required`,
		"spawn:\n  host: claude\n":                         `field "spawn.prompt" is required`,
		"spawn:\n  host: claude\n  prompt: x\n  env: y\n":  `line 8: unknown field "spawn.env" (known: host, prompt, role, cwd)`,
		"spawn:\n  host: claude\n  prompt: \"{{user}}\"\n": `unknown placeholder {{user}}`,
		"spawn:\n  host: claude\n  prompt: \"{{meta\"\n":   `is not closed with }}`,
		"spawn:\n  host: [claude]\n  prompt: x\n":          `field "spawn.host": want a non-empty string`,
	} {
		dir := writePlugin(t, "p.yaml", head+body)
		if _, err := report.LoadPlugins(dir, []string{"p.yaml"}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

// TestOnCompleteSpawn: the on-complete command's output reaches the
// spawner with the plugin and the session; output that is not a result
// is ignored; a bad result is the call's error, logged, and spawns
// nothing.
func TestOnCompleteSpawn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, script, wantErr string
		want                  int
	}{
		{"request", `echo '{"spawn": {"host": "codex", "prompt": "follow up"}}'`, "", 1},
		{"log line", `echo done`, "", 0},
		{"bad result", `echo '{"spawn": {"host": "codex"}}'`, `"prompt" is required`, 0},
		{"spawner refuses", `echo '{"spawn": {"host": "nobody", "prompt": "x"}}'`, "spawn a nobody session: no such host", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			exectest.WriteFile(filepath.Join(dir, "cmd.sh"), []byte("#!/bin/sh\ncat >/dev/null\n"+c.script+"\n"), 0o755)
			os.WriteFile(filepath.Join(dir, "p.yaml"), []byte("name: p\nschema: {type: object}\nlong_instruction: l\nshort_instruction: s\non_complete: {command: [./cmd.sh]}\n"), 0o644)
			files, err := report.LoadPlugins(dir, []string{"p.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			s, err := report.NewSession(&report.Config{Nonce: "abc123", Plugins: files.Factories(), SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			s.Turn([]byte(final("x") + meta("p", `{}`)))
			var mu sync.Mutex
			var got []report.SpawnRequest
			sp := func(_ context.Context, r report.SpawnRequest) error {
				if r.Host == "nobody" {
					return errors.New("no such host")
				}
				mu.Lock()
				got = append(got, r)
				mu.Unlock()
				return nil
			}
			pend, err := s.Complete(report.WithSpawner(context.Background(), sp), false)
			if err != nil {
				t.Fatal(err)
			}
			errs := pend.Wait()
			if c.wantErr == "" && len(errs) != 0 || c.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), c.wantErr)) {
				t.Fatalf("errors %v, want %q", errs, c.wantErr)
			}
			if len(got) != c.want {
				t.Fatalf("spawned %+v, want %d", got, c.want)
			}
			if c.want == 1 && (got[0].Plugin != "p" || got[0].Parent != "s1" || got[0].Prompt != "follow up") {
				t.Errorf("request %+v", got[0])
			}
		})
	}
}
