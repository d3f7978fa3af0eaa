package shell

import "strings"

// shellWords is a shell's command line read as the shell reads it (bash(1),
// dash(1), zsh(1) "INVOCATION"): options first (clusters of letters, -o
// NAME and +o NAME, bash's -O NAME and long options, zsh's long option
// names), then with -c the command string and the words for $0 $1 ...;
// without -c a script file and its arguments, or, with -s or no operand
// at all, commands read from standard input.
type shellWords struct {
	cmd   string // the -c string as written (Dyn-prefixed when computed)
	hasC  bool   // -c was given and a command string follows
	stdin bool   // the commands come from standard input
	// risk names an option warden cannot read (one it does not know, one
	// whose value it does not know, or one that changes how later words
	// are read: -a, -k): the shell's commands are then a computed command.
	risk string
	// inits are command lines run before the command (fish -C).
	inits []string
}

// The single-letter options each family of shells takes without a value
// (c, s, o and O are read apart). a (allexport) and k (keyword) are left
// out: they change what the words of the lines after them do.
var shellLetters = map[string]string{
	"bash": "bCeEfhHilmnprtTuvxBDP",
	"sh":   "CefhilmnuvxbpVEq",
	"zsh":  "efhilmnuvxyBCDEFGHIJKLMNPRSTUVWXYZbdgjpqrtw0123456789",
	"fish": "ilnpPN",
}

// shellOptNames are the option names of -o NAME (and set -o) whose effect
// is on errors, tracing, globbing or the editor: none changes which
// program a word runs. zsh spells them in any case, with or without
// underscores, and with "no" in front to turn them off.
var shellOptNames = map[string]bool{"pipefail": true, "errexit": true, "nounset": true, "xtrace": true,
	"verbose": true, "noclobber": true, "clobber": true, "noglob": true, "glob": true, "posix": true,
	"errtrace": true, "functrace": true, "emacs": true, "vi": true, "monitor": true, "notify": true,
	"noexec": true, "exec": true, "hashall": true, "braceexpand": true, "histexpand": true, "history": true,
	"ignoreeof": true, "interactivecomments": true, "nolog": true, "physical": true, "unset": true,
	"nomatch": true, "extendedglob": true, "nullglob": true, "globdots": true, "shwordsplit": true,
	"ksharrays": true, "localoptions": true, "rcs": true, "globalrcs": true, "pipestatus": true}

func shellFamily(prog string) string {
	switch prog {
	case "bash", "zsh", "fish":
		return prog
	}
	return "sh"
}

// readShell reads the words of a shell's command line (args[0] is the
// shell).
func readShell(args []string) shellWords {
	var s shellWords
	fam := shellFamily(base(args[0]))
	stdinOpt := false
	i := 1
	// value reads the word after an option that takes one.
	value := func(opt string) (string, bool) {
		if i+1 >= len(args) {
			return "", false
		}
		i++
		return args[i], true
	}
	optName := func(opt, name string) {
		if IsDyn(name) {
			s.risk = "the shell's option " + opt + " is computed"
			return
		}
		n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
		if !shellOptNames[n] && !(strings.HasPrefix(n, "no") && shellOptNames[n[2:]]) {
			if opt == "-O" || opt == "+O" {
				if shoptHarmless[name] {
					return
				}
			}
			s.risk = "the shell option " + opt + " " + name + " is one warden does not know"
		}
	}
options:
	for ; i < len(args); i++ {
		w := args[i]
		switch {
		case IsDyn(w):
			// It may be options, the command string or a script's name;
			// one that starts with literal text other than - and + is an
			// operand.
			if !operandLike(Display(w)) {
				s.risk = "a word among the shell's options is computed (" + Display(w) + ")"
			} else if !s.hasC {
				s.risk = "the script the shell runs is computed (" + Display(w) + ")"
			}
			break options
		case w == "--" || w == "-":
			i++
			break options
		case strings.HasPrefix(w, "--") && fam == "bash":
			name, val, hasVal := strings.Cut(w[2:], "=")
			switch name {
			case "norc", "noprofile", "login", "posix", "restricted", "verbose", "noediting", "debugger",
				"dump-strings", "dump-po-strings", "help", "version", "pretty-print":
				if hasVal {
					s.risk = "the shell's option " + w + " takes no value"
				}
			case "rcfile", "init-file":
				// Read by an interactive shell only; the file is run
				// as a script would be.
				if !hasVal {
					if _, ok := value(w); !ok {
						s.risk = "the shell's option " + w + " has no value"
					}
				}
				_ = val
			default:
				s.risk = "the shell's option " + w + " is one warden does not know"
			}
		case strings.HasPrefix(w, "--") && fam == "fish":
			name, val, hasVal := strings.Cut(w[2:], "=")
			switch name {
			case "command", "init-command":
				if !hasVal {
					var ok bool
					if val, ok = value(w); !ok {
						break
					}
				}
				if name == "command" {
					s.cmd, s.hasC = val, true
				} else {
					s.inits = append(s.inits, val)
				}
			case "interactive", "login", "no-execute", "private", "no-config", "print-rusage-self", "version", "help":
			default:
				s.risk = "the shell's option " + w + " is one warden does not know"
			}
		case strings.HasPrefix(w, "--") && fam == "zsh":
			optName("--", w[2:])
		case len(w) > 1 && (w[0] == '-' || w[0] == '+'):
			for j := 1; j < len(w); j++ {
				ch := w[j]
				switch {
				case ch == 'c' && w[0] == '-' && fam != "fish":
					s.hasC = true
				case ch == 'c' && fam == "fish", ch == 'C' && fam == "fish":
					v := w[j+1:]
					if v == "" {
						var ok bool
						if v, ok = value(w); !ok {
							break
						}
					}
					if ch == 'c' {
						s.cmd, s.hasC = v, true
					} else {
						s.inits = append(s.inits, v)
					}
					j = len(w)
				case ch == 's' && fam != "fish":
					stdinOpt = true
				case ch == 'o' && fam != "fish", ch == 'O' && fam == "bash":
					name, ok := value(string(w[0]) + string(ch))
					if !ok {
						if w[0] == '-' {
							// -o alone lists the options; with -c after
							// it, -c is taken as the name.
							break
						}
					}
					optName(string(w[0])+string(ch), name)
				case strings.IndexByte(shellLetters[fam], ch) >= 0:
				case ch == 'a':
					s.risk = "the shell's option -a exports every variable the commands assign (as set -a does)"
				case ch == 'k':
					s.risk = "the shell's option -k makes every NAME=VALUE word of a command a variable of its environment (as set -k does)"
				default:
					s.risk = "the shell's option " + string(w[0]) + string(ch) + " is one warden does not know"
				}
			}
		default:
			break options
		}
	}
	if fam == "fish" {
		s.stdin = !s.hasC && i >= len(args)
		return s
	}
	switch {
	case s.hasC && i < len(args):
		s.cmd = args[i]
	case s.hasC:
		s.hasC = false // the shell refuses -c without a command string
	case stdinOpt || i >= len(args):
		s.stdin = true
	}
	return s
}

// hasC reports a shell given its commands in its words (-c STRING or a
// script file): it does not read them from standard input.
func hasC(args []string) bool { return !readShell(args).stdin }

// shellC records what a shell runs: the -c string as a line, a computed
// string as a computed command, and a shell whose options warden cannot
// read as a computed command.
func (a *Analysis) shellC(args []string, depth int) {
	s := readShell(args)
	if s.risk != "" {
		a.computed("("+base(args[0])+": "+s.risk+")", base(args[0]))
	}
	for _, init := range s.inits {
		if IsDyn(init) {
			a.computed("(the command "+base(args[0])+" -C runs)", base(args[0]))
			continue
		}
		a.line(init, depth+1, args[0]+" -C")
	}
	if !s.hasC {
		return
	}
	if IsDyn(s.cmd) {
		// sh -c "rm -rf $x": the literal words are analysed, the rest is
		// computed.
		a.partial([]string{s.cmd}, depth, base(args[0])+" -c")
		return
	}
	a.line(s.cmd, depth+1, args[0]+" -c")
}

// operandLike reports the source of a computed word that starts with
// literal text other than - or +: it cannot be an option.
func operandLike(src string) bool {
	src = strings.TrimLeft(src, "\"'")
	return src != "" && src[0] != '-' && src[0] != '+' && src[0] != '$' && src[0] != '`' && src[0] != '<' && src[0] != '>'
}
