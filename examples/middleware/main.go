// Command middleware is a Go program with its own agent loop governed by
// warden: every tool call goes through client.Wrap before the program's
// executor runs it.
//
//	go run ./examples/middleware
//
// It decides three calls against examples/middleware/warden.yaml (state and
// audit in examples/middleware/.warden/) and prints what the executor did
// and what the model would be told.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/client"
)

func main() {
	ctx := context.Background()
	// The policy beside this file; under -trimpath the source path is not
	// a folder, and the example runs from the repository's folder.
	dir := filepath.Join("examples", "middleware")
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir = filepath.Dir(file)
	}
	c, err := client.Open(ctx, client.Options{
		Policy:  filepath.Join(dir, "warden.yaml"),
		Session: "middleware-demo",
		Host:    "middleware-example",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.Close()

	// The program's own tools.
	executor := func(ctx context.Context, call warden.ToolCall) (any, error) {
		return fmt.Sprintf("%s done", call.Tool), nil
	}
	exec := c.Wrap(executor)

	calls := []warden.ToolCall{
		{Tool: "mail.send", Args: map[string]any{"to": "bob@example.com", "body": "The report is ready."}},
		{Tool: "mail.batch_delete", Args: map[string]any{"ids": []any{"17", "18", "19"}}},
		{Tool: "mail.send", Args: map[string]any{"to": "eve@elsewhere.org", "body": "Our numbers."}},
	}
	for _, call := range calls {
		out, err := exec(ctx, call)
		var de *client.DecisionError
		switch {
		case errors.As(err, &de):
			fmt.Printf("%s: %s\n  the model is told: %s\n", call.Tool, de.Decision.Decision, de.Error())
		case err != nil:
			fmt.Printf("%s: error: %v\n", call.Tool, err)
		default:
			fmt.Printf("%s: allow: %v\n", call.Tool, out)
		}
	}
}
