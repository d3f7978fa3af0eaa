package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Codex (0.169) runs a project's hooks (.codex/hooks.json) only when the
// project is trusted (projects."DIR".trust_level = "trusted" in the user's
// config.toml) and each hook is trusted: the user's config.toml keeps,
// under hooks.state."KEY".trusted_hash, the hash of the hook as the user
// reviewed it, and a hook whose hash is missing or differs is skipped
// (interactive Codex offers a review; `codex exec` skips silently).
// `--dangerously-bypass-hook-trust` skips the check. Codex's app server
// (`codex app-server`, JSON-RPC on stdio) lists the hooks with their key,
// current hash and trust status (hooks/list) and writes the user's config
// (config/batchWrite): the same calls Codex's own review makes.

// HookEntry is one hook as Codex's app server lists it.
type HookEntry struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	Matcher     string `json:"matcher"`
	TimeoutSec  int    `json:"timeoutSec"`
	SourcePath  string `json:"sourcePath"`
	Source      string `json:"source"`
	Enabled     bool   `json:"enabled"`
	CurrentHash string `json:"currentHash"`
	// TrustStatus is trusted, untrusted, modified or managed.
	TrustStatus string `json:"trustStatus"`
}

// Runs reports whether Codex runs the hook.
func (h HookEntry) Runs() bool {
	return h.Enabled && (h.TrustStatus == "trusted" || h.TrustStatus == "managed")
}

// AppServer is a running `codex app-server`.
type AppServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int
	stderr strings.Builder
}

// StartAppServer starts `BIN app-server` in dir with the environment env
// (nil: this process's) and initialises it.
func StartAppServer(ctx context.Context, bin, dir string, env []string) (*AppServer, error) {
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Dir, cmd.Env = dir, env
	s := &AppServer{cmd: cmd}
	cmd.Stderr = &s.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.in, s.out = in, bufio.NewReaderSize(out, 1<<20)
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s app-server: %w", bin, err)
	}
	if err := s.call("initialize", map[string]any{"clientInfo": map[string]any{"name": "warden", "version": "1"}}, nil); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.send(map[string]any{"jsonrpc": "2.0", "method": "initialized"}); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the app server.
func (s *AppServer) Close() error {
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	return nil
}

func (s *AppServer) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = s.in.Write(append(b, '\n'))
	return err
}

// call sends a request and reads messages up to its response.
func (s *AppServer) call(method string, params, result any) error {
	s.nextID++
	id := s.nextID
	if err := s.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return fmt.Errorf("codex app-server %s: %w", method, err)
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("codex app-server %s: no answer (%v); its stderr: %s", method, err, lastLine(s.stderr.String()))
		}
		var msg struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.Method != "" || *msg.ID != id {
			continue // a notification, or a request warden does not serve
		}
		if msg.Error != nil {
			return fmt.Errorf("codex app-server %s: %s", method, msg.Error.Message)
		}
		if result == nil {
			return nil
		}
		return json.Unmarshal(msg.Result, result)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Hooks lists the hooks Codex finds for a project folder, with their trust.
func (s *AppServer) Hooks(project string) ([]HookEntry, error) {
	var res struct {
		Data []struct {
			Cwd    string      `json:"cwd"`
			Hooks  []HookEntry `json:"hooks"`
			Errors []struct {
				Message string `json:"message"`
				Path    string `json:"path"`
			} `json:"errors"`
		} `json:"data"`
	}
	if err := s.call("hooks/list", map[string]any{"cwds": []string{project}}, &res); err != nil {
		return nil, err
	}
	var out []HookEntry
	for _, d := range res.Data {
		for _, e := range d.Errors {
			return nil, fmt.Errorf("codex: %s: %s", e.Path, e.Message)
		}
		out = append(out, d.Hooks...)
	}
	return out, nil
}

// TrustProject marks a project folder trusted in the user's config.toml,
// so that Codex loads its .codex/ folder (hooks included).
func (s *AppServer) TrustProject(project string) error {
	return s.call("config/batchWrite", map[string]any{"edits": []any{map[string]any{
		"keyPath": "projects", "mergeStrategy": "upsert",
		"value": map[string]any{project: map[string]any{"trust_level": "trusted"}},
	}}}, nil)
}

// TrustHooks records the hooks' current hashes as trusted in the user's
// config.toml, as Codex's own hook review does.
func (s *AppServer) TrustHooks(hooks []HookEntry) error {
	if len(hooks) == 0 {
		return nil
	}
	state := map[string]any{}
	for _, h := range hooks {
		if h.Key == "" || h.CurrentHash == "" {
			return errors.New("codex app-server listed a hook without a key or hash")
		}
		state[h.Key] = map[string]any{"trusted_hash": h.CurrentHash}
	}
	return s.call("config/batchWrite", map[string]any{"edits": []any{map[string]any{
		"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state,
	}}}, nil)
}
