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
	// Multiplexers run the applet named by their first operand.
	"busybox": {},
	"toybox":  {},
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
func (a *Analysis) unwrap(prog string, args, env []string, depth int, pipe, stage int) {
	switch prog {
	case "eval":
		if s, ok := joinLit(args[1:]); ok {
			a.line(s, depth+1, "eval")
		}
		return
	case "find":
		a.findExec(args, depth, pipe, stage)
		return
	case "trap":
		// trap 'COMMANDS' SIGNAL...: the commands run later, in this shell.
		ops := args[1:]
		for len(ops) > 0 && strings.HasPrefix(ops[0], "-") && !IsDyn(ops[0]) {
			if ops[0] == "--" {
				ops = ops[1:]
				break
			}
			ops = ops[1:]
		}
		if len(ops) > 1 && !IsDyn(ops[0]) {
			a.line(ops[0], depth+1, "trap")
		}
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
	if prog == "command" {
		for _, x := range args[1:] {
			if x == "-v" || x == "-V" {
				return // command -v NAME only looks NAME up
			}
		}
	}
	rest, split := skipOpts(args[1:], w)
	if split != "" && !IsDyn(split) { // env -S "string"
		a.line(split, depth+1, prog+" -S")
		return
	}
	if w.assigns || prog == "sudo" {
		// env NAME=VALUE cmd: the assignments are the command's own.
		for len(rest) > 0 && isAssign(rest[0]) {
			env = append(env[:len(env):len(env)], rest[0])
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
		a.add(env, rest, depth, prog, pipe, stage)
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
				if args[i] == "-execdir" || args[i] == "-okdir" {
					// The command runs in the folder of each file found,
					// as after a cd there.
					a.cdSeen = true
				}
				a.add(nil, cmd, depth, "find "+args[i], pipe, stage)
			}
			i = j
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

// addWrite records a written path; writes to the null device and the
// standard streams are not writes.
func (a *Analysis) addWrite(w Write) {
	if devExempt(w.Path) {
		return
	}
	a.Writes = append(a.Writes, w)
}

// devExempt reports whether a path is the null device or a standard
// stream, written exactly so: /dev/fd/../../etc/x is not.
func devExempt(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero":
		return true
	}
	if rest, ok := strings.CutPrefix(p, "/dev/fd/"); ok {
		return isFD(rest) && rest != "-"
	}
	return false
}
