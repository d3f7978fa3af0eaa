package shell_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/shell"
)

// The differential tests run the real programs: for every entry of the
// program tables that claims an effect (an option that runs another
// program, one that writes a file), the real program, run in a temporary
// folder, shows the effect happens, and warden's analysis of the same line
// reports it. So the tables cannot drift from what the programs do.

type effectCase struct {
	name string
	line string // run with bash -c in the folder; PWNED is a marker path
	// marker: the file the effect creates (relative to the folder).
	marker string
	// saw reports whether warden's analysis reports the effect.
	saw func(a *shell.Analysis) bool
}

// writes reports that the analysis records a write of path.
func writesPath(path string) func(a *shell.Analysis) bool {
	return func(a *shell.Analysis) bool {
		for _, w := range a.Writes {
			if w.Path == path {
				return true
			}
		}
		return false
	}
}

// computedWrite reports that the analysis records a write it cannot name.
func computedWrite(a *shell.Analysis) bool {
	for _, w := range a.Writes {
		if shell.IsDyn(w.Path) {
			return true
		}
	}
	return false
}

// risky reports that no allow rule can vouch for the first command, and,
// when prog is not empty, that a command of that program is a part.
func risky(prog string) func(a *shell.Analysis) bool {
	return func(a *shell.Analysis) bool {
		if len(a.Commands) == 0 {
			return false
		}
		found := prog == ""
		anyRisk := false
		for _, c := range a.Commands {
			anyRisk = anyRisk || c.Risk != ""
			if c.Prog == prog {
				found = true
			}
		}
		return anyRisk && found
	}
}

func need(t *testing.T, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed", p)
			}
			t.Skipf("%s is not installed", p)
		}
	}
}

// gitRepo makes a repository with one commit and one change.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644)
	run("add", "a.txt")
	run("commit", "-qm", "one")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("two\n"), 0o644)
}

func runDifferential(t *testing.T, setup func(t *testing.T, dir string), cases []effectCase) {
	t.Helper()
	if raceEnabled {
		// The real programs are the subject here, not concurrency: the plain
		// run checks them, and under the race detector they only cost time.
		t.Skip("the differential tests run in the plain test run")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if setup != nil {
				setup(t, dir)
			}
			// A program that leaves the marker when something runs it.
			exectest.WriteFile(filepath.Join(dir, "evil"), []byte("#!/bin/sh\ntouch \"$(dirname \"$0\")/PWNED\"\n"), 0o755)
			line := strings.ReplaceAll(c.line, "{DIR}", dir)
			cmd := exec.Command("bash", "-c", line)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GOFLAGS=", "npm_config_cache="+filepath.Join(dir, ".npm"))
			if !strings.HasPrefix(line, "go") && !strings.Contains(line, " go ") {
				cmd.Env = append(cmd.Env, "HOME="+dir)
			}
			out, _ := cmd.CombinedOutput()
			if _, err := os.Stat(filepath.Join(dir, c.marker)); err != nil {
				t.Fatalf("the real program did not show the effect (%s missing) for %q:\n%s", c.marker, c.line, out)
			}
			a := shell.Analyze(line)
			if a.Err != nil {
				t.Fatalf("analysis: %v", a.Err)
			}
			if !c.saw(a) {
				t.Errorf("warden's analysis of %q misses the effect: commands %q, writes %+v", c.line, progs(a), a.Writes)
			}
		})
	}
}

func TestDifferentialGit(t *testing.T) {
	t.Parallel()
	need(t, "git", "bash")
	runDifferential(t, gitRepo, []effectCase{
		{"-c core.fsmonitor runs a program", "git -c core.fsmonitor=./evil status", "PWNED", risky("evil")},
		{"-c diff.external runs a program", "git -c diff.external=./evil diff", "PWNED", risky("evil")},
		{"GIT_EXTERNAL_DIFF runs a program", "GIT_EXTERNAL_DIFF=./evil git diff", "PWNED", risky("evil")},
		{"GIT_CONFIG_COUNT sets fsmonitor", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=./evil git status", "PWNED", risky("")},
		{"diff --output writes", "git diff --output=OUT", "OUT", writesPath("OUT")},
		{"log --output writes", "git log --output=OUT", "OUT", writesPath("OUT")},
		{"GIT_TRACE writes", "GIT_TRACE=$PWD/OUT git status", "OUT", func(a *shell.Analysis) bool { return len(a.Writes) > 0 }},
		{"--shallow-file takes a value", "git --shallow-file status log -1 > OUT 2>&1; grep -q one OUT && touch PWNED", "PWNED", func(a *shell.Analysis) bool {
			return a.Commands[0].Sub == "log"
		}},
		{"-C takes a value", "mkdir -p sub && git -C sub init -q && test -d sub/.git && touch PWNED", "PWNED", func(a *shell.Analysis) bool {
			for _, c := range a.Commands {
				if c.Prog == "git" && c.Sub == "init" {
					return true
				}
			}
			return false
		}},
	})
}

func TestDifferentialCoreutils(t *testing.T) {
	t.Parallel()
	need(t, "bash", "sort", "find", "tar", "cp", "ln", "chmod", "sed", "curl")
	setup := func(t *testing.T, dir string) {
		os.WriteFile(filepath.Join(dir, "in.txt"), []byte("b\na\n"), 0o644)
		os.MkdirAll(filepath.Join(dir, "d"), 0o755)
		os.WriteFile(filepath.Join(dir, "d/f"), []byte("f\n"), 0o644)
	}
	runDifferential(t, setup, []effectCase{
		{"sort -o writes", "sort -o OUT in.txt", "OUT", writesPath("OUT")},
		{"sort --output writes", "sort --output=OUT in.txt", "OUT", writesPath("OUT")},
		{"sort --compress-program runs a program", "seq 1 200 | sort -S 1K --compress-program=./evil -T . >/dev/null", "PWNED", risky("evil")},
		{"find -fprint writes", "find d -fprint OUT", "OUT", writesPath("OUT")},
		{"find -fprintf writes", "find d -fprintf OUT '%p'", "OUT", writesPath("OUT")},
		{"find -exec runs a command", "find d -exec ./evil {} \\;", "PWNED", func(a *shell.Analysis) bool {
			return progs(a)[1] == "./evil $" || strings.HasPrefix(progs(a)[1], "evil")
		}},
		{"tar -x writes what the archive names", "tar -cf a.tar d && rm -r d && tar -xf a.tar && mv d/f OUT", "OUT", computedWrite},
		{"tar -C extracts elsewhere", "tar -cf a.tar in.txt && mkdir x && tar -C x -xf a.tar && mv x/in.txt OUT", "OUT", computedWrite},
		{"tar --to-command runs a command", "tar -cf a.tar in.txt && tar -xf a.tar --to-command=./evil", "PWNED", risky("evil")},
		{"cp -t writes into the folder", "mkdir t && cp -t t in.txt && mv t/in.txt OUT", "OUT", writesPath("t/in.txt")},
		{"ln -s makes a path lead to its target", "ln -s d L && echo x > L/g && mv d/g OUT", "OUT", writesPath("d")},
		{"chmod -w is a mode", "chmod -w in.txt && test ! -w in.txt -o $(id -u) = 0 && touch OUT", "OUT", writesPath("in.txt")},
		{"chmod --reference takes no mode operand", "chmod --reference=in.txt d/f && touch OUT", "OUT", writesPath("d/f")},
		{"sed e runs a command", "sed -n '1e ./evil' in.txt", "PWNED", risky("")},
		{"sed w writes", "sed -n 'w OUT' in.txt", "OUT", risky("")},
		{"sed -i writes a backup named by its suffix", "mkdir -p bk/d && sed -i'bk/*' s/f/g/ d/f && mv bk/d/f OUT", "OUT", writesPath("bk/d/f")},
		{"sed -i rewrites its operand", "sed -i s/a/c/ in.txt && grep -q c in.txt && touch OUT", "OUT", writesPath("in.txt")},
		{"curl -o writes", "curl -s -o OUT file://$PWD/in.txt", "OUT", writesPath("OUT")},
		{"curl -O writes the URL's name", "mkdir s && mv in.txt s/OUT && curl -s -O file://{DIR}/s/OUT", "OUT", writesPath("OUT")},
		{"ANSI-C quoting", `echo x > $'\x4f\x55\x54'`, "OUT", writesPath("OUT")},
		{"busybox-style applet: env runs its operand", "env ./evil", "PWNED", func(a *shell.Analysis) bool { return len(a.Commands) == 2 }},
		{"PATH finds another ls", "mkdir b && cp evil b/ls && PATH=b:$PATH ls", "b/PWNED", risky("")},
		{"echo piped into bash runs", "echo ./evil | bash", "PWNED", func(a *shell.Analysis) bool {
			return slicesContains(progs(a), "./evil") || slicesContains(progs(a), "evil")
		}},
	})
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestDifferentialWget(t *testing.T) {
	t.Parallel()
	need(t, "bash", "wget")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) }))
	defer srv.Close()
	runDifferential(t, nil, []effectCase{
		{"wget names the file after the URL", "wget -q " + srv.URL + "/OUT", "OUT", func(a *shell.Analysis) bool { return writesPath("OUT")(a) }},
		{"wget -O writes", "wget -q -O OUT " + srv.URL + "/x", "OUT", writesPath("OUT")},
		{"wget -o writes its log", "wget -o OUT -O /dev/null " + srv.URL + "/x", "OUT", writesPath("OUT")},
	})
}

func TestDifferentialGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go test binaries")
	}
	t.Parallel()
	need(t, "bash", "go")
	mod := func(t *testing.T, dir string) {
		os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n\ngo 1.21\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "m_test.go"), []byte("package m\nimport \"testing\"\nfunc TestX(t *testing.T) {}\n"), 0o644)
	}
	runDifferential(t, mod, []effectCase{
		{"go test -exec runs a program", "go test -exec ./evil .", "PWNED", risky("evil")},
		{"go test -toolexec runs a program", "go test -toolexec {DIR}/evil . ; true", "PWNED", risky("evil")},
		{"GOFLAGS carries -toolexec", "GOFLAGS=-toolexec=$PWD/evil go test . ; true", "PWNED", risky("")},
		{"go test -coverprofile writes", "go test -coverprofile=OUT .", "OUT", writesPath("OUT")},
		{"go test -c -o writes", "go test -c -o OUT .", "OUT", writesPath("OUT")},
		{"go -C takes a value", "mkdir sub && cp go.mod m_test.go sub/ && go -C sub test -coverprofile=OUT . && mv sub/OUT OUT", "OUT", func(a *shell.Analysis) bool {
			for _, c := range a.Commands {
				if c.Prog == "go" && c.Sub == "test" {
					return true
				}
			}
			return false
		}},
	})
}

func TestDifferentialNpm(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npm")
	}
	t.Parallel()
	need(t, "bash", "npm", "node")
	pkg := func(t *testing.T, dir string) {
		os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"p","version":"1.0.0","scripts":{"test":"node -e 0"}}`), 0o644)
		os.WriteFile(filepath.Join(dir, "r.js"), []byte("require('fs').writeFileSync(__dirname + '/PWNED', '')\n"), 0o644)
	}
	runDifferential(t, pkg, []effectCase{
		{"npm test --script-shell runs a program", "npm test --script-shell={DIR}/evil", "PWNED", risky("evil")},
		{"npm test --node-options loads code", "npm test --node-options=--require=$PWD/r.js", "PWNED", risky("")},
		{"NODE_OPTIONS loads code", "NODE_OPTIONS=--require=$PWD/r.js npm test", "PWNED", risky("")},
		{"npm --cache takes a value", "npm --cache test exec -c ./evil", "PWNED", func(a *shell.Analysis) bool {
			return a.Commands[0].Sub == "exec"
		}},
	})
}
