// Command warden is a governance engine for AI agents: it decides every tool
// call an agent makes against one policy file.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/warden-run/warden/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
