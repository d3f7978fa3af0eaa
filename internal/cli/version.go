package cli

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Version is warden's version; set at link time (-ldflags "-X
// github.com/warden-run/warden/internal/cli.Version=v1.2.3"), else taken
// from the module's build information.
var Version = ""

// Commit is the commit warden was built from; set at link time by
// scripts/release.sh (which builds with -buildvcs=false, so that the
// archives do not depend on the checkout's state), else taken from the
// module's build information.
var Commit = ""

func runVersion(ctx context.Context, env *Env) int {
	fs := newFlags(env, "version", "")
	if code := parseFlags(fs, env.Args); code >= 0 {
		return code
	}
	fmt.Fprintln(env.Stdout, versionLine())
	return ExitOK
}

// versionLine is "warden VERSION (commit REV, TIME[, modified]) GOVERSION".
func versionLine() string {
	v := Version
	info, ok := debug.ReadBuildInfo()
	if !ok || Commit != "" {
		if v == "" {
			v = "unknown"
		}
		out := "warden " + v
		if Commit != "" {
			out += " (commit " + shortRev(Commit) + ")"
		}
		if ok {
			out += " " + info.GoVersion
		}
		return out
	}
	if v == "" {
		v = info.Main.Version
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, at, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	out := "warden " + v
	if rev != "" {
		out += fmt.Sprintf(" (commit %s, %s%s)", shortRev(rev), at, modified)
	}
	return out + " " + info.GoVersion
}

// shortRev is a commit's first 12 hex digits.
func shortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
