package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/scripted"
)

// requireTmux returns tmux's path. A missing tmux skips the test, or fails
// it when CI is set, as requireHost does for a missing host.
func requireTmux(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		msg := "tmux is not installed (the interactive Gemini CLI tests run Gemini CLI in a tmux terminal); run `apt-get install -y tmux`"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// terminal is one program running in a detached tmux session, on a tmux
// server of its own (tmux -L, with its socket in a temporary folder), so a
// test never touches the user's tmux.
type terminal struct {
	t      *testing.T
	tmux   string
	socket string
	env    []string
	pid    int // the program's pid (a process group leader)
}

// startTerminal runs argv in a 200x50 terminal in dir with the environment
// env. When the test ends the program's process group and the tmux server
// are killed.
func startTerminal(t *testing.T, dir string, env []string, argv ...string) *terminal {
	t.Helper()
	bin := requireTmux(t)
	// A short private folder for the socket (sockets paths are limited to
	// about 100 bytes; tmux leaves the socket behind when it exits).
	sockDir, err := os.MkdirTemp("", "wtmux")
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, tmux: bin, socket: fmt.Sprintf("warden-e2e-%d", os.Getpid()),
		env: append(append([]string(nil), env...), "TMUX_TMPDIR="+sockDir)}
	t.Cleanup(func() {
		// Gemini CLI's launcher ignores SIGHUP, so killing the tmux server
		// alone would leave it running: kill its process group first.
		if term.pid > 1 {
			syscall.Kill(-term.pid, syscall.SIGKILL)
		}
		term.run("kill-server")
		os.RemoveAll(sockDir)
	})
	args := []string{"new-session", "-d", "-s", "e2e", "-x", "200", "-y", "50", "-c", dir}
	args = append(args, argv...)
	// Keep the pane when the program exits, to show its last screen.
	args = append(args, ";", "set-option", "-t", "e2e", "remain-on-exit", "on")
	if out, err := term.run(args...); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	out, err := term.run("display-message", "-p", "-t", "e2e", "#{pane_pid}")
	if err == nil {
		term.pid, err = strconv.Atoi(strings.TrimSpace(out))
	}
	if err != nil {
		t.Fatalf("tmux: the program's pid: %q: %v", out, err)
	}
	return term
}

func (term *terminal) run(args ...string) (string, error) {
	cmd := exec.Command(term.tmux, append([]string{"-L", term.socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = term.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// screen returns what the terminal shows now.
func (term *terminal) screen() string {
	out, err := term.run("capture-pane", "-p", "-t", "e2e")
	if err != nil {
		return fmt.Sprintf("(tmux capture-pane: %v: %s)", err, out)
	}
	return out
}

// exited reports whether the program has ended.
func (term *terminal) exited() bool {
	out, _ := term.run("display-message", "-p", "-t", "e2e", "#{pane_dead}")
	return strings.TrimSpace(out) == "1"
}

// send presses keys: tmux key names (Enter, Escape) or text.
func (term *terminal) send(keys ...string) {
	term.t.Helper()
	if out, err := term.run(append([]string{"send-keys", "-t", "e2e"}, keys...)...); err != nil {
		term.t.Fatalf("tmux send-keys %q: %v\n%s", keys, err, out)
	}
}

// waitFor polls the screen until it shows all of subs and returns it. It
// fails the test, with the last screen, at the deadline, when the program
// has ended without showing them, or as soon as giveUp (if not nil) says
// why they will not come.
func (term *terminal) waitFor(what string, timeout time.Duration, giveUp func() string, subs ...string) string {
	term.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := term.screen()
		missing := ""
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				missing = sub
				break
			}
		}
		why := ""
		if missing != "" && giveUp != nil {
			why = giveUp()
		}
		switch {
		case missing == "":
			return s
		case why != "":
			term.t.Fatalf("the terminal does not show %s (%q) and will not: %s; it shows:\n%s", what, missing, why, s)
		case term.exited():
			term.t.Fatalf("the program in the terminal ended before showing %s (%q); last screen:\n%s", what, missing, s)
		case time.Now().After(deadline):
			term.t.Fatalf("after %s the terminal does not show %s (%q); it shows:\n%s", timeout, what, missing, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// geminiDialog is what Gemini CLI's confirmation for the shell call shows
// (interactiveCli bundle, ToolConfirmationMessage): the command, warden's
// reason (the hook's systemMessage), the question and its options, the
// first one selected (so Enter allows once; Escape is the "No" option).
var geminiDialog = []string{
	"touch asked.txt",
	"Creating files needs the user's approval.",
	"ask-touch",
	"Allow execution of [Shell]?",
	"● 1. Allow once",
	"No, suggest changes (esc)",
}

// TestGeminiInteractiveAsk runs Gemini CLI interactively in a terminal
// (tmux), wired by `warden init gemini`, with a policy where `touch *` is
// ask. Gemini CLI runs in YOLO mode, so its own policy would run the call
// without asking: a confirmation can only come from warden's hook, which
// sees an interactive Gemini CLI (stdin a terminal, no -p) and answers
// Gemini's own "ask" instead of queueing a warden approval. The user then
// approves (the command runs) or declines (it does not) in the terminal.
func TestGeminiInteractiveAsk(t *testing.T) {
	t.Parallel()
	h := governedHosts[2]
	entry := requireHost(t, h.spec)
	requireTmux(t)

	// start runs Gemini CLI in a terminal with the prompt and waits for the
	// confirmation of `touch asked.txt`.
	start := func(t *testing.T) (*env, *terminal) {
		e := newEnv(t,
			scripted.Turn{Name: "ask", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell("touch asked.txt")}},
			scripted.Turn{Name: "final", Match: scripted.MinToolResults(1), Text: "Created asked.txt as asked."},
		)
		e.write("warden.yaml", approvalPolicy)
		h.setup(e)
		if out, err := e.warden("init", h.name, "--bin", wardenBin); err != nil {
			t.Fatalf("warden init: %v\n%s", err, out)
		}
		vars := []string{"GOOGLE_GEMINI_BASE_URL=" + e.model.URL, "GEMINI_API_KEY=test", "GEMINI_CLI_TRUST_WORKSPACE=true"}
		for _, v := range e.vars {
			if !strings.HasPrefix(v, "TERM=") { // tmux sets the terminal's TERM
				vars = append(vars, v)
			}
		}
		// -i runs the prompt and stays interactive (-p would be headless).
		term := startTerminal(t, e.project, vars, "node", entry, "-m", "gemini-2.5-flash", "--yolo", "-i", "Create asked.txt")
		t.Cleanup(func() {
			if t.Failed() {
				e.dump(result{stdout: term.screen()})
			}
		})
		began := time.Now()
		settled := func() string {
			if res := e.lastResults(); len(res) > 0 {
				return fmt.Sprintf("the call was settled without asking the user; the model got %+v", res)
			}
			return ""
		}
		term.waitFor("Gemini CLI's confirmation for `touch asked.txt`", 45*time.Second, settled, geminiDialog...)
		t.Logf("confirmation shown %.1fs after start", time.Since(began).Seconds())

		// Until the user answers, the command has not run, and warden has
		// queued nothing: the user is asked in Gemini CLI, not by warden.
		if out, err := e.warden("approvals", "ls", "--json"); err != nil || strings.TrimSpace(out) != "[]" {
			t.Errorf("warden approvals ls: %v\n%s\nwant [] (Gemini CLI asks its user itself)", err, out)
		}
		if e.exists("asked.txt") {
			t.Fatal("asked.txt exists before the user answered")
		}
		if n := len(e.model.Requests()); n != 1 {
			t.Errorf("%d requests to the model while the confirmation is open, want 1", n)
		}
		return e, term
	}

	// checkAudit: the trail holds the call once, as an ask by ask-touch,
	// with no warden approval behind it.
	checkAudit := func(t *testing.T, e *env) {
		recs := e.audit()
		var got []string
		for _, r := range recs {
			got = append(got, fmt.Sprintf("%s %s %s %s approval=%q", r.Host, r.Tool, r.Decision, r.Rule, r.Approval))
		}
		want := "gemini run_shell_command ask ask-touch approval=\"\""
		if strings.Join(got, "\n") != want {
			t.Errorf("audit trail:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
		}
	}

	t.Run("approve", func(t *testing.T) {
		e, term := start(t)
		term.send("Enter") // "1. Allow once", the selected option
		deadline := time.Now().Add(20 * time.Second)
		for !e.exists("asked.txt") {
			if time.Now().After(deadline) {
				t.Fatalf("asked.txt was not created within 20s of approving; the terminal shows:\n%s", term.screen())
			}
			time.Sleep(100 * time.Millisecond)
		}
		// The model got the command's result and answered.
		term.waitFor("the model's final answer", 20*time.Second, nil, "Created asked.txt as asked.")
		if res := e.lastResults(); len(res) != 1 || hasAny(res[0].Text, "warden", "denied", "cancel") {
			t.Errorf("the model got %+v, want the result of `touch asked.txt`", res)
		}
		if out, _ := e.warden("approvals", "ls", "--json"); strings.TrimSpace(out) != "[]" {
			t.Errorf("warden queued an approval although the user answered in Gemini CLI: %s", out)
		}
		checkAudit(t, e)
	})

	t.Run("decline", func(t *testing.T) {
		e, term := start(t)
		term.send("Escape") // "No, suggest changes (esc)"
		s := term.waitFor("that the request was cancelled", 20*time.Second, nil, "Request cancelled.")
		if strings.Contains(s, "Allow execution of") {
			t.Errorf("the confirmation is still open after Escape:\n%s", s)
		}
		if e.exists("asked.txt") {
			t.Fatal("asked.txt exists: the declined command ran")
		}
		// Gemini CLI ends the turn: the model gets no tool result.
		if res := e.lastResults(); len(res) != 0 {
			t.Errorf("the model got tool results %+v after the user declined", res)
		}
		if out, _ := e.warden("approvals", "ls", "--json"); strings.TrimSpace(out) != "[]" {
			t.Errorf("warden queued an approval although the user answered in Gemini CLI: %s", out)
		}
		checkAudit(t, e)
	})
}
