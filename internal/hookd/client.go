package hookd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/internal/spoolfile"
	"github.com/warden-run/warden/wire"
)

var (
	// errNoServer: no hookd listens on the socket (nothing was sent).
	errNoServer = errors.New("no warden hookd is running")
	errTimeout  = errors.New("no answer in time")
)

// spawnEvery bounds how often clients start a hookd that does not come up.
const spawnEvery = 10 * time.Second

// Client is warden-hook: it answers one host event, through hookd when one
// runs, else by running `warden hook` (and starting hookd for next time).
type Client struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Socket is hookd's socket (default SocketPath()).
	Socket string
	// Bin is the warden binary (default: see WardenBin).
	Bin string
	// Grace is how long past the call's own deadline (its --timeout and
	// --wait) the client waits for an answer, hookd's or `warden hook`'s,
	// before it denies (default 5 s).
	Grace time.Duration
}

// defaultGrace is Client.Grace's default.
const defaultGrace = 5 * time.Second

// Run answers one event; args are what follows `warden hook`: the host and
// its flags. It returns the process exit code. It never fails open: when
// no decision can be had, the answer is a deny in the host's JSON and exit
// code 2, which every host reads as "block".
func (c *Client) Run(args []string) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(c.Stderr, "Usage: warden-hook claude|codex|gemini|opencode [warden hook flags]\n\n"+
			"Answers an agent host's hook event like `warden hook`, through a resident\n"+
			"`warden hookd` when one runs (it starts one when none does). Set "+DisableEnv+"=off\n"+
			"to always run `warden hook` instead.")
		return 2
	}
	// The host must send the whole event and close stdin within the call's
	// deadline: a host that keeps it open would have the hook wait until
	// the host's own timeout, which every host reads as "no objection".
	data, err := ReadInput(c.Stdin, hook.CallDeadline(args[1:]))
	if err != nil {
		return c.fail(args[0], data[:min(len(data), 4096)], err)
	}
	grace := c.Grace
	if grace <= 0 {
		grace = defaultGrace
	}
	deadline := time.Now().Add(hook.CallDeadline(args[1:]) + grace)
	socket := c.Socket
	if socket == "" {
		socket = SocketPath()
	}
	callID := hook.NewCallID()
	if ServeURL(args[1:]) != "" {
		// A team's service decides and audits, never this machine or its
		// hookd: `warden hook` sends the event (package
		// remote, which this small client does not link).
		return c.runWarden(args, data, deadline, callID)
	}
	if os.Getenv(DisableEnv) != "off" && len(data) <= MaxInput {
		wd, _ := os.Getwd()
		req := &Request{V: Version, Op: OpHook, Args: args, Dir: wd, Home: os.Getenv("HOME"), Stdin: data, CallID: callID}
		req.Interactive = host.Interactive(args[0])
		resp, sent, err := ask(socket, req, deadline)
		switch {
		case err == nil:
			if err := CheckAnswer(resp.Stdout, resp.Code); err != nil {
				// Whatever answers on hookd's socket must answer as the
				// hook does: anything else is no decision.
				c.Stderr.Write(resp.Stderr)
				return c.failCall(args, data, callID, fmt.Errorf("warden hookd on %s: %w", socket, err))
			}
			c.Stdout.Write(resp.Stdout)
			c.Stderr.Write(resp.Stderr)
			return resp.Code
		case errors.Is(err, errTimeout):
			// hookd took the event and did not answer: running the hook
			// again could decide twice, and the host is waiting.
			return c.failCall(args, data, callID, warden.Errorf(warden.CodeTimeout, "warden hookd on %s gave no answer in time (%s)", socket, hook.CallDeadline(args[1:])))
		case !sent && errors.Is(err, errNoServer):
			c.startServer(socket)
		}
		// hookd is gone or refused: decide here, which is always right.
		// A hookd that died after it took the call may have decided it:
		// `warden hook` gets the call's id, and then gives the decision
		// on record instead of deciding again.
	}
	return c.runWarden(args, data, deadline, callID)
}

// runWarden runs `warden hook ARGS` on the event and passes its answer on.
func (c *Client) runWarden(args []string, data []byte, deadline time.Time, callID string) int {
	bin, err := c.wardenBin()
	if err != nil {
		return c.failCall(args, data, callID, err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append([]string{"hook"}, args...)...)
	cmd.Stdin = bytes.NewReader(data)
	if callID != "" {
		cmd.Env = append(os.Environ(), CallIDEnv+"="+callID)
	}
	cmd.Stdout = &out
	cmd.Stderr = c.Stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		if url := ServeURL(args[1:]); url != "" {
			return c.failCall(args, data, callID, warden.Errorf(warden.CodeUnavailable, "the warden service at %s gave no answer in time", url))
		}
		return c.failCall(args, data, callID, warden.Errorf(warden.CodeTimeout, "%s hook %s gave no answer in time", bin, args[0]))
	case err != nil && !errors.As(err, &exit):
		return c.failCall(args, data, callID, fmt.Errorf("run %s: %w", bin, err))
	case out.Len() == 0:
		// `warden hook` always answers in JSON; nothing means it crashed.
		return c.failCall(args, data, callID, fmt.Errorf("%s hook %s answered nothing (%v)", bin, args[0], err))
	}
	code := cmd.ProcessState.ExitCode()
	if err := CheckAnswer(out.Bytes(), code); err != nil {
		// Not warden's answer (another program named warden, a warden
		// too old for this warden-hook, a crash mid-answer): passed on,
		// a host would read a code other than 0 and 2, or text that is
		// not JSON, as "no objection".
		return c.failCall(args, data, callID, fmt.Errorf("%s hook %s: %w", bin, args[0], err))
	}
	c.Stdout.Write(out.Bytes())
	return code
}

// CheckAnswer reports an answer that is not one `warden hook` can give
// (wire.CheckAnswer).
func CheckAnswer(stdout []byte, code int) error { return wire.CheckAnswer(stdout, code) }

func cutText(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// ReadInput reads the host's hook JSON: at most MaxInput bytes, and to
// the end within wait. A host that sends more, or does not close stdin in
// time, gets an error with the code BAD_INPUT (and what was read).
func ReadInput(r io.Reader, wait time.Duration) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	var mu sync.Mutex
	var buf []byte
	go func() {
		chunk := make([]byte, 64<<10)
		for {
			n, err := r.Read(chunk)
			mu.Lock()
			buf = append(buf, chunk[:n]...)
			over := len(buf) > MaxInput
			data := buf
			mu.Unlock()
			switch {
			case err == io.EOF:
				done <- result{data: data}
				return
			case err != nil:
				done <- result{data: data, err: warden.Errorf(warden.CodeBadInput, "read hook input: %v", err)}
				return
			case over:
				done <- result{data: data, err: fmt.Errorf("hook input: %w", warden.CheckInput(data))}
				return
			}
		}
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.data, r.err
	case <-timer.C:
		mu.Lock()
		data := append([]byte(nil), buf...)
		mu.Unlock()
		return data, warden.Errorf(warden.CodeBadInput, "the host did not close the hook's input within %s (%d bytes read): warden decides only a whole event", wait, len(data))
	}
}

// failCall is fail for the event of a call with an id (callID) that
// no warden answered: the deny is recorded, as every answer is.
func (c *Client) failCall(args []string, data []byte, callID string, err error) int {
	c.record(args, data, callID, err)
	return c.fail(args[0], data, err)
}

// record spools the audit record of the deny failCall answers, for a
// call before a tool that the local store audits (not a service's, not
// --stateless): the store takes it in when it is next opened or written
// (see internal/sqlstore, "The spool"). When hookd or `warden hook`
// recorded the call after all, under the same call id, the store keeps
// that record and drops this one.
func (c *Client) record(args []string, data []byte, callID string, cause error) {
	if callID == "" || len(args) == 0 || ServeURL(args[1:]) != "" {
		return
	}
	h, ok := host.Lookup(args[0])
	if !ok {
		return
	}
	ev, err := h.Decode(data)
	if err != nil || ev.Kind != hook.PreTool {
		return
	}
	var f hook.Flags
	if f.FlagSet(io.Discard).Parse(args[1:]) != nil || f.Stateless {
		return
	}
	wd, _ := os.Getwd()
	if ev.Cwd == "" {
		ev.Cwd = wd
	}
	file := f.Policy
	if file == "" {
		if file, err = spoolfile.FindPolicy(ev.Cwd); err != nil {
			return // `warden hook` answers that itself, recorded nowhere
		}
	}
	call := ev.Call
	if call.Role == "" && call.Depth == 0 {
		call.Role = f.Role
	}
	call.Host = h.Name()
	rec := warden.FailureRecord(call, callID, "", warden.FailClosed(cause))
	if err := spoolfile.Append(spoolfile.For(file, f.Store), rec); err != nil {
		fmt.Fprintf(c.Stderr, "warden-hook: no audit record of this failure: %v\n", err)
	}
}

// fail answers a deny in the host's JSON and exits 2 (block).
// At the end of a turn it exits 0 (see hook.Host.EndOfTurn).
func (c *Client) fail(name string, data []byte, err error) int {
	d := warden.FailClosed(err)
	event := hook.EventName(data)
	c.Stdout.Write(host.Failure(name, event, d))
	fmt.Fprintln(c.Stderr, d.ModelText())
	return host.FailCode(name, event)
}

// wardenBin finds the full warden binary: $WARDEN_BIN (unless it names
// warden-hook itself), the warden next to this program, then PATH.
func (c *Client) wardenBin() (string, error) {
	if c.Bin != "" {
		return c.Bin, nil
	}
	if b := os.Getenv(BinEnv); b != "" && !strings.HasPrefix(filepath.Base(b), "warden-hook") {
		return b, nil
	}
	if self, err := os.Executable(); err == nil {
		b := filepath.Join(filepath.Dir(self), "warden")
		if st, err := os.Stat(b); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return b, nil
		}
	}
	b, err := exec.LookPath("warden")
	if err != nil {
		return "", fmt.Errorf("warden-hook needs the warden binary: none next to warden-hook or on PATH (set %s)", BinEnv)
	}
	return b, nil
}

// startServer starts a hookd in the background for the next calls, at
// most once per spawnEvery (a hookd that cannot start must not cost every
// call a process). A second hookd that starts at the same time exits.
func (c *Client) startServer(socket string) {
	dir := dirOf(socket)
	if PrepareDir(dir) != nil {
		return
	}
	stamp := filepath.Join(dir, "hookd.spawn")
	if st, err := os.Stat(stamp); err == nil && time.Since(st.ModTime()) < spawnEvery {
		return
	}
	if err := os.WriteFile(stamp, nil, 0o600); err != nil {
		return
	}
	bin, err := c.wardenBin()
	if err != nil {
		return
	}
	log, err := os.OpenFile(LogFile(socket), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer log.Close()
	cmd := exec.Command(bin, "hookd", "--socket", socket)
	cmd.Dir = "/"
	cmd.Env = serverEnv(os.Environ())
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = Detach(cmd.SysProcAttr)
	if cmd.Start() == nil {
		cmd.Process.Release()
	}
}

// serverEnv keeps what hookd needs of the environment (home, paths,
// locale, warden's own settings) and drops the rest: a host's environment
// may hold API keys that a long-lived process has no use for.
func serverEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "HOME", name == "USER", name == "LOGNAME", name == "PATH", name == "LANG",
			name == "TZ", name == "TMPDIR", strings.HasPrefix(name, "LC_"),
			strings.HasPrefix(name, "XDG_"), strings.HasPrefix(name, "WARDEN_"):
			out = append(out, kv)
		}
	}
	return out
}

func dirOf(socket string) string { return filepath.Dir(socket) }
