// Package hookd is the fast path of warden's host hooks: a resident
// `warden hookd` process per user that keeps compiled policies and open
// stores, and the small `warden-hook` client the hosts run for every event.
//
// A host starts a process for every hook event, so the cost of one call is
// mostly process start: the full warden binary (SQLite, PostgreSQL, report
// validation) takes several milliseconds to start before it does anything.
// warden-hook links only this package and the host adapters, forwards the
// event over a Unix socket, and prints the answer. When no hookd answers it
// starts one for the next call and runs `warden hook` itself, so a call
// never depends on the daemon: the answer is the same either way.
//
// This package must stay light: no SQLite, no YAML, no policy engine.
package hookd

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/claudecode"
	"github.com/warden-run/warden/codex"
	"github.com/warden-run/warden/geminicli"
	"github.com/warden-run/warden/opencode"
)

// Version is the protocol version. A hookd answers only requests of its
// own version; the client runs `warden hook` itself otherwise.
const Version = 1

// Request is one message from the client to hookd.
type Request struct {
	V  int    `json:"v"`
	Op string `json:"op"` // OpHook, OpPing or OpStop
	// Args are the arguments after `warden hook`: the host and its flags.
	Args []string `json:"args,omitempty"`
	// Dir is the client's working directory, for relative paths and for
	// finding the policy when the host reports no project directory.
	Dir string `json:"dir,omitempty"`
	// Stdin is the host's hook JSON.
	Stdin []byte `json:"stdin,omitempty"`
	// Home is the client's $HOME: policies expand ~ with it, so a hookd
	// with another home does not answer.
	Home string `json:"home,omitempty"`
	// Interactive reports, for Gemini CLI and Claude Code, whether the
	// host that runs the client can show its own confirmation prompt (only
	// the client can tell: it looks at its parent processes and its
	// environment; see HostInteractive).
	Interactive bool `json:"interactive,omitempty"`
	// CallID identifies this call in the audit trail: when hookd dies
	// mid-call, the client runs `warden hook` with the same id, and a call
	// hookd had decided is not decided again.
	CallID string `json:"call_id,omitempty"`
}

// CallIDEnv passes a call's id to `warden hook` (see Request.CallID).
const CallIDEnv = "WARDEN_HOOK_CALL_ID"

// NewCallID returns a new random call id.
func NewCallID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return ""
	}
	return "c-" + hex.EncodeToString(b[:])
}

// Request operations.
const (
	OpHook = "hook"
	OpPing = "ping"
	OpStop = "stop"
)

// Response is hookd's answer: what `warden hook` would have written and
// its exit code. Refused is set when hookd did not run the hook at all
// (another protocol version, a request it cannot read); the client then
// runs `warden hook` itself.
type Response struct {
	V       int    `json:"v"`
	Code    int    `json:"code"`
	Stdout  []byte `json:"stdout,omitempty"`
	Stderr  []byte `json:"stderr,omitempty"`
	Refused string `json:"refused,omitempty"`
	// PID is hookd's process id (ping).
	PID int `json:"pid,omitempty"`
}

// MaxMessage bounds a request or response on the socket: the largest
// input, base64-encoded, with room to spare.
const MaxMessage = MaxInput/3*4 + 1<<20

// MaxInput bounds the hook JSON a host may send (the same as `warden hook`).
const MaxInput = warden.MaxInput

// DefaultTimeout is how long `warden hook` takes at most to answer (its
// --timeout default); the client waits a little longer for hookd.
const DefaultTimeout = 10 * time.Second

// SocketEnv names the environment variable that sets the socket's path.
const SocketEnv = "WARDEN_HOOKD_SOCKET"

// DisableEnv, set to "off", makes the client run `warden hook` itself every
// time, without starting or asking hookd.
const DisableEnv = "WARDEN_HOOKD"

// BinEnv names the warden binary the client runs (for hookd and for the
// hook itself); by default the `warden` next to warden-hook, then on PATH.
const BinEnv = "WARDEN_BIN"

// SocketPath is hookd's socket: $WARDEN_HOOKD_SOCKET, else
// $XDG_RUNTIME_DIR/warden/hookd.sock, else $TMPDIR/warden-UID/hookd.sock.
func SocketPath() string {
	if p := os.Getenv(SocketEnv); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return filepath.Join(d, "warden", "hookd.sock")
		}
	}
	return filepath.Join(os.TempDir(), "warden-"+strconv.Itoa(os.Getuid()), "hookd.sock")
}

// CheckDir reports whether dir is safe to hold the socket: a real folder
// (not a symlink) owned by this user that nobody else can write to or list.
// Anyone who could put a socket there could answer "allow" in hookd's name.
func CheckDir(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is open to other users (mode %04o); it must be 0700", dir, st.Mode().Perm())
	}
	if uid, ok := owner(st); ok && uid != os.Getuid() {
		return fmt.Errorf("%s belongs to user %d, not to this user (%d)", dir, uid, os.Getuid())
	}
	return nil
}

// PrepareDir creates the socket's folder (0700) if needed and checks it.
func PrepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return CheckDir(dir)
}

// LogFile is where a hookd started by the client writes its log.
func LogFile(socket string) string { return strings.TrimSuffix(socket, ".sock") + ".log" }

// Failure is the answer to give a host when no decision could be made: a
// deny before a tool, a message elsewhere, in the host's JSON. event is the
// host's event name ("" when unknown: the deny shape).
func Failure(host, event string, d warden.Decision) []byte {
	switch host {
	case "codex":
		return codex.Failure(event, d).Marshal()
	case "gemini":
		return geminicli.Failure(event, d).Marshal()
	case "opencode":
		return opencode.Failure(event, d).Marshal()
	}
	return claudecode.Failure(event, d).Marshal()
}

// EndOfTurn reports whether a host's event ends a turn (Claude Code's and
// Codex's Stop and SubagentStop, Gemini CLI's AfterAgent, OpenCode's
// session.idle). A failure there is answered without context, without a
// block and with exit code 0: anything else makes the host ask the model
// again, at every stop.
func EndOfTurn(host, event string) bool {
	switch host {
	case "gemini":
		return geminicli.EndOfTurn(event)
	case "opencode":
		return opencode.EndOfTurn(event)
	}
	return claudecode.EndOfTurn(event)
}

// FailCode is the exit code of a failure answer at event: 2 (block), or 0
// at the end of a turn (see EndOfTurn).
func FailCode(host, event string) int {
	if EndOfTurn(host, event) {
		return 0
	}
	return 2
}

// EventName reads the event name from a host's hook JSON, or "".
func EventName(data []byte) string {
	var in struct {
		Hook  string `json:"hook_event_name"`
		Event string `json:"event"`
	}
	if json.Unmarshal(data, &in) != nil {
		return ""
	}
	if in.Hook != "" {
		return in.Hook
	}
	return in.Event
}

// Deadline is the longest a hook call may take given its arguments: its
// --timeout (default DefaultTimeout) plus its --wait.
func Deadline(args []string) time.Duration {
	timeout, wait := DefaultTimeout, time.Duration(0)
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || (name != "timeout" && name != "wait") {
			continue
		}
		if !hasVal && i+1 < len(args) {
			i++
			val = args[i]
		}
		d, err := time.ParseDuration(val)
		if err != nil || d < 0 {
			continue
		}
		if name == "timeout" {
			timeout = d
		} else {
			wait = d
		}
	}
	return timeout + wait
}

// ErrLocked: another hookd holds the socket's lock.
var ErrLocked = errors.New("another warden hookd serves this socket")

// Ask sends one request to the hookd on socket and waits at most timeout
// for the answer.
func Ask(socket string, req *Request, timeout time.Duration) (Response, error) {
	req.V = Version
	resp, _, err := ask(socket, req, time.Now().Add(timeout))
	return resp, err
}

// errRefused marks a hookd that answered without running the hook.
var errRefused = errors.New("hookd refused the request")

// GeminiInteractive reports whether the Gemini CLI that runs this process
// is interactive: only then can it show the confirmation a hook's "ask"
// requests (headless, an ask waits forever). It looks at the ancestor
// processes (Linux /proc): a gemini process without -p/--prompt whose
// stdin is a terminal. Anything else, or no /proc, counts as headless, and
// an ask goes to warden's queue.
func GeminiInteractive() bool {
	pid := os.Getppid()
	for range 6 {
		if pid <= 1 {
			return false
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			return false
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if IsGeminiProcess(args) {
			for _, a := range args[1:] {
				if a == "-p" || a == "--prompt" || strings.HasPrefix(a, "--prompt=") {
					return false
				}
			}
			tty, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid))
			return err == nil && (strings.HasPrefix(tty, "/dev/pts/") || strings.HasPrefix(tty, "/dev/tty"))
		}
		pid = ParentPID(pid)
	}
	return false
}

// HostInteractive reports whether the host (claude, gemini) that runs
// this process can show its own confirmation prompt for an ask. Codex and
// OpenCode never can.
func HostInteractive(host string) bool {
	switch host {
	case "gemini":
		return GeminiInteractive()
	case "claude":
		return ClaudeInteractive()
	}
	return false
}

// ClaudeInteractive reports whether the Claude Code that runs this process
// can prompt its user. Headless runs (claude -p, the SDKs) set
// CLAUDE_CODE_ENTRYPOINT to sdk-cli, sdk-ts or sdk-py and
// CLAUDE_CODE_SESSION_ATTENDED to 0 in the hook's environment; there an
// ask would be refused by Claude Code with nobody to answer it, so it goes
// to warden's queue like on the other headless hosts.
func ClaudeInteractive() bool {
	if strings.HasPrefix(os.Getenv("CLAUDE_CODE_ENTRYPOINT"), "sdk-") || os.Getenv("CLAUDE_CODE_SESSION_ATTENDED") == "0" {
		return false
	}
	return true
}

// IsGeminiProcess reports whether a command line is Gemini CLI's.
func IsGeminiProcess(args []string) bool {
	for _, a := range args[:min(len(args), 3)] {
		base := filepath.Base(a)
		if base == "gemini" || base == "gemini.js" || strings.Contains(a, "gemini-cli") {
			return true
		}
	}
	return false
}

// ParentPID returns a process's parent, or 0.
func ParentPID(pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...; comm may contain spaces and parentheses.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}
