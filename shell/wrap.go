package shell

import "strings"

// shells run the string after -c as a command line.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
	"mksh": true, "ash": true, "busybox": false, "fish": true}

// wrapper describes a program that runs another command given in its
// arguments: the options that take a value, and how many leading operands
// are not the command (timeout's duration, chroot's folder).
type wrapper struct {
	valueOpts string // short options taking a value, e.g. "ugCDhprtTU"
	longValue map[string]bool
	skipOps   int
	// assigns: NAME=VALUE words before the command are skipped (env).
	assigns bool
}

var wrappers = map[string]wrapper{
	"sudo":     {valueOpts: "ugCDhprtTU", longValue: set("user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "other-user", "command-timeout")},
	"doas":     {valueOpts: "uC"},
	"env":      {valueOpts: "uCS", longValue: set("unset", "chdir", "split-string"), assigns: true},
	"command":  {},
	"builtin":  {},
	"exec":     {valueOpts: "a"},
	"nice":     {valueOpts: "n", longValue: set("adjustment")},
	"nohup":    {},
	"time":     {valueOpts: "fo", longValue: set("format", "output")},
	"timeout":  {valueOpts: "sk", longValue: set("signal", "kill-after"), skipOps: 1},
	"stdbuf":   {valueOpts: "ioe", longValue: set("input", "output", "error")},
	"ionice":   {valueOpts: "cnp", longValue: set("class", "classdata", "pid")},
	"chrt":     {skipOps: 1},
	"taskset":  {skipOps: 1},
	"setsid":   {},
	"unbuffer": {},
	"chroot":   {longValue: set("userspec", "groups"), skipOps: 1},
	"runuser":  {valueOpts: "ugG", longValue: set("user", "group", "supp-group")},
	"flock":    {valueOpts: "wEc", longValue: set("timeout", "conflict-exit-code", "command"), skipOps: 1},
	"xvfb-run": {valueOpts: "nselpf", longValue: set("server-num", "error-file", "auth-file", "xauth-protocol", "server-args")},
	"strace":   {valueOpts: "eoOpPsSuEIXb"},
	"watch":    {valueOpts: "nd", longValue: set("interval", "differences")},
	"xargs":    {valueOpts: "aEeIiLlnPsd", longValue: set("arg-file", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "delimiter", "process-slot-var")},
}

func set(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

// unwrap records the commands that args (a command whose program is prog)
// runs in turn: the command after a wrapper, the -c string of a shell, the
// -exec command of find, the string given to eval.
func (a *Analysis) unwrap(prog string, args []string, depth int, pipe, stage int) {
	switch prog {
	case "eval":
		if s, ok := joinLit(args[1:]); ok {
			a.line(s, depth+1, "eval")
		}
		return
	case "find":
		a.findExec(args, depth, pipe, stage)
		return
	case "su":
		// su [options] [user] -c "command"
		for i := 1; i < len(args)-1; i++ {
			if args[i] == "-c" || args[i] == "--command" {
				if !IsDyn(args[i+1]) {
					a.line(args[i+1], depth+1, "su -c")
				}
			}
		}
		return
	}
	if shells[prog] {
		a.shellC(args, depth)
		return
	}
	w, ok := wrappers[prog]
	if !ok {
		return
	}
	rest, split := skipOpts(args[1:], w)
	if split != "" && !IsDyn(split) { // env -S "string"
		a.line(split, depth+1, prog+" -S")
		return
	}
	if w.assigns {
		for len(rest) > 0 && isAssign(rest[0]) {
			rest = rest[1:]
		}
	}
	if len(rest) > w.skipOps {
		rest = rest[w.skipOps:]
	} else {
		rest = nil
	}
	switch prog {
	case "flock":
		// flock FILE -c "command" was handled by -c as a value option;
		// look for it explicitly.
		for i := 1; i < len(args)-1; i++ {
			if args[i] == "-c" || args[i] == "--command" {
				a.line(args[i+1], depth+1, "flock -c")
				return
			}
		}
	case "watch":
		if s, ok := joinLit(rest); ok {
			a.line(s, depth+1, "watch")
		}
		return
	case "xargs":
		if len(rest) == 0 {
			return // xargs runs echo
		}
		// The command gets operands read from standard input.
		cmd := make([]string, len(rest), len(rest)+1)
		copy(cmd, rest)
		rest = append(cmd, Dyn+"(xargs input)")
	}
	if len(rest) > 0 {
		a.add(rest, depth, prog, pipe, stage)
	}
}

// skipOpts skips a wrapper's options and returns the words after them. For
// env -S it returns the split string instead.
func skipOpts(args []string, w wrapper) (rest []string, split string) {
	for i := 0; i < len(args); i++ {
		s := args[i]
		if s == "--" {
			return args[i+1:], ""
		}
		if len(s) < 2 || s[0] != '-' || IsDyn(s) {
			return args[i:], ""
		}
		if strings.HasPrefix(s, "--") {
			name, _, hasVal := strings.Cut(s[2:], "=")
			if w.longValue[name] && !hasVal {
				i++
				if name == "split-string" && i < len(args) {
					return nil, args[i]
				}
			} else if name == "split-string" && hasVal {
				_, v, _ := strings.Cut(s, "=")
				return nil, v
			}
			continue
		}
		// A cluster of short options; one taking a value ends it, and the
		// value is either the rest of the cluster or the next word.
		for j := 1; j < len(s); j++ {
			if strings.IndexByte(w.valueOpts, s[j]) >= 0 {
				if j == len(s)-1 {
					i++
					if s[j] == 'S' && i < len(args) {
						return nil, args[i]
					}
				} else if s[j] == 'S' {
					return nil, s[j+1:]
				}
				break
			}
		}
	}
	return nil, ""
}

// shellC handles sh -c 'string' and the like: the first operand after an
// option cluster containing c is a command line.
func (a *Analysis) shellC(args []string, depth int) {
	for i := 1; i < len(args); i++ {
		s := args[i]
		if s == "--" || len(s) < 2 || s[0] != '-' || IsDyn(s) {
			return
		}
		if strings.HasPrefix(s, "--") {
			continue
		}
		if strings.IndexByte(s, 'c') >= 0 {
			// The command string is the first non-option word after.
			for j := i + 1; j < len(args); j++ {
				if len(args[j]) > 1 && args[j][0] == '-' && !IsDyn(args[j]) {
					continue
				}
				if !IsDyn(args[j]) {
					a.line(args[j], depth+1, args[0]+" -c")
				} else {
					// sh -c "$x": the program is computed.
					a.Commands = append(a.Commands, Command{Args: args[j : j+1 : j+1], Prog: args[j], Dynamic: true, Via: base(args[0]) + " -c", Pipe: -1})
				}
				return
			}
			return
		}
	}
}

// findExec records the commands of find's -exec, -execdir, -ok and -okdir
// actions (up to ";" or "+"), and find -delete as the removal it is.
func (a *Analysis) findExec(args []string, depth int, pipe, stage int) {
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			if j > i+1 {
				// {} stands for each file found: unknown here.
				cmd := make([]string, 0, j-i)
				for _, w := range args[i+1 : j] {
					if strings.Contains(w, "{}") {
						w = Dyn + w
					}
					cmd = append(cmd, w)
				}
				a.add(cmd, depth, "find "+args[i], pipe, stage)
			}
			i = j
		case "-delete":
			// The starting points are removed recursively.
			for _, p := range args[1:] {
				if strings.HasPrefix(p, "-") || p == "!" || p == "(" {
					break
				}
				a.addWrite(Write{Path: p, Op: "find -delete", Delete: true})
			}
		}
	}
}

// joinLit joins literal words with spaces (for eval and watch); it fails if
// any word is computed.
func joinLit(ws []string) (string, bool) {
	for _, w := range ws {
		if IsDyn(w) {
			return "", false
		}
	}
	return strings.Join(ws, " "), len(ws) > 0
}

// writes records the paths a program writes through its operands.
func (a *Analysis) writes(prog string, args []string) {
	switch prog {
	case "rm", "rmdir", "unlink", "shred", "srm":
		for _, p := range operands(args, "") {
			a.addWrite(Write{Path: p, Op: prog, Delete: true})
		}
	case "touch", "mkdir", "truncate", "tee", "mkfifo":
		for _, p := range operands(args, valueOptsFor(prog)) {
			a.addWrite(Write{Path: p, Op: prog})
		}
	case "mv":
		ops := operands(args, "tS")
		for i, p := range ops {
			a.addWrite(Write{Path: p, Op: prog, Delete: i < len(ops)-1})
		}
		a.targetDir(args, prog)
	case "cp", "install", "ln", "rsync", "scp":
		ops := operands(args, "tSmogT")
		if len(ops) > 1 {
			a.addWrite(Write{Path: ops[len(ops)-1], Op: prog})
		}
		a.targetDir(args, prog)
	case "chmod", "chown", "chgrp":
		ops := operands(args, "")
		if len(ops) > 1 {
			for _, p := range ops[1:] {
				a.addWrite(Write{Path: p, Op: prog})
			}
		}
	case "sed":
		inPlace := false
		script := true // the first operand is the script unless -e/-f
		for _, w := range args {
			if w == "-i" || strings.HasPrefix(w, "-i") && !strings.HasPrefix(w, "--") || strings.HasPrefix(w, "--in-place") {
				inPlace = true
			}
			if w == "-e" || w == "-f" || strings.HasPrefix(w, "--expression") || strings.HasPrefix(w, "--file") {
				script = false
			}
		}
		if inPlace {
			ops := operands(args, "ef")
			if script && len(ops) > 0 {
				ops = ops[1:]
			}
			for _, p := range ops {
				a.addWrite(Write{Path: p, Op: "sed -i"})
			}
		}
	case "dd":
		for _, w := range args {
			if strings.HasPrefix(w, "of=") {
				a.addWrite(Write{Path: w[3:], Op: "dd"})
			}
		}
	case "curl", "wget":
		for i := 0; i < len(args)-1; i++ {
			if (prog == "curl" && (args[i] == "-o" || args[i] == "--output")) || (prog == "wget" && (args[i] == "-O" || args[i] == "--output-document")) {
				a.addWrite(Write{Path: args[i+1], Op: prog})
			}
		}
	}
}

func valueOptsFor(prog string) string {
	switch prog {
	case "truncate":
		return "sr"
	case "touch":
		return "drt"
	case "mkdir", "mkfifo":
		return "mZ"
	}
	return ""
}

// targetDir records the folder of -t DIR / --target-directory=DIR.
func (a *Analysis) targetDir(args []string, prog string) {
	for i, w := range args {
		if w == "-t" && i+1 < len(args) {
			a.addWrite(Write{Path: args[i+1], Op: prog})
		} else if v, ok := strings.CutPrefix(w, "--target-directory="); ok {
			a.addWrite(Write{Path: v, Op: prog})
		}
	}
}

// operands returns the non-option words of args. valueOpts lists the short
// options that take the next word as their value. After "--" every word is
// an operand.
func operands(args []string, valueOpts string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			out = append(out, args[i+1:]...)
			break
		}
		if len(w) > 1 && w[0] == '-' && !IsDyn(w) {
			if len(w) == 2 && strings.IndexByte(valueOpts, w[1]) >= 0 {
				i++
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// addWrite records a written path; writes to the null device and the
// standard streams are not writes.
func (a *Analysis) addWrite(w Write) {
	switch w.Path {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero":
		return
	}
	if strings.HasPrefix(w.Path, "/dev/fd/") {
		return
	}
	a.Writes = append(a.Writes, w)
}
