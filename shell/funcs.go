package shell

import (
	"mvdan.cc/sh/v3/syntax"

	"github.com/warden-run/warden/shell/progs"
)

// A function the line defines and never calls runs nothing now; the
// engine judges its body only for what would be denied (docs/policy.md,
// "Functions"): a shell that persists between calls may run it later.

// funcStart is where a function's body began: the counts of commands,
// writes and reads before it.
type funcStart struct{ cmds, writes, reads int }

func (w *walker) funcBegin() {
	w.funcs = append(w.funcs, funcStart{len(w.a.Commands), len(w.a.Writes), len(w.a.Reads)})
}

// funcEnd names fd's function in what its body added; an enclosing
// function, ending later, names it again (the outermost one wins).
func (w *walker) funcEnd(fd *syntax.FuncDecl) {
	if len(w.funcs) == 0 {
		return
	}
	b := w.funcs[len(w.funcs)-1]
	w.funcs = w.funcs[:len(w.funcs)-1]
	name := ""
	if fd.Name != nil {
		name = fd.Name.Value
	}
	if name == "" {
		name = "(function)"
	}
	for i := b.cmds; i < len(w.a.Commands); i++ {
		w.a.Commands[i].Func = name
	}
	for i := b.writes; i < len(w.a.Writes); i++ {
		w.a.Writes[i].Func = name
	}
	for i := b.reads; i < len(w.a.Reads); i++ {
		w.a.Reads[i].Func = name
	}
}

// Uncalled returns the functions whose bodies the line defines and does
// not run: no command outside a function's body names it, and no
// computed command (which could) runs outside it. A function named after
// a program or builtin warden knows is left out: it replaces that
// program for the rest of a shell that persists (ls() { ...; }), so its
// body is judged as if run. Nil when every body may run.
func (a *Analysis) Uncalled() map[string]bool {
	var out map[string]bool
	for i := range a.Commands {
		f := a.Commands[i].Func
		if f == "" || out[f] {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[f] = !Shadows(f)
	}
	if out == nil {
		return nil // no function defined: no walk of an empty map below
	}
	for i := range a.Commands {
		c := &a.Commands[i]
		for f, ok := range out {
			if ok && c.Func != f && (c.Prog == f || c.Dynamic || len(c.Args) > 0 && base(c.Args[0]) == f) {
				out[f] = false
			}
		}
	}
	for f, ok := range out {
		if !ok {
			delete(out, f)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Shadows reports whether a function so named would replace a program
// or builtin warden knows (a table, a wrapper, a shell, a builtin).
func Shadows(name string) bool {
	if progs.Lookup(name) != nil || free[name] || progKinds[name] != 0 || wrappers[name] != nil {
		return true
	}
	if _, ok := shells[name]; ok {
		return true
	}
	return builtins[name]
}

// builtins are bash's builtins and keywords a function could be named
// after.
var builtins = map[string]bool{"alias": true, "bg": true, "bind": true, "break": true, "builtin": true, "caller": true,
	"cd": true, "command": true, "compgen": true, "complete": true, "compopt": true, "continue": true, "declare": true,
	"dirs": true, "disown": true, "echo": true, "enable": true, "eval": true, "exec": true, "exit": true, "export": true,
	"false": true, "fc": true, "fg": true, "getopts": true, "hash": true, "help": true, "history": true, "jobs": true,
	"kill": true, "let": true, "local": true, "logout": true, "mapfile": true, "popd": true, "printf": true, "pushd": true,
	"pwd": true, "read": true, "readarray": true, "readonly": true, "return": true, "set": true, "shift": true,
	"shopt": true, "source": true, ".": true, "suspend": true, "test": true, "[": true, "times": true, "trap": true,
	"true": true, "type": true, "typeset": true, "ulimit": true, "umask": true, "unalias": true, "unset": true,
	"wait": true, "command_not_found_handle": true}
