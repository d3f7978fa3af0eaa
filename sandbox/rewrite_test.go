package sandbox_test

import (
	"math/rand"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/sandbox"
)

// argDumper writes a program that prints its arguments, each ended by a
// NUL byte: it stands in for warden in the rewritten line.
func argDumper(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "it's a \"warden\" $HOME `x`")
	// The lean runner next to it (RewriteSpec's form) is the same.
	for _, p := range []string{exe, filepath.Join(dir, "warden-sandbox")} {
		if err := exectest.WriteFile(p, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return exe
}

// roundTrip runs the rewritten line with shell and checks that the
// program gets the original line, byte for byte, as bash's -c argument.
func roundTrip(t testing.TB, shell, exe, line string) {
	t.Helper()
	roundTrips(t, shell, exe, []string{line})
}

// roundTrips is roundTrip for many lines: each form's rewrites run in
// one shell run, one after the other (a shell's start is most of a
// line's cost), and each line's arguments are checked in turn; a line
// whose arguments are wrong there runs alone for the message.
func roundTrips(t testing.TB, shell, exe string, lines []string) {
	t.Helper()
	policyFile := "/work/a b/it's/warden.yaml"
	runner := sandbox.Runner(exe)
	if runner == "" {
		t.Fatalf("no runner next to %s", exe)
	}
	specFile, sum := "/work/a b/it's/.warden/sandbox/0123.json", strings.Repeat("ab", 32)
	u := sandbox.Unshare()
	type form struct {
		rewrite func(line string) (string, error)
		want    func(line string) []string
		// spoiled is the rewrite changed so that Unwrap must refuse it,
		// and how.
		spoiled func(rw string) (string, string)
		// sampled: past the first 64 lines, only every tenth is run (each
		// is rewritten and unwrapped). unshare's form quotes the line as
		// the runner's does, which runs every line; what is its own, the
		// prefix, every seed runs (a namespace a line cost 7 ms here).
		sampled bool
	}
	forms := []form{{
		func(line string) (string, error) { return sandbox.Rewrite(exe, policyFile, "", true, line) },
		func(line string) []string {
			return []string{"sandbox", "--policy", policyFile, "--required", "--", sandbox.Bash(), "-c", line}
		},
		// Anything after a rewrite makes it not one.
		func(rw string) (string, string) {
			return rw + "; cat ~/.ssh/id_rsa", "a rewrite with a command after it"
		},
		false,
	}, {
		// The lean runner's form, on a spec file written ahead.
		func(line string) (string, error) { return sandbox.RewriteSpec(runner, specFile, sum, false, line) },
		func(line string) []string {
			return []string{"--spec", specFile, "--spec-sha256", sum, "--", sandbox.Bash(), "-c", line}
		},
		nil,
		false,
	}}
	if u != "" {
		// Under unshare (RewriteInside's form): unshare starts the runner
		// in namespaces of its own, with the same arguments and --inside.
		forms = append(forms, form{
			func(line string) (string, error) { return sandbox.RewriteInside(u, runner, specFile, sum, true, line) },
			func(line string) []string {
				return []string{"--spec", specFile, "--spec-sha256", sum, "--inside", "--required", "--", sandbox.Bash(), "-c", line}
			},
			func(rw string) (string, string) {
				return strings.Replace(rw, " --inside", "", 1), "unshare's form without --inside"
			},
			true,
		})
	}
	for _, f := range forms {
		rws := make([]string, len(lines))
		for i, line := range lines {
			rw, err := f.rewrite(line)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if !sandbox.IsRewritten(exe, rw) {
				t.Fatalf("IsRewritten(%q) is false", rw)
			}
			if got, ok := sandbox.Unwrap(exe, "", rw); !ok || got != line {
				t.Fatalf("Unwrap(%q) = %q, %v; want %q", rw, got, ok, line)
			}
			if f.spoiled != nil {
				bad, how := f.spoiled(rw)
				if _, ok := sandbox.Unwrap(exe, "", bad); ok {
					t.Fatalf("Unwrap accepted %s: %q", how, bad)
				}
			}
			rws[i] = rw
		}
		run, runRws := lines, rws
		if f.sampled {
			run, runRws = nil, nil
			for i := range lines {
				if i < 64 || i%10 == 0 {
					run, runRws = append(run, lines[i]), append(runRws, rws[i])
				}
			}
		}
		// In runs of at most 64 KiB of script: one argument may not pass
		// 128 KiB (MAX_ARG_STRLEN).
		for from := 0; from < len(run); {
			to, size := from, 0
			for to < len(run) && (to == from || size+len(runRws[to]) < 64<<10) {
				size += len(runRws[to]) + 1
				to++
			}
			runMany(t, shell, runRws[from:to], run[from:to], f.want)
			from = to
		}
	}
}

// runMany runs the rewritten lines rws with shell in one run and checks
// the arguments the program (an argDumper) got for each of lines in turn.
func runMany(t testing.TB, shell string, rws, lines []string, want func(line string) []string) {
	t.Helper()
	cmd := exec.Command(shell, "-c", strings.Join(rws, "\n"))
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.Output()
	args := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i, line := range lines {
		w := want(line)
		if len(args) < len(w) || !slices.Equal(args[:len(w)], w) {
			runArgs(t, shell, rws[i], line, w...)
			t.Fatalf("%s: %q was rewritten to %q, which alone ran right, but not after the %d lines before it in one run (%v): got %q",
				shell, line, rws[i], i, err, args[:min(len(w), len(args))])
		}
		args = args[len(w):]
	}
	if err != nil || len(args) > 1 || len(args) == 1 && args[0] != "" {
		t.Fatalf("%s: the run of %d rewritten lines: %v, %d arguments left over", shell, len(lines), err, len(args))
	}
}

// runArgs runs the rewritten line rw with shell and checks the arguments
// the program (an argDumper) got.
func runArgs(t testing.TB, shell, rw, line string, want ...string) {
	t.Helper()
	cmd := exec.Command(shell, "-c", rw)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s -c of the rewritten %q: %v\n%s", shell, line, err, rw)
	}
	args := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(args) != len(want) {
		t.Fatalf("%s: %q was rewritten to %q, which ran with %d arguments %q; want %q", shell, line, rw, len(args), args, want)
	}
	for i := range want {
		if args[i] != want[i] {
			t.Fatalf("%s: %q was rewritten to %q; argument %d is %q, want %q", shell, line, rw, i, args[i], want[i])
		}
	}
}

// shells are the shells a host may run the rewritten line with.
func shells(t testing.TB) []string {
	var out []string
	for _, s := range []string{"bash", "sh", "dash", "zsh"} {
		if p, err := exec.LookPath(s); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Skip("no shell")
	}
	return out
}

var rewriteSeeds = []string{
	"", "true", "git status", "echo 'a b' \"c d\" $HOME `date` $(pwd)", "printf '%s\\n' \"it's\"", "a'b", "'", "''", `'\''`,
	"\\", "\\\\'", "echo \\'", "cat <<'EOF'\nx'y\nEOF\n", "x\ny\r\nz\t", "python3 -c 'open(\".git/hooks/pre-commit\",\"w\")'",
	"echo \xff\xfe\x01\x7f", "!", "!!", "echo !$", "echo $'a\\'b'", "echo ${x:-'y'}", "; ;", "&&", ")", "\"", "# only a comment",
	"for f in *.go; do gofmt -l \"$f\"; done", "echo ü € 𝄞", "   ", "\n", "-c", "--", "$0 $1 $@",
}

// TestRewriteRoundTrip: each seed, and thousands of random lines of the
// characters shells treat specially, reach the program unchanged through
// every installed shell.
func TestRewriteRoundTrip(t *testing.T) {
	exe := argDumper(t)
	shs := shells(t)
	for _, sh := range shs {
		roundTrips(t, sh, exe, rewriteSeeds)
	}
	// Random lines: bytes of the shell's special characters, letters,
	// white space and any byte but NUL, many in one shell run each.
	r := rand.New(rand.NewSource(30))
	alphabet := []byte("'\"\\$`!*?[]{}()<>|&;#~ \t\n\r%^=,:-abcXYZ019")
	n := 3000
	if testing.Short() {
		n = 300
	}
	batch := make([][]string, len(shs))
	for i := 0; i < n; i++ {
		k := r.Intn(40)
		b := make([]byte, k)
		for j := range b {
			if r.Intn(8) == 0 {
				b[j] = byte(1 + r.Intn(255))
			} else {
				b[j] = alphabet[r.Intn(len(alphabet))]
			}
		}
		batch[i%len(shs)] = append(batch[i%len(shs)], string(b))
	}
	for i, sh := range shs {
		roundTrips(t, sh, exe, batch[i])
	}
}

// TestRewriteAcceptedByBash: for lines bash accepts (bash -n), the
// rewritten line is accepted too and runs the original under bash -c
// (checked by the round trip), including multi-line programs.
func TestRewriteAcceptedByBash(t *testing.T) {
	exe := argDumper(t)
	for _, line := range rewriteSeeds {
		if exec.Command("bash", "-n", "-c", line).Run() != nil {
			continue
		}
		rw, err := sandbox.Rewrite(exe, "/p/warden.yaml", "", false, line)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("bash", "-n", "-c", rw).CombinedOutput(); err != nil {
			t.Errorf("bash accepts %q but not its rewrite %q: %v %s", line, rw, err, out)
		}
	}
}

// TestRewriteRefuses: a NUL byte, a relative warden path or policy file.
func TestRewriteRefuses(t *testing.T) {
	for _, c := range []struct{ exe, pol, line string }{
		{"/usr/bin/warden", "/p/warden.yaml", "echo a\x00b"},
		{"warden", "/p/warden.yaml", "true"},
		{"/usr/bin/warden", "warden.yaml", "true"},
	} {
		if rw, err := sandbox.Rewrite(c.exe, c.pol, "", false, c.line); err == nil {
			t.Errorf("Rewrite(%q, %q, %q) = %q; want an error", c.exe, c.pol, c.line, rw)
		}
	}
}

// FuzzRewrite: any line without NUL round-trips through bash.
func FuzzRewrite(f *testing.F) {
	for _, s := range rewriteSeeds {
		f.Add(s)
	}
	exe := argDumper(f)
	f.Fuzz(func(t *testing.T, line string) {
		if strings.IndexByte(line, 0) >= 0 {
			if _, err := sandbox.Rewrite(exe, "/p/w.yaml", "", false, line); err == nil {
				t.Fatal("a line with a NUL byte was rewritten")
			}
			return
		}
		if len(line) > 4096 {
			return
		}
		roundTrip(t, "bash", exe, line)
	})
}
