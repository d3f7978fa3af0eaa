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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/wire"
)

// The protocol: package wire holds the request and the answer.
const (
	// Version is the protocol version (wire.Version).
	Version = wire.Version
	OpHook  = wire.OpHook
	OpPing  = wire.OpPing
	OpStop  = wire.OpStop
)

// Request is one message from the client to hookd (wire.HookRequest).
type Request = wire.HookRequest

// Response is hookd's answer (wire.HookResponse).
type Response = wire.HookResponse

// CallIDEnv passes a call's id to `warden hook` (see Request.CallID).
const CallIDEnv = "WARDEN_HOOK_CALL_ID"

// MaxMessage bounds a request or response on the socket: the largest
// input, base64-encoded, with room to spare.
const MaxMessage = MaxInput/3*4 + 1<<20

// MaxInput bounds the hook JSON a host may send (the same as `warden hook`).
const MaxInput = warden.MaxInput

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
