package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// maxOutput bounds the command output kept for a warning.
const maxOutput = 2048

// tailBuffer keeps the last maxOutput bytes written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > maxOutput {
		t.b = append(t.b[:0], t.b[len(t.b)-maxOutput:]...)
	}
	return len(p), nil
}

// maxResult bounds the standard output kept for ParseResult; a command that
// prints more has its result cut, which ParseResult refuses.
const maxResult = 1 << 20

// headBuffer keeps the first maxResult bytes written to it.
type headBuffer struct{ b []byte }

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := maxResult - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

// runCommand runs an on-complete command in dir with c as JSON on stdin and
// returns its standard output. When ctx ends the command and its process
// group are killed.
func runCommand(ctx context.Context, dir string, argv []string, c Completion) ([]byte, error) {
	in, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var out tailBuffer
	var stdout headBuffer
	cmd.Stdout = io.MultiWriter(&out, &stdout)
	cmd.Stderr = &out
	cmd.WaitDelay = time.Second
	setProcessGroup(cmd)
	err = cmd.Run()
	if err == nil {
		return stdout.b, nil
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	msg := strings.TrimSpace(string(out.b))
	if msg != "" {
		return nil, fmt.Errorf("command %s: %w: output: %s", argv[0], err, msg)
	}
	return nil, fmt.Errorf("command %s: %w", argv[0], err)
}
