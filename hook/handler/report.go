package handler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/host/gemini"
	"github.com/warden-run/warden/host/opencode"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/reportgate"
	"github.com/warden-run/warden/session"
)

// The hook's part of the report contract (package reportgate): the
// instructions in the session-start and post-compaction text, and the gate
// at the end of a turn. eventAnswer calls these at its events.

// withReport adds the report instructions for session sid, when the
// policy holds it to the contract, to the governance text.
func withReport(ctx context.Context, tr *session.Tracker, st warden.Store, sid, text string) (string, error) {
	pol := tr.Engine.Policy()
	if pol.Report == nil || sid == "" {
		return text, nil
	}
	s, err := st.Session(ctx, sid)
	if err != nil {
		return text, err
	}
	ins, err := reportgate.Instructions(ctx, pol, st, s)
	if err != nil || ins == "" {
		return text, err
	}
	if s.Host == gemini.Host {
		// Gemini CLI escapes < and > in a hook's text.
		ins += "(This text may show the tags with &lt; and &gt;: write them with < and >.)\n"
	}
	if strings.TrimSpace(text) == "" {
		return ins, nil
	}
	return strings.TrimRight(text, "\n") + "\n\n" + ins, nil
}

// reportStop runs the report gate at the end of a turn of session sid and
// returns the retry text when the turn is held open. The last assistant
// message is the one the host reports (Claude Code's and Codex's
// last_assistant_message, Gemini CLI's prompt_response, the text warden's
// OpenCode plugin reads), else the last one in the transcript.
func reportStop(ctx context.Context, tr *session.Tracker, st warden.Store, h hook.Host, ev hook.Event, opt options, sid string) (string, error) {
	pol := tr.Engine.Policy()
	if pol.Report == nil || sid == "" {
		return "", nil
	}
	// A session warden never saw start (its start hook is not wired, or
	// failed) is checked all the same (reportgate.Turn.Unknown), with the
	// role and depth the event gives.
	s, err := st.Session(ctx, sid)
	unknown := errors.Is(err, warden.ErrNotFound)
	if unknown {
		s = warden.Session{ID: sid, Host: h.Name(), Role: ev.AgentType}
		if ev.AgentID != "" || ev.Parent != "" {
			s.Depth = 1
		} else if s.Role == "" {
			s.Role = opt.role
		}
	} else if err != nil {
		return "", err
	}
	msg := ev.Message
	if msg == "" && ev.Transcript != "" {
		if msg, err = reportgate.LastMessage(ev.Transcript); err != nil {
			return "", err
		}
	}
	// The transcript is the top-level session's: a subagent's turn
	// (SubagentStop) gives its parent's.
	transcript := ""
	if ev.Kind == hook.Stop {
		transcript = ev.Transcript
	}
	g := reportGate(pol, st, h, opt, transcript)
	// OpenCode's plugin reports an answer's text as it completes
	// (text.complete), when OpenCode can still ask the model again but the
	// answer may still go on with a tool call: a verdict that holds the
	// turn is tentative there, and stored at turn.end, before the next
	// model request, once the answer is known to have called no tool.
	// Its session.idle comes after the turn ended, and `opencode run`
	// exits then: a report checked only there is kept, never held for.
	oc := h.Name() == opencode.Host
	v, err := g.Stop(ctx, reportgate.Turn{Session: s, Host: h.Name(), Message: msg, Unknown: unknown,
		CannotHold: oc && !ev.ReportOnly, Tentative: oc && ev.Name == opencode.TextComplete, Transcript: transcript})
	if err != nil || !v.Block {
		return "", err
	}
	return v.Reason, nil
}

// reportGate is the report gate of a hook: the plugins' on-complete
// commands run in a process of their own (spawnComplete).
func reportGate(pol *policy.Policy, st warden.Store, h hook.Host, opt options, transcript string) *reportgate.Gate {
	return &reportgate.Gate{Policy: pol, Store: st, Complete: func(ctx context.Context, sid string) {
		if err := spawnComplete(pol.File, opt.store, sid, transcript); err != nil {
			fmt.Fprintf(os.Stderr, "warden hook %s: report on-complete for session %s: %v\n", h.Name(), sid, err)
		}
	}}
}

// reportPrompt records a user request of session sid held to the report
// contract (the completions' request; the response cache's count) and
// returns the answer from the cache (report.cache) when the session is
// served from it: the host then refuses the prompt with the
// cached final report as the reason, which its user reads, and the model
// is not asked. OpenCode cannot answer a prompt in the model's place: its
// requests are recorded, never served.
func reportPrompt(ctx context.Context, tr *session.Tracker, st warden.Store, h hook.Host, ev hook.Event, opt options, sid string) (string, error) {
	pol := tr.Engine.Policy()
	if pol.Report == nil || sid == "" {
		return "", nil
	}
	s, err := st.Session(ctx, sid)
	if err != nil {
		return "", ignoreNotFound(s, err)
	}
	g := reportGate(pol, st, h, opt, ev.Transcript)
	served, err := g.Prompt(ctx, reportgate.Request{Session: s, Host: h.Name(), Prompt: ev.Prompt, Transcript: ev.Transcript, Serve: h.Name() != opencode.Host})
	if err != nil || served == nil {
		return "", err
	}
	return served.Text, nil
}

// reportSpawn starts `warden report complete` for a session, in a process
// of its own that outlives the hook (tests replace it).
var reportSpawn = func(argv []string, dir, logFile string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if !strings.HasPrefix(filepath.Base(exe), "warden") {
		return fmt.Errorf("%s is not warden: run `warden report complete` by hand", exe)
	}
	if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
		return err
	}
	log, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(exe, argv...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = hookd.Detach(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// spawnComplete hands a final report to the plugins' on-complete commands
// without waiting: `warden report complete` runs them, once, and logs
// their failures to .warden/report.log next to the policy.
func spawnComplete(policyFile, storeURL, sid, transcript string) error {
	argv := []string{"report", "complete", "--policy", policyFile, "--session", sid}
	if storeURL != "" {
		argv = append(argv, "--store", storeURL)
	}
	if transcript != "" {
		argv = append(argv, "--transcript", transcript)
	}
	dir := filepath.Dir(policyFile)
	return reportSpawn(argv, dir, filepath.Join(dir, ".warden", "report.log"))
}
