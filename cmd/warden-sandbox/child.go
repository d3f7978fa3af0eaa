package main

import (
	"os"
	"runtime"

	"github.com/warden-run/warden/sandbox/confine"
)

// init runs the confining child (`warden-sandbox sandbox CHILDARG --
// PROGRAM...`, how warden starts it), and a run under unshare, before main: package initialisation
// runs on the main thread, locked to it, with fewer runtime threads
// started yet; execve then has fewer threads to stop (confine.ChildMainInit).
func init() {
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && confine.IsChild(os.Args[2:]) {
		os.Exit(confine.ChildMainInit(os.Args[2:]))
	}
	// A run under unshare (warden-sandbox --spec FILE --inside): this
	// process confines itself and executes the program.
	if confine.IsInside(os.Args[1:]) {
		os.Exit(confine.MainInit(os.Args[1:], os.Stderr))
	}
	// The runner reads a small file, starts the child and waits: one
	// processor is enough, and fewer runtime threads are started and
	// woken (each a context switch on a loaded machine).
	runtime.GOMAXPROCS(1)
}
