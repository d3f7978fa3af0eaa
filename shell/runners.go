package shell

import "strings"

// Programs that run a command line or a command they are given in an
// option or an operand (issue 31, class 7). Each is read from its manual
// on Debian 12 (util-linux 2.38.1 script, tmux 3.3a, hyperfine 1.16,
// nix 2.18 nix-shell, shadow 4.13 sg, expect 5.45, gdb 13, perf 6.1,
// direnv 2.32, zip 3.0). What warden cannot read of them is a computed
// command.
var (
	scriptOpts = newWrapper("-a|--append -c=|--command= -e|--return -f|--flush -q|--quiet -t[=]|--timing[=] -T=|--log-timing= -B=|--log-io= -I=|--log-in= "+
		"-O=|--log-out= -m=|--logging-format= -E=|--echo= -o=|--output-limit= --force -h|--help -V|--version", true, true)
	hyperfineOpts = newWrapper("-w=|--warmup= -m=|--min-runs= -M=|--max-runs= -r=|--runs= -s=|--setup= -p=|--prepare= -c=|--cleanup= --conclude= "+
		"-P=|--parameter-scan= -D=|--parameter-step-size= -L=|--parameter-list= --style= -S=|--shell= -N -i|--ignore-failure --sort= -u=|--time-unit= "+
		"--export-asciidoc= --export-csv= --export-json= --export-markdown= --export-orgmode= --show-output --output= --input= -n=|--command-name= -h|--help -V|--version", false, true)
	perfStatOpts = newWrapper("-e=|--event= -a|--all-cpus -p=|--pid= -t=|--tid= -r=|--repeat= -o=|--output= --append -x=|--field-separator= -I=|--interval-print= "+
		"-d|--detailed -v|--verbose -B|--big-num -n|--null -A|--no-aggr -C=|--cpu= -G=|--cgroup= -c|--scale -g|--call-graph -F=|--freq= -q|--quiet -s|--stat", false, false)
	tmuxNewOpts = newWrapper("-A -d -D -E -P -X -k -a -b -h -v -Z -I -c= -e= -f= -F= -n= -s= -t= -x= -y= -l= -p=", false, false)
)

// The tmux commands that run no command line.
var tmuxQuiet = map[string]bool{"ls": true, "list-sessions": true, "list-windows": true, "lsw": true, "list-panes": true, "lsp": true,
	"attach": true, "attach-session": true, "a": true, "at": true, "kill-session": true, "kill-server": true, "kill-window": true, "killw": true,
	"kill-pane": true, "killp": true, "has-session": true, "has": true, "display-message": true, "display": true, "capture-pane": true,
	"capturep": true, "select-window": true, "selectw": true, "select-pane": true, "selectp": true, "detach": true, "detach-client": true,
	"list-clients": true, "lsc": true, "rename-session": true, "rename": true, "rename-window": true, "renamew": true}

// runsLines records what the programs above run.
func (a *Analysis) runsLines(prog string, args, env []string, depth, pipe, stage int) {
	line := func(s, via string) {
		if IsDyn(s) {
			a.partial([]string{s}, depth, via)
			return
		}
		a.line(s, depth+1, via)
	}
	switch prog {
	case "script":
		rest, opts, unsure := skipOpts(args[1:], scriptOpts)
		if unsure {
			a.computed("(the command of script, whose options warden cannot read)", prog)
		}
		for _, o := range opts {
			switch o.name {
			case "-T", "-B", "-I", "-O":
				a.addWrite(Write{Path: o.val, Op: "script " + o.name})
			case "-t":
				if o.hasVal {
					a.addWrite(Write{Path: o.val, Op: "script -t"})
				}
			}
		}
		if len(rest) > 0 {
			a.addWrite(Write{Path: rest[0], Op: "script"}) // the typescript
		}
		if cmd, _, ok := given(opts, "-c"); ok {
			line(cmd, "script -c")
			return
		}
		a.computed("(the shell script starts)", prog)
	case "tmux":
		i := 1
		for ; i < len(args) && strings.HasPrefix(args[i], "-") && !IsDyn(args[i]); i++ {
			switch args[i] {
			case "-f", "-L", "-S", "-T":
				i++
			case "-c":
				if i+1 < len(args) {
					line(args[i+1], "tmux -c")
				}
				return
			default:
				if strings.Trim(args[i][1:], "2CDlNuvV") != "" {
					a.computed("(the command of tmux, whose options warden cannot read)", prog)
					return
				}
			}
		}
		if i >= len(args) || tmuxQuiet[args[i]] {
			return
		}
		switch args[i] {
		case "new", "new-session", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp", "respawn-window", "respawnw":
			rest, opts, unsure := skipOpts(args[i+1:], tmuxNewOpts)
			if _, _, env := given(opts, "-e"); unsure || env {
				a.computed("(the command of tmux "+args[i]+", whose options warden cannot read)", prog)
				return
			}
			if s, ok := joinLit(rest); ok {
				a.line(s, depth+1, "tmux "+args[i])
			} else if len(rest) > 0 {
				a.partial(rest, depth, "tmux "+args[i])
			}
		default:
			a.computed("(the tmux command "+Display(args[i])+", which can run commands)", prog)
		}
	case "hyperfine":
		rest, opts, unsure := skipOpts(args[1:], hyperfineOpts)
		if unsure {
			a.computed("(the commands of hyperfine, whose options warden cannot read)", prog)
		}
		for _, o := range opts {
			switch o.name {
			case "-s", "-p", "-c", "--conclude":
				line(o.val, "hyperfine "+o.name)
			case "-S":
				if o.val != "none" && !shells[base(o.val)] {
					a.computed("(the shell hyperfine -S runs)", prog)
				}
			case "--export-asciidoc", "--export-csv", "--export-json", "--export-markdown", "--export-orgmode":
				a.addWrite(Write{Path: o.val, Op: "hyperfine " + o.name})
			case "--output":
				if o.val != "null" && o.val != "pipe" && o.val != "inherit" {
					a.addWrite(Write{Path: o.val, Op: "hyperfine --output"})
				}
			}
		}
		for _, c := range rest {
			line(c, "hyperfine")
		}
	case "nix-shell", "sg", "expect", "gdb":
		a.runsText(prog, args, depth)
	case "perf":
		if len(args) < 2 {
			return
		}
		switch args[1] {
		case "stat", "record", "trace":
			rest, opts, unsure := skipOpts(args[2:], perfStatOpts)
			if unsure {
				a.computed("(the command of perf "+args[1]+", whose options warden cannot read)", prog)
				return
			}
			if o, has, ok := given(opts, "-o"); ok && has {
				a.addWrite(Write{Path: o, Op: "perf -o"})
			} else if args[1] == "record" {
				a.addWrite(Write{Path: "perf.data", Op: "perf record"})
			}
			if len(rest) > 0 {
				a.add(env, rest, depth, "perf "+args[1], pipe, stage)
			}
		}
	case "direnv":
		// direnv exec DIR CMD: DIR's .envrc is loaded, then CMD runs.
		if len(args) > 1 && args[1] == "exec" {
			if len(args) < 3 {
				return
			}
			a.Dirs = append(a.Dirs, args[2])
			a.cdSeen, a.cdOther = true, true
			if len(args) > 3 {
				a.add(env, args[3:], depth, "direnv exec", pipe, stage)
			}
		}
	case "zip":
		// zip -TT CMD (--unzip-command CMD) tests the archive with CMD,
		// run by a shell.
		for i := 1; i < len(args); i++ {
			w := args[i]
			switch {
			case w == "-TT" || w == "--unzip-command":
				if i+1 < len(args) {
					line(args[i+1], "zip -TT")
					i++
				}
			case strings.HasPrefix(w, "--unzip-command="):
				line(strings.TrimPrefix(w, "--unzip-command="), "zip -TT")
			case strings.HasPrefix(w, "-TT") && len(w) > 3:
				line(w[3:], "zip -TT")
			}
		}
	}
}

// gdbQuiet are gdb commands that only inspect the program it debugs.
var gdbQuiet = map[string]bool{"bt": true, "backtrace": true, "where": true, "info": true, "print": true, "p": true,
	"list": true, "l": true, "break": true, "b": true, "continue": true, "c": true, "next": true, "n": true,
	"step": true, "s": true, "quit": true, "q": true, "frame": true, "f": true, "thread": true, "up": true, "down": true,
	"x": true, "disassemble": true, "finish": true, "run": true, "r": true, "set": false}

// runsText reads nix-shell --run, sg GROUP COMMAND, expect -c and gdb -ex.
func (a *Analysis) runsText(prog string, args []string, depth int) {
	switch prog {
	case "nix-shell":
		for i := 1; i+1 < len(args); i++ {
			if args[i] == "--run" || args[i] == "--command" {
				if IsDyn(args[i+1]) {
					a.partial(args[i+1:i+2], depth, "nix-shell --run")
				} else {
					a.line(args[i+1], depth+1, "nix-shell --run")
				}
				return
			}
		}
		a.computed("(the shell nix-shell starts, with the hooks of its expression)", prog)
	case "sg":
		// sg [-] GROUP [-c] COMMAND: run by /bin/sh -c.
		ops := args[1:]
		if len(ops) > 0 && ops[0] == "-" {
			ops = ops[1:]
		}
		if len(ops) < 2 {
			a.computed("(the shell sg starts)", prog)
			return
		}
		ops = ops[1:]
		if ops[0] == "-c" {
			ops = ops[1:]
		}
		if s, ok := joinLit(ops); ok {
			a.line(s, depth+1, "sg")
		} else if len(ops) > 0 {
			a.partial(ops, depth, "sg")
		}
	case "expect":
		for i := 1; i < len(args); i++ {
			w := args[i]
			if w == "-c" || w == "-i" || strings.HasPrefix(w, "-c") && !strings.HasPrefix(w, "--") || IsDyn(w) {
				a.computed("(the Tcl commands expect runs, which can spawn any program)", prog)
				// The programs its literal text spawns or execs are still
				// judged as lines: a deny rule or a protected path meets them.
				text := strings.TrimPrefix(w, "-c")
				if w == "-c" && i+1 < len(args) {
					text = args[i+1]
				}
				if w != "-i" && !IsDyn(text) {
					for _, l := range tclRuns(text) {
						a.partialLine(l, depth, "expect -c")
					}
				}
				return
			}
		}
	case "gdb":
		for i := 1; i < len(args); i++ {
			// gdb takes its long options with one dash or two.
			w := strings.TrimPrefix(strings.TrimPrefix(args[i], "-"), "-")
			val, has := "", false
			if n, v, ok := strings.Cut(w, "="); ok {
				w, val, has = n, v, true
			}
			switch w {
			case "ex", "iex", "eval-command", "init-eval-command":
				if !has && i+1 < len(args) {
					i++
					val = args[i]
				}
				f := strings.Fields(Display(val))
				if cmd, ok := gdbShell(val); ok {
					// shell CMD and !CMD run CMD through a shell: a line.
					a.line(cmd, depth+1, "gdb -ex shell")
					continue
				}
				// run passes its words through a shell.
				if IsDyn(val) || len(f) == 0 || !gdbQuiet[f[0]] || (f[0] == "run" || f[0] == "r") && len(f) > 1 {
					a.computed("(the gdb command "+Display(val)+", which can run shell commands)", prog)
					return
				}
			case "x", "command", "ix", "init-command", "eval", "p", "pid":
				if w == "x" || w == "command" || w == "ix" || w == "init-command" {
					a.computed("(the gdb commands of a file, which can run shell commands)", prog)
					return
				}
			}
		}
	}
}

// parallel reads GNU parallel's command: the words before ":::" (or
// "::::", ":::+", "::::+") joined into a line its shell runs, with each
// word holding a replacement string ({}, {1}, {.}) computed; without
// command words, each input line is a command.
func (a *Analysis) parallel(rest, env []string, depth int) {
	cmd := rest
	for i, w := range rest {
		if strings.HasPrefix(w, ":::") {
			cmd = rest[:i]
			break
		}
	}
	if len(cmd) == 0 {
		a.computed("(the commands parallel reads from its input)", "parallel")
		return
	}
	words := make([]string, 0, len(cmd)+1)
	for _, w := range cmd {
		if strings.Contains(w, "{") && !IsDyn(w) {
			w = Dyn + w
		}
		words = append(words, w)
	}
	if s, ok := joinLit(words); ok {
		a.line(s+" $PARALLEL_ARG", depth+1, "parallel")
		return
	}
	a.partial(append(words, Dyn+"$PARALLEL_ARG"), depth, "parallel")
}

// gdbShell returns the command line of gdb's shell command (shell CMD,
// !CMD), which gdb 13 runs with $SHELL -c (/bin/sh without it).
func gdbShell(val string) (string, bool) {
	if IsDyn(val) {
		return "", false
	}
	t := strings.TrimLeft(val, " \t")
	var cmd string
	switch {
	case strings.HasPrefix(t, "!"):
		cmd = t[1:]
	case strings.HasPrefix(t, "shell ") || strings.HasPrefix(t, "shell\t"):
		cmd = t[len("shell"):]
	default:
		return "", false
	}
	if strings.TrimSpace(cmd) == "" {
		return "", false // an interactive shell
	}
	return cmd, true
}

// tclRuns returns, as shell lines, the commands a Tcl text (expect -c)
// runs through its spawn, exec and system commands: the words after the
// command name, with {braced} words quoted and [bracketed] commands and
// $variables as computed words. The reading is rough: what it returns is
// judged on top of the computed command the text already is.
func tclRuns(text string) []string {
	var out []string
	for _, cmd := range tclCommands(text) {
		if len(cmd) < 2 {
			continue
		}
		words := cmd[1:]
		switch cmd[0] {
		case "spawn":
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				if words[0] == "-ignore" && len(words) > 1 {
					words = words[1:]
				}
				words = words[1:]
			}
		case "exec":
			for len(words) > 0 && (words[0] == "-ignorestderr" || words[0] == "-keepnewline" || words[0] == "--") {
				words = words[1:]
			}
		case "system":
		default:
			continue
		}
		if len(words) > 0 {
			out = append(out, strings.Join(words, " "))
		}
	}
	return out
}

// tclCommands splits Tcl text into commands (at newlines and ";" outside
// braces, quotes and brackets) of words in shell spelling.
func tclCommands(text string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\n' || c == ';':
			end()
			if len(words) > 0 {
				cmds = append(cmds, words)
			}
			words = nil
		case c == ' ' || c == '\t':
			end()
		case c == '{' && !inWord:
			depth, j := 1, i+1
			for ; j < len(text) && depth > 0; j++ {
				switch text[j] {
				case '{':
					depth++
				case '}':
					depth--
				}
			}
			w.WriteString(quote(text[i+1 : j-1]))
			if depth > 0 {
				w.Reset()
				w.WriteString(quote(text[i+1:]))
			}
			inWord, i = true, j-1
		case c == '[':
			depth, j := 1, i+1
			for ; j < len(text) && depth > 0; j++ {
				switch text[j] {
				case '[':
					depth++
				case ']':
					depth--
				}
			}
			w.WriteString("$TCL_RESULT")
			inWord, i = true, j-1
		case c == '$':
			w.WriteString("$TCL_VAR")
			j := i + 1
			if j < len(text) && text[j] == '{' {
				for j < len(text) && text[j] != '}' {
					j++
				}
			} else {
				for j < len(text) && (text[j] == '_' || text[j] == ':' || 'a' <= text[j] && text[j] <= 'z' || 'A' <= text[j] && text[j] <= 'Z' || '0' <= text[j] && text[j] <= '9') {
					j++
				}
				j--
			}
			inWord, i = true, j
		case c == '"':
			j := i + 1
			for j < len(text) && text[j] != '"' {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			if j > len(text) {
				j = len(text)
			}
			w.WriteString(quote(text[i+1 : min(j, len(text))]))
			inWord, i = true, j
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	end()
	if len(words) > 0 {
		cmds = append(cmds, words)
	}
	return cmds
}

// runsGiven are programs without a table that run a command line or a
// program their options or operands give (issue 31, class 7): vim's ex
// commands (-c, --cmd, +CMD; :!CMD runs a shell), emacs's Lisp (--eval),
// ncat and netcat's -e and -c, socat's EXEC: and SYSTEM: addresses,
// tcpdump -z, and at and batch, which run the commands of their input
// later. The literal command is judged as a line; what warden cannot read
// is a computed command. Read from their manuals on Debian 12 (vim 9.0,
// emacs 28, ncat 7.93, netcat-traditional 1.10, socat 1.7.4, tcpdump
// 4.99, at 3.2).
var runsGiven = map[string]bool{"vim": true, "vi": true, "nvim": true, "ex": true, "view": true, "vimdiff": true,
	"emacs": true, "ncat": true, "nc": true, "netcat": true, "socat": true, "tcpdump": true, "at": true, "batch": true}

func (a *Analysis) runsGiven(prog string, args, env []string, depth, pipe, stage int) {
	lit := func(s, via string) {
		if IsDyn(s) {
			a.partial([]string{s}, depth, via)
			return
		}
		a.line(s, depth+1, via)
	}
	switch prog {
	case "vim", "vi", "nvim", "ex", "view", "vimdiff":
		for i := 1; i < len(args); i++ {
			w, cmd := args[i], ""
			switch {
			case w == "-c" || w == "--cmd" || w == "-S" || w == "-s" || w == "-u" || w == "-W" || w == "-w":
				if i+1 < len(args) {
					i++
					cmd = args[i]
				}
				if w != "-c" && w != "--cmd" {
					a.computed("(the commands vim "+w+" reads from a file)", prog)
					continue
				}
			case strings.HasPrefix(w, "+") && len(w) > 1 && strings.Trim(w[1:], "0123456789") != "":
				cmd = w[1:]
			case strings.HasPrefix(w, "-c") && len(w) > 2:
				cmd = w[2:]
			default:
				continue
			}
			a.computed("(the vim command "+Display(cmd)+", which can write files and run programs)", prog)
			if c, ok := exShell(cmd); ok {
				lit(c, prog+" -c !")
			}
		}
	case "emacs":
		for _, w := range args[1:] {
			if !strings.HasPrefix(w, "-") || IsDyn(w) {
				continue
			}
			n, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
			switch n {
			case "eval", "execute", "l", "load", "f", "funcall", "script", "x", "batch":
				a.computed("(the Lisp emacs "+w+" runs)", prog)
				return
			}
		}
	case "ncat", "nc", "netcat":
		for i := 1; i < len(args); i++ {
			w := args[i]
			n, v, has := strings.Cut(w, "=")
			switch n {
			case "-e", "--exec", "-c", "--sh-exec":
				if !has {
					if i+1 >= len(args) {
						continue
					}
					i++
					v = args[i]
				}
				lit(v, prog+" "+n)
				if f := strings.Fields(Display(v)); len(f) > 0 && (shells[base(f[0])] || IsDyn(v)) {
					a.computed("(the commands the other side sends to "+f[0]+")", prog)
				}
			case "--lua-exec":
				a.computed("(the Lua program ncat --lua-exec runs)", prog)
			default:
				if strings.HasPrefix(w, "-e") && len(w) > 2 || strings.HasPrefix(w, "-c") && len(w) > 2 && !strings.HasPrefix(w, "--") {
					a.computed("(the command of "+prog+" "+w[:2]+", whose options warden cannot read)", prog)
				}
			}
		}
	case "socat":
		for _, w := range args[1:] {
			if IsDyn(w) {
				a.computed("(a socat address computed at run time, which may run a program)", prog)
				continue
			}
			kind, rest, ok := strings.Cut(w, ":")
			if !ok {
				continue
			}
			switch strings.ToUpper(kind) {
			case "EXEC", "SYSTEM":
				cmd := rest
				if i := strings.LastIndexByte(cmd, ','); i >= 0 && !strings.ContainsAny(cmd[i:], " '\"") {
					cmd = cmd[:i] // address options (pty,stderr)
				}
				a.computed("(the socat address "+w+", whose options warden cannot read)", prog)
				lit(cmd, "socat "+strings.ToUpper(kind))
			}
		}
	case "tcpdump":
		for i := 1; i < len(args); i++ {
			if args[i] == "-z" && i+1 < len(args) {
				a.add(env, []string{args[i+1], Dyn + "(the capture file)"}, depth, "tcpdump -z", pipe, stage)
				i++
			} else if strings.HasPrefix(args[i], "-z") && len(args[i]) > 2 {
				a.add(env, []string{args[i][2:], Dyn + "(the capture file)"}, depth, "tcpdump -z", pipe, stage)
			}
		}
	case "at", "batch":
		for _, w := range args[1:] {
			if w == "-l" || w == "-r" || w == "-d" || w == "-c" || w == "-V" || w == "--help" {
				return // lists, removes or prints jobs
			}
		}
		a.computed("(the commands "+prog+" runs later, read from its input or a file)", prog)
	}
}

// exShell returns the shell command of an ex command line that runs one
// (:!CMD, :silent !CMD, :r !CMD, :w !CMD).
func exShell(cmd string) (string, bool) {
	if IsDyn(cmd) {
		return "", false
	}
	t := strings.TrimLeft(cmd, ": \t")
	for _, p := range []string{"silent!", "silent"} {
		if strings.HasPrefix(t, p) {
			t = strings.TrimLeft(t[len(p):], " \t")
			break
		}
	}
	for _, p := range []string{"read", "r", "write", "w"} {
		if strings.HasPrefix(t, p) && strings.HasPrefix(strings.TrimLeft(t[len(p):], " \t"), "!") {
			t = strings.TrimLeft(t[len(p):], " \t")
			break
		}
	}
	if !strings.HasPrefix(t, "!") || strings.TrimSpace(t[1:]) == "" {
		return "", false
	}
	return t[1:], true
}
