// Command warden-sandbox runs a program confined by a sandbox spec warden
// wrote (warden-sandbox --spec FILE -- PROGRAM ARGS...), and is the
// confining child `warden sandbox` starts when it lies next to warden. It
// links only the confinement (package sandbox/confine), so it starts in a
// fraction of warden's time. See docs/sandbox.md.
//
// It starts twice per confined command (the runner, then itself as the
// confining child), so it skips what the Go runtime does at start that it
// does not need: reading the cgroup's CPU limit to size GOMAXPROCS (the
// child runs with GOMAXPROCS=1, the runner waits) and watching it.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"os"

	"github.com/warden-run/warden/sandbox/confine"
)

func main() { os.Exit(confine.Main(os.Args[1:], os.Stderr)) }
