package shell

import (
	"sort"
	"strings"

	"github.com/warden-run/warden/shell/progs"
)

// shells run the string after -c as a command line.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
	"mksh": true, "ash": true, "busybox": false, "fish": true}

// wrapper describes a program that runs another command given in its
// arguments: its options, and how many leading operands are not the
// command (timeout's duration, chroot's folder).
type wrapper struct {
	// opts lists every option the program takes, in the notation of the
	// program tables: aliases joined by "|", "=" for a value (attached or
	// the next word), "[=]" for a value that is optional and only attached
	// (xargs -i{}, --replace={}). The first spelling names the option.
	opts    string
	skipOps int
	// assigns: NAME=VALUE words before the command are skipped (env).
	assigns bool
	// abbrev: long options may be abbreviated to a unique prefix (GNU
	// getopt_long: xargs --arg FILE is --arg-file FILE).
	abbrev bool
	// digits: a word of digits with a sign is an option (nice -5, nice --5).
	digits bool
	// permute: options may follow operands, up to "--" (util-linux su and
	// runuser; getopt without "+").
	permute bool

	short map[byte]*wopt
	long  map[string]*wopt
	longs []string
}

// wopt is one option of a wrapper.
type wopt struct {
	name     string // the first spelling: "-i", "--preserve-env"
	value    bool   // takes a value
	optional bool   // the value is optional and only attached
}

// The options were read from each program's --help and manual on Debian
// 12 (coreutils 9.1, findutils 4.9.0, util-linux 2.38.1, procps-ng 4.0.2,
// sudo 1.9.13, OpenDoas 6.8.2, GNU time 1.9, BusyBox 1.35), and checked
// against the programs themselves.
var wrappers = map[string]*wrapper{
	"sudo": {abbrev: true, opts: "-A|--askpass -b|--background -B|--bell -C=|--close-from= -D=|--chdir= -E|--preserve-env[=] -e|--edit -g=|--group= -H|--set-home " +
		"-h=|--host= --help -i|--login -K|--remove-timestamp -k|--reset-timestamp -l|--list -n|--non-interactive -N|--no-update -P|--preserve-groups -p=|--prompt= " +
		"-R=|--chroot= -r=|--role= -S|--stdin -s|--shell -t=|--type= -T=|--command-timeout= -U=|--other-user= -u=|--user= -V|--version -v|--validate"},
	"doas":    {opts: "-C= -L -n -s -u="},
	"env":     {abbrev: true, assigns: true, opts: "-a=|--argv0= -i|--ignore-environment -0|--null -u=|--unset= -C=|--chdir= -S=|--split-string= --block-signal[=] --default-signal[=] --ignore-signal[=] --list-signal-handling -v|--debug --help --version"},
	"command": {opts: "-p -v -V"},
	"builtin": {},
	"exec":    {opts: "-a= -c -l"},
	"nice":    {abbrev: true, digits: true, opts: "-n=|--adjustment= --help --version"},
	"nohup":   {abbrev: true, opts: "--help --version"},
	"time":    {abbrev: true, opts: "-a|--append -f=|--format= -o=|--output= -p|--portability -q|--quiet -v|--verbose -h|--help -V|--version"},
	"timeout": {abbrev: true, skipOps: 1, opts: "--preserve-status --foreground -k=|--kill-after= -s=|--signal= -v|--verbose --help --version"},
	"stdbuf":  {abbrev: true, opts: "-i=|--input= -o=|--output= -e=|--error= --help --version"},
	"ionice":  {abbrev: true, opts: "-c=|--class= -n=|--classdata= -p=|--pid= -P=|--pgid= -t|--ignore -u=|--uid= -h|--help -V|--version"},
	"chrt": {abbrev: true, skipOps: 1, opts: "-b|--batch -d|--deadline -f|--fifo -i|--idle -o|--other -r|--rr -R|--reset-on-fork -T=|--sched-runtime= -P=|--sched-period= -D=|--sched-deadline= " +
		"-a|--all-tasks -m|--max -p|--pid -v|--verbose -h|--help -V|--version"},
	"taskset":  {abbrev: true, skipOps: 1, opts: "-a|--all-tasks -p|--pid -c|--cpu-list -h|--help -V|--version"},
	"setsid":   {abbrev: true, opts: "-c|--ctty -f|--fork -w|--wait -h|--help -V|--version"},
	"unbuffer": {opts: "-p"},
	"chroot":   {abbrev: true, skipOps: 1, opts: "--groups= --userspec= --skip-chdir --help --version"},
	"runuser": {abbrev: true, permute: true, opts: "-c=|--command= --session-command= -f|--fast -g=|--group= -G=|--supp-group= -l|--login -m|-p|--preserve-environment -P|--pty " +
		"-s=|--shell= -u=|--user= -w=|--whitelist-environment= -h|--help -V|--version"},
	"su": {abbrev: true, permute: true, opts: "-c=|--command= --session-command= -f|--fast -g=|--group= -G=|--supp-group= -l|--login -m|-p|--preserve-environment -P|--pty " +
		"-s=|--shell= -w=|--whitelist-environment= -h|--help -V|--version"},
	// flock's -c (--command) is not an option: it is the word after the
	// file, and ends the options there.
	"flock":    {abbrev: true, skipOps: 1, opts: "-s|--shared -x|-e|--exclusive -u|--unlock -n|-nb|--nonblock|--nonblocking -w=|--wait=|--timeout= -E=|--conflict-exit-code= -o|--close -F|--no-fork --verbose -h|--help -V|--version"},
	"xvfb-run": {abbrev: true, opts: "-a|--auto-servernum -d|--auto-display -e=|--error-file= -f=|--auth-file= -h|--help -l|--listen-tcp -n=|--server-num= -p=|--xauth-protocol= -s=|--server-args= -w=|--wait="},
	"strace":   {opts: "-A -b= -c -C -d -D -f -F -h -i -k -n -q -r -t -T -v -V -w -x -y -Y -z -Z -a= -e= -E= -I= -o= -O= -p= -P= -s= -S= -u= -X= -U="},
	"watch":    {abbrev: true, opts: "-b|--beep -c|--color -d[=]|--differences[=] -e|--errexit -g|--chgexit -q=|--equexit= -n=|--interval= -p|--precise -t|--no-title -w|--no-wrap -x|--exec -h|--help -v|--version"},
	"xargs": {abbrev: true, opts: "-0|--null -a=|--arg-file= -d=|--delimiter= -E= -e[=]|--eof[=] -I= -i[=]|--replace[=] -L= -l[=]|--max-lines[=] -n=|--max-args= -o|--open-tty " +
		"-P=|--max-procs= -p|--interactive --process-slot-var= -r|--no-run-if-empty -s=|--max-chars= --show-limits -t|--verbose -x|--exit --help --version"},
	// Programs that run the command in their operands under some
	// condition or measure (issue 31, class 7), read from their manuals
	// and --help on Debian 12 (fakeroot 1.31, util-linux 2.38.1, moreutils
	// 0.67, libfaketime 0.9.10, valgrind 3.19, ltrace 0.7.3, dbus 1.14,
	// cpulimit 0.2, screen 4.9, direnv 2.32, GNU parallel 20221122,
	// cross-env 7). An option not listed makes the command computed.
	"fakeroot": {opts: "-l=|--lib= --faked= -s= -i= -u|--unknown-is-real -b= -h|--help -v|--version"},
	"setpriv": {abbrev: true, opts: "-d|--dump --no-new-privs --ambient-caps= --inh-caps= --bounding-set= --clear-groups --groups= --init-groups --keep-groups " +
		"--ruid= --euid= --reuid= --rgid= --egid= --regid= --securebits= --pdeathsig= --selinux-label= --apparmor-profile= --landlock-access= --landlock-rule= --reset-env -h|--help -V|--version"},
	"prlimit": {abbrev: true, opts: "-c[=]|--core[=] -d[=]|--data[=] -e[=]|--nice[=] -f[=]|--fsize[=] -i[=]|--sigpending[=] -l[=]|--memlock[=] -m[=]|--rss[=] -n[=]|--nofile[=] " +
		"-q[=]|--msgqueue[=] -r[=]|--rtprio[=] -s[=]|--stack[=] -t[=]|--cpu[=] -u[=]|--nproc[=] -v[=]|--as[=] -x[=]|--locks[=] -y[=]|--rttime[=] --noheadings --raw --verbose -o=|--output= -h|--help -V|--version"},
	"unshare": {abbrev: true, opts: "-m[=]|--mount[=] -u[=]|--uts[=] -i[=]|--ipc[=] -n[=]|--net[=] -p[=]|--pid[=] -U[=]|--user[=] -C[=]|--cgroup[=] -T[=]|--time[=] -f|--fork " +
		"--kill-child[=] --mount-proc[=] -r|--map-root-user -c|--map-current-user --map-user= --map-group= --map-users= --map-groups= --map-auto --propagation= --setgroups= " +
		"-R=|--root= -w=|--wd= -S=|--setuid= -G=|--setgid= --monotonic= --boottime= -h|--help -V|--version"},
	"chronic":  {opts: "-e -v"},
	"ifne":     {opts: "-n"},
	"faketime": {skipOps: 1, opts: "-m -f --exclude-monotonic -h|--help -v|--version"},
	"valgrind": {opts: "--tool= --leak-check= --show-leak-kinds= --track-origins= -q|--quiet -v|--verbose -s --error-exitcode= --trace-children= --num-callers= " +
		"--suppressions= --gen-suppressions= --read-var-info= --track-fds= --show-reachable= --undef-value-errors= --errors-for-leak-kinds= --max-stackframe= --main-stacksize= --help --version"},
	"ltrace":           {opts: "-a= -A= -b -c -C -D= -e= -f -i -l= -L -n= -r -s= -S -t -tt -ttt -T -w= -x= -h|--help -V|--version"},
	"dbus-run-session": {opts: "--config-file= --help --version"},
	"cpulimit":         {abbrev: true, opts: "-l=|--limit= -c=|--cpu= -z|--lazy -i|--include-children -q|--quiet -v|--verbose -h|--help"},
	"screen":           {opts: "-d -m -D -S= -L -a -A -U -q -O -t= -T= -h= -e= -f -fn -fa -l -ln -i"},
	"parallel": {abbrev: true, opts: "-j=|--jobs=|-P= -k|--keep-order -q|--quote -v --dry-run --halt= --bar --progress --eta -n=|--max-args= -N= -X -m --xargs -0|--null " +
		"--colsep=|-C= --tag --tagstring= --timeout= --retries= --delay= --line-buffer --group --ungroup|-u --will-cite --no-notice -r|--no-run-if-empty --plus --shuf -L=|--max-lines= --trim="},
	"cross-env":       {assigns: true},
	"cross-env-shell": {assigns: true},
	// rlwrap 0.46 (its -z filter runs a program: left out, so computed),
	// entr 5.2 (-s runs the command through a shell: left out), and
	// systemd-run (systemd 252; -p, -E, -S and --working-directory left
	// out: a property can run commands, and the others change what runs).
	"rlwrap": {opts: "-a[=] -A -b= -c -C= -D= -e= -f= -g= -h -H= -i -I -l= -m[=] -M= -n -N -o -O= -p[=] -P= -q= -r -R -s= -S= -t= -U -v -w= -W -X"},
	"entr":   {opts: "-a -c -d -n -p -r -x -z"},
	"systemd-run": {opts: "-u=|--unit= --description= --slice= --slice-inherit -r|--remain-after-exit --send-sighup --service-type= --uid= --gid= --nice= -d|--same-dir " +
		"-t|--pty -P|--pipe -q|--quiet --wait -G|--collect --user --system --scope --on-active= --on-boot= --on-startup= --on-unit-active= --on-unit-inactive= " +
		"--on-calendar= --on-clock-change --on-timezone-change --no-block --no-ask-password -h|--help --version"},
	// Multiplexers run the applet named by their first operand.
	"busybox": {opts: "--list --list-full --install --show= --help"},
	"toybox":  {opts: "--help --version"},
}

func init() {
	for _, w := range wrappers {
		w.build()
	}
}

// newWrapper makes a wrapper description from its options (for the
// programs runsLines reads).
func newWrapper(opts string, abbrev, permute bool) *wrapper {
	w := &wrapper{opts: opts, abbrev: abbrev, permute: permute}
	w.build()
	return w
}

func (w *wrapper) build() {
	{
		w.short, w.long = map[byte]*wopt{}, map[string]*wopt{}
		for _, group := range strings.Fields(w.opts) {
			o := &wopt{}
			for i, n := range strings.Split(group, "|") {
				switch {
				case strings.HasSuffix(n, "[=]"):
					n, o.value, o.optional = strings.TrimSuffix(n, "[="+"]"), true, true
				case strings.HasSuffix(n, "="):
					n, o.value = strings.TrimSuffix(n, "="), true
				}
				if i == 0 {
					o.name = n
				}
				if strings.HasPrefix(n, "--") {
					w.long[n[2:]] = o
					w.longs = append(w.longs, n[2:])
				} else if len(n) == 2 {
					w.short[n[1]] = o
				} else {
					w.long[n[1:]] = o // flock -nb: a word of its own
				}
			}
		}
		sort.Strings(w.longs)
	}
}

// longOpt finds a long option by its name or, where the program accepts
// it, by a unique prefix (several spellings of one option are one).
func (w *wrapper) longOpt(name string) *wopt {
	if o := w.long[name]; o != nil {
		return o
	}
	if !w.abbrev || name == "" {
		return nil
	}
	var found *wopt
	i := sort.SearchStrings(w.longs, name)
	for ; i < len(w.longs) && strings.HasPrefix(w.longs[i], name); i++ {
		o := w.long[w.longs[i]]
		if found != nil && found != o {
			return nil // ambiguous: the program refuses it
		}
		found = o
	}
	return found
}

// wval is an option a wrapper was given, by its first spelling.
type wval struct {
	name, val string
	hasVal    bool
}

// skipOpts skips a wrapper's options and returns the words after them (the
// operands, in order, for a wrapper that permutes), the options given, and
// whether a word could not be read as the program reads it (an option it
// does not take, an ambiguous abbreviation): the program refuses such a
// call, and warden does not vouch for what it read.
func skipOpts(args []string, w *wrapper) (rest []string, opts []wval, unsure bool) {
	for i := 0; i < len(args); i++ {
		s := args[i]
		if s == "--" {
			return append(rest, args[i+1:]...), opts, unsure
		}
		if IsDyn(s) && w.permute {
			unsure = true // it may be an option
		}
		if len(s) < 2 || s[0] != '-' || IsDyn(s) {
			if s == "-" && w == wrappers["env"] {
				opts = append(opts, wval{name: "-i"}) // env - is env -i
				continue
			}
			if !w.permute {
				return args[i:], opts, unsure
			}
			rest = append(rest, s)
			continue
		}
		if w.digits && (progs.AllDigits(s[1:]) || len(s) > 2 && (s[1] == '-' || s[1] == '+') && progs.AllDigits(s[2:])) {
			opts = append(opts, wval{name: "-NUM", val: s[1:], hasVal: true})
			continue
		}
		if strings.HasPrefix(s, "--") {
			name, val, hasVal := strings.Cut(s[2:], "=")
			o := w.longOpt(name)
			if o == nil {
				if o = w.long[s[1:]]; o == nil {
					unsure = true
					continue
				}
			}
			switch {
			case hasVal && !o.value:
				unsure = true // the program refuses a value here
			case !hasVal && o.value && !o.optional && i+1 < len(args):
				i++
				val, hasVal = args[i], true
			}
			opts = append(opts, wval{o.name, val, hasVal})
			continue
		}
		if o := w.long[s[1:]]; o != nil {
			opts = append(opts, wval{name: o.name}) // flock -nb
			continue
		}
		// A cluster of short options; one taking a value ends it, and the
		// value is either the rest of the cluster or (unless the value is
		// optional) the next word.
		for j := 1; j < len(s); j++ {
			o := w.short[s[j]]
			if o == nil {
				unsure = true
				break
			}
			if !o.value {
				opts = append(opts, wval{name: o.name})
				continue
			}
			v := wval{name: o.name, val: s[j+1:], hasVal: j+1 < len(s)}
			if !v.hasVal && !o.optional && i+1 < len(args) {
				i++
				v.val, v.hasVal = args[i], true
			}
			opts = append(opts, v)
			break
		}
	}
	return rest, opts, unsure
}

// given reports whether one of names was among opts, and the value of the
// last one given.
func given(opts []wval, names ...string) (val string, hasVal, ok bool) {
	for _, o := range opts {
		for _, n := range names {
			if o.name == n {
				val, hasVal, ok = o.val, o.hasVal, true
			}
		}
	}
	return val, hasVal, ok
}

// unwrap records the commands that args (a command whose program is prog)
// runs in turn: the command after a wrapper, the -c string of a shell, the
// -exec command of find, the string given to eval.
func (a *Analysis) unwrap(prog string, args, env []string, depth int, pipe, stage int) {
	if runsGiven[prog] {
		a.runsGiven(prog, args, env, depth, pipe, stage)
		return
	}
	switch prog {
	case "script", "tmux", "hyperfine", "nix-shell", "sg", "expect", "gdb", "perf", "direnv", "zip":
		a.runsLines(prog, args, env, depth, pipe, stage)
		return
	case "eval":
		if s, ok := joinLit(args[1:]); ok {
			a.line(s, depth+1, "eval")
		} else if len(args) > 1 {
			a.partial(args[1:], depth, "eval")
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
		} else if len(ops) > 1 {
			a.partial(ops[:1], depth, "trap")
		}
		return
	case "alias":
		// alias NAME=VALUE: with expand_aliases (set in the shells some
		// hosts run commands in), a later command line that starts with
		// NAME runs VALUE. VALUE is analysed as the line it stands for;
		// one that is not a line of its own (alias e='echo x >', then
		// e .git/config) is computed.
		for _, w := range args[1:] {
			name, val, ok := strings.Cut(Display(w), "=")
			switch {
			case IsDyn(w) && (!ok || strings.ContainsAny(name, "$`")):
				a.Commands = append(a.Commands, Command{Args: []string{w}, Prog: w, Dynamic: true, Via: "alias", Pipe: -1})
			case !ok || strings.HasPrefix(w, "-"):
			case IsDyn(w):
				a.Commands = append(a.Commands, Command{Args: []string{w}, Prog: w, Dynamic: true, Via: "alias", Pipe: -1})
			default:
				before := a.Err
				a.line(val, depth+1, "alias")
				if a.Err != before && a.Err != ErrTooDeep && a.Err != ErrTooLong {
					a.Err = before
					a.Commands = append(a.Commands, Command{Args: []string{Dyn + val}, Prog: Dyn + val, Dynamic: true, Via: "alias", Pipe: -1})
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
	rest, opts, unsure := skipOpts(args[1:], w)
	if _, _, ok := given(opts, "-v", "-V"); ok && prog == "command" {
		return // command -v NAME only looks NAME up
	}
	if unsure {
		// The program refuses the call, or reads it otherwise than
		// warden: what runs is not vouched for.
		a.computed("(the command of "+prog+", whose options warden cannot read)", prog)
	}
	switch prog {
	case "su", "runuser":
		a.su(prog, rest, opts, env, depth, pipe, stage)
		return
	case "sudo":
		if _, _, ok := given(opts, "-e"); ok {
			// sudo -e FILE...: sudoedit; the editor is the user's.
			for _, f := range rest {
				a.addWrite(Write{Path: f, Op: "sudo -e"})
			}
			a.computed("(the editor sudo -e runs)", prog)
			return
		}
		if _, _, ok := given(opts, "-s", "-i"); ok && len(rest) == 0 {
			a.computed("(the shell sudo runs)", prog)
			return
		}
	case "doas":
		if _, _, ok := given(opts, "-s"); ok {
			a.computed("(the shell doas -s runs)", prog)
			return
		}
	case "chroot":
		if len(rest) == 1 {
			a.computed("(the shell chroot runs)", prog)
			return
		}
	case "time", "strace":
		// time -o FILE writes its report to FILE; strace -o FILE its
		// trace (or pipes it to a command: -o '|cmd').
		for _, o := range opts {
			if o.name != "-o" || !o.hasVal {
				continue
			}
			if prog == "strace" && (strings.HasPrefix(o.val, "|") || strings.HasPrefix(o.val, "!")) {
				a.line(o.val[1:], depth+1, "strace -o")
				continue
			}
			a.addWrite(Write{Path: o.val, Op: prog + " -o"})
		}
	case "env":
		if s, has, ok := given(opts, "-S"); ok && has {
			// env -S "string" ARGS: the string is split into words, and
			// the words after it follow.
			if IsDyn(s) || strings.HasPrefix(strings.TrimSpace(s), "-") {
				a.computed("(the command env -S runs)", prog)
				return
			}
			line := s
			for _, w := range rest {
				if IsDyn(w) {
					a.computed("(the command env -S runs)", prog)
					return
				}
				line += " '" + strings.ReplaceAll(w, "'", `'\''`) + "'"
			}
			a.line(line, depth+1, prog+" -S")
			return
		}
	}
	switch prog {
	case "parallel":
		a.parallel(rest, env, depth)
		return
	case "cross-env-shell":
		// The words after the assignments are one shell line.
		k := 0
		for k < len(rest) && isAssign(rest[k]) {
			k++
		}
		if s, ok := joinLit(rest[k:]); ok {
			a.line(s, depth+1, prog)
		} else if len(rest) > k {
			a.partial(rest[k:], depth, prog)
		}
		return
	}
	if w.assigns || prog == "sudo" {
		// env NAME=VALUE cmd: the assignments are the command's own.
		k := 0
		for k < len(rest) && isAssign(rest[k]) {
			k++
		}
		if k > 0 {
			// One copy: a copy per word costs the square of the line.
			env = append(env[:len(env):len(env)], rest[:k]...)
			rest = rest[k:]
		}
	}
	if len(rest) > w.skipOps {
		rest = rest[w.skipOps:]
	} else {
		rest = nil
	}
	switch prog {
	case "flock":
		// flock FILE -c "command" (or --command, spelt out): only as the
		// word right after the file.
		if len(rest) > 0 && (rest[0] == "-c" || rest[0] == "--command") {
			if len(rest) > 1 && !IsDyn(rest[1]) {
				a.line(rest[1], depth+1, "flock -c")
			} else if len(rest) > 1 {
				a.computed("(the command flock -c runs)", prog)
			}
			return
		}
	case "watch":
		// watch joins its operands into a line for sh -c; with -x it runs
		// them as a command.
		if _, _, ok := given(opts, "-x"); ok {
			break
		}
		if s, ok := joinLit(rest); ok {
			a.line(s, depth+1, "watch")
		} else if len(rest) > 0 {
			a.computed("(the command watch runs)", prog)
		}
		return
	case "xargs":
		if len(rest) == 0 {
			return // xargs runs echo
		}
		// The command gets operands read from standard input. With -I R
		// (-i, --replace: R is {} unless given), every word but the
		// program's name holding R is computed: xargs -I ls sh -c ls
		// runs each input line.
		cmd := make([]string, len(rest), len(rest)+1)
		copy(cmd, rest)
		repl, hasRepl := "", false
		for _, o := range opts {
			switch o.name {
			case "-I":
				repl, hasRepl = o.val, true
			case "-i":
				repl, hasRepl = "{}", true
				if o.hasVal {
					repl = o.val
				}
			}
		}
		if hasRepl {
			for k := 1; k < len(cmd); k++ {
				if !IsDyn(cmd[k]) && (repl == "" || IsDyn(repl) || strings.Contains(cmd[k], Display(repl))) {
					cmd[k] = Dyn + cmd[k]
				}
			}
		}
		rest = append(cmd, Dyn+"(xargs input)")
	}
	if len(rest) > 0 {
		a.add(env, rest, depth, prog, pipe, stage)
	}
}

// computed records a command warden cannot read: it is never allowed.
func (a *Analysis) computed(what, via string) {
	w := Dyn + what
	a.Commands = append(a.Commands, Command{Args: []string{w}, Prog: w, Dynamic: true, Via: via, Pipe: -1})
}

// su reads what su and runuser run: with runuser -u USER, the operands
// are the command; otherwise ([-] [USER [ARG...]]) they run a shell (-s,
// or the user's own) with -c COMMAND and the ARGs, or the ARGs alone (a
// script), or with neither a shell that reads its commands from the
// standard input.
func (a *Analysis) su(prog string, ops []string, opts []wval, env []string, depth, pipe, stage int) {
	if _, _, ok := given(opts, "-u"); ok && prog == "runuser" {
		if len(ops) > 0 {
			a.add(env, ops, depth, prog, pipe, stage)
		}
		return
	}
	if len(ops) > 0 && ops[0] == "-" {
		ops = ops[1:]
	}
	if len(ops) > 0 {
		ops = ops[1:] // the user
	}
	sh, hasSh, _ := given(opts, "-s")
	cmd, _, hasCmd := given(opts, "-c", "--session-command")
	switch {
	case hasSh && !IsDyn(sh):
		words := []string{sh}
		if hasCmd {
			words = append(words, "-c", cmd)
		}
		a.add(env, append(words, ops...), depth, prog, pipe, stage)
	case hasCmd && !IsDyn(cmd) && !hasSh:
		a.line(cmd, depth+1, prog+" -c")
	default:
		a.computed("(the shell "+prog+" runs)", prog)
	}
}

// findExec records the commands of find's -exec, -execdir, -ok and -okdir
// actions, and find -delete as the removal it is. GNU find ends the
// command at ";", or (-exec and -execdir only) at a "+" right after a word
// holding "{}": find . -exec rm -rf + .git ";" runs rm -rf + .git. A "+"
// after a computed word may end it or not: the command is read up to the
// next end find surely takes, and the words after the "+" are read again
// as find's own (another -exec).
func (a *Analysis) findExec(args []string, depth int, pipe, stage int) {
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			plus := args[i] == "-exec" || args[i] == "-execdir"
			j, maybe := i+1, 0
			for ; j < len(args) && args[j] != ";"; j++ {
				if !plus || args[j] != "+" || j == i+1 {
					continue
				}
				if IsDyn(args[j-1]) {
					if maybe == 0 {
						maybe = j
					}
					continue
				}
				if strings.Contains(args[j-1], "{}") {
					break
				}
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
					a.cdSeen, a.cdOther = true, true
				}
				a.add(nil, cmd, depth, "find "+args[i], pipe, stage)
			}
			i = j
			if maybe > 0 {
				i = maybe
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
