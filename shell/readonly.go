package shell

import (
	"strings"

	"github.com/warden-run/warden/shell/progs"
)

// readOnly are the programs and subcommands whose tables warden trusts to
// name every option that writes, runs a program or pages: called with
// only options and operands the table knows, and none that writes, runs
// or pages, such a command only reads and prints (docs/policy.md, "Known
// read-only commands"). Programs whose effects are not paths (kill,
// hostname NAME, date -s, curl) are not among them, nor pagers (less,
// more, man) nor awk (whose program can run commands).
var readOnly = map[string]bool{
	"cat": true, "head": true, "tail": true, "wc": true, "nl": true, "tac": true, "base64": true, "base32": true,
	"basenc": true, "sort": true, "uniq": true, "cut": true, "tr": true, "grep": true, "egrep": true, "fgrep": true,
	"rg": true, "ls": true, "stat": true, "file": true, "du": true, "df": true, "tree": true, "diff": true,
	"cmp": true, "comm": true, "jq": true, "printf": true, "echo": true, "sed": true, "realpath": true,
	"readlink": true, "basename": true, "dirname": true, "pwd": true, "whoami": true, "id": true, "uname": true,
	"which": true, "xxd": true, "od": true, "hexdump": true, "md5sum": true, "sha1sum": true, "sha256sum": true,
	"sha512sum": true, "b2sum": true, "cksum": true, "sum": true, "seq": true, "fold": true, "fmt": true,
	"paste": true, "join": true, "expand": true, "unexpand": true, "nproc": true, "groups": true, "tty": true,
	"sleep": true, "find": true,
}

// readOnlySubs are the subcommands of readOnly's kind, by program.
var readOnlySubs = map[string]map[string]bool{
	"git": {"log": true, "show": true, "diff": true, "status": true, "blame": true, "rev-parse": true, "ls-files": true,
		"grep": true, "shortlog": true, "describe": true, "ls-tree": true, "cat-file": true, "rev-list": true},
	"go": {"version": true},
}

// Options that make a command of readOnly do more than read and print,
// though its table gives them no effect, are refused below: git's pager
// and options before the subcommand, the programs git runs for a diff or
// a signature, printf -v (which assigns, and evaluates a subscript).
// readOnlyCall reports a command whose every word the tables know to
// only read and print: kind safe (docs/policy.md). --version and --help
// alone are read-only for any program with a table.
//
// pe is the program's entry (lookupProg), which holds its readOnly and
// readOnlySubs entries.
func readOnlyCall(c *Command, r *progs.Result, pe *progEntry) bool {
	if len(c.Args) == 2 && (c.Args[1] == "--version" || c.Args[1] == "--help") {
		// But not where --help pages: git --help runs man (or the
		// viewer git's configuration names, man.viewer, help.format),
		// less --help shows its help in the pager.
		return c.Args[1] == "--version" || !helpPages[c.Prog]
	}
	known := pe.readOnly
	if r.Sub != "" {
		known = pe.roSubs[r.Sub]
	}
	if !known || r.Risk != "" || len(r.Passed) > 0 || len(r.Runs) > 0 {
		return false
	}
	for _, e := range r.Effects {
		if e.Flag != progs.NoEffect || e.Arg != progs.Read && e.Arg != progs.List && e.Arg != progs.PatFile {
			return false
		}
	}
	switch {
	case c.Prog == "git":
		// Options of git itself, before the subcommand.
		for _, w := range c.Args[1:] {
			if w == r.Sub || strings.HasPrefix(r.Sub, w+" ") {
				break
			}
			switch w {
			case "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs":
			default:
				return false // -p, -c NAME=VALUE, -C DIR, --git-dir ...
			}
		}
		for _, f := range c.Flags {
			// -O: git grep opens the files in a pager, the default one
			// when no value is given.
			if f == "--ext-diff" || f == "--textconv" || f == "--show-signature" || f == "-O" && r.Sub == "grep" {
				return false
			}
		}
	case c.Prog == "find":
		// Its actions that write, remove or run (the command -exec runs
		// is a part of its own, but find with it does more than list).
		for _, f := range c.Flags {
			switch f {
			case "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fls", "-fprint", "-fprint0", "-fprintf":
				return false
			}
		}
	case c.Prog == "jq":
		// env and $ENV print the environment, as printenv does, which
		// is no read-only command.
		for _, w := range c.Args[1:] {
			if strings.Contains(w, "$ENV") || jqEnv(w) {
				return false
			}
		}
	case c.Prog == "printf":
		for _, f := range c.Flags {
			if f == "-v" {
				return false
			}
		}
	}
	return true
}

// helpPages are the programs whose --help shows a manual through a pager
// or a viewer.
var helpPages = map[string]bool{"git": true, "less": true, "more": true, "most": true}

// jqEnv reports a jq program that names the builtin env (not a field
// .env, nor part of a longer name).
func jqEnv(w string) bool {
	for i := strings.Index(w, "env"); i >= 0; {
		before := i == 0 || !jqName(w[i-1]) && w[i-1] != '.' && w[i-1] != '$' && w[i-1] != '"'
		after := i+3 == len(w) || !jqName(w[i+3])
		if before && after {
			return true
		}
		j := strings.Index(w[i+3:], "env")
		if j < 0 {
			break
		}
		i += 3 + j
	}
	return false
}

func jqName(b byte) bool {
	return b == '_' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}
