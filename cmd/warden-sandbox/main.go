// Command warden-sandbox runs a program confined by a sandbox spec warden
// wrote (warden-sandbox --spec FILE -- PROGRAM ARGS...), and is the
// confining child `warden sandbox` starts when it lies next to warden. It
// links only the confinement (package sandbox/confine), so it starts in a
// fraction of warden's time. See docs/sandbox.md.
package main

import (
	"os"

	"github.com/warden-run/warden/sandbox/confine"
)

func main() { os.Exit(confine.Main(os.Args[1:], os.Stderr)) }
