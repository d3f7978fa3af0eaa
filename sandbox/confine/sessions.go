package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sessionSockets are the folders of the sockets of the user's terminal
// multiplexers and editor servers, found from the environment of the
// process that runs the command (the agent's shell, which may differ from
// the hook's): a tmux or screen server, or an Emacs server, started
// outside runs whatever a client asks (`tmux new-session -d CMD`,
// `screen -X exec`, `emacsclient --eval`), outside the sandbox. Only the
// ones that exist are returned; they are hidden like private paths, which
// also keeps a confined command from starting such a server where
// outside clients would find it.
func sessionSockets(getenv func(string) string, uid int) []string {
	var dirs []string
	tmuxBase := []string{"/tmp"}
	if d := getenv("TMUX_TMPDIR"); d != "" {
		tmuxBase = append(tmuxBase, d)
	}
	for _, b := range tmuxBase {
		dirs = append(dirs, filepath.Join(b, fmt.Sprintf("tmux-%d", uid)))
	}
	// $TMUX is "SOCKET,PID,SESSION": the server this shell runs in.
	if t := getenv("TMUX"); t != "" {
		if sock, _, _ := strings.Cut(t, ","); filepath.IsAbs(sock) {
			dirs = append(dirs, filepath.Dir(sock))
		}
	}
	if d := getenv("SCREENDIR"); d != "" {
		dirs = append(dirs, d)
	}
	if u := getenv("USER"); u != "" {
		dirs = append(dirs, "/run/screen/S-"+u, "/var/run/screen/S-"+u)
	}
	if h := getenv("HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, ".screen"))
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		dirs = append(dirs, filepath.Join(d, "emacs"))
	}
	dirs = append(dirs, fmt.Sprintf("/run/user/%d/emacs", uid), fmt.Sprintf("/tmp/emacs%d", uid))
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if _, err := os.Lstat(d); err != nil || slices.Contains(out, d) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// withSessionSockets returns s with the session sockets of this process's
// environment hidden and the variables that name them unset.
func (s Spec) withSessionSockets() Spec {
	socks := sessionSockets(os.Getenv, os.Getuid())
	if len(socks) == 0 {
		return s
	}
	s.Hidden = slices.Clone(s.Hidden)
	for _, d := range socks {
		if !slices.Contains(s.Hidden, d) {
			s.Hidden = append(s.Hidden, d)
		}
	}
	s.UnsetEnv = append(slices.Clone(s.UnsetEnv), "TMUX", "TMUX_PANE", "STY")
	return s
}
