// Command warden-hook is the hook command agent hosts run for every event:
// `warden-hook claude|codex|gemini|opencode` answers exactly like
// `warden hook`, but through a resident `warden hookd` that keeps the
// compiled policy and the store open, so that a call costs little more
// than starting this small program. With no hookd running it starts one
// and runs `warden hook` itself; it never fails open.
package main

import (
	"os"

	"github.com/warden-run/warden/internal/hookd"
)

func main() {
	c := &hookd.Client{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	os.Exit(c.Run(os.Args[1:]))
}
