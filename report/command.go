package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// runCommand runs an on-complete command in dir with c as JSON on stdin. When
// ctx ends the command and its process group are killed.
func runCommand(ctx context.Context, dir string, argv []string, c Completion) error {
	in, err := json.Marshal(c)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var out tailBuffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = time.Second
	setProcessGroup(cmd)
	err = cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	msg := strings.TrimSpace(string(out.b))
	if msg != "" {
		return fmt.Errorf("command %s: %w: output: %s", argv[0], err, msg)
	}
	return fmt.Errorf("command %s: %w", argv[0], err)
}
