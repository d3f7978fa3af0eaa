package shell_test

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/warden-run/warden/shell"
)

// progs returns "prog arg arg" for every command, with computed words shown
// as $.
func progs(a *shell.Analysis) []string {
	var out []string
	for _, c := range a.Commands {
		ws := []string{c.Prog}
		if c.Dynamic {
			ws[0] = "$"
		}
		for _, w := range c.Args[1:] {
			if shell.IsDyn(w) {
				w = "$"
			}
			ws = append(ws, w)
		}
		out = append(out, strings.Join(ws, " "))
	}
	return out
}

func writes(a *shell.Analysis) []string {
	var out []string
	for _, w := range a.Writes {
		p := w.Path
		if shell.IsDyn(p) {
			p = "$"
		}
		out = append(out, w.Op+" "+p)
	}
	return out
}

func TestAnalyze(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line   string
		cmds   []string
		writes []string
	}{
		{"git status", []string{"git status"}, nil},
		{"git status && rm -rf build", []string{"git status", "rm -rf build"}, []string{"rm build"}},
		{"echo $(rm -rf build)", []string{"echo $", "rm -rf build"}, []string{"rm build"}},
		{"echo `rm -rf build`", []string{"echo $", "rm -rf build"}, []string{"rm build"}},
		{"bash -c 'rm -rf build'", []string{"bash -c rm -rf build", "rm -rf build"}, []string{"rm build"}},
		{"sh -ec \"rm -rf build\"", []string{"sh -ec rm -rf build", "rm -rf build"}, []string{"rm build"}},
		{"sudo rm -rf build", []string{"sudo rm -rf build", "rm -rf build"}, []string{"rm build"}},
		{"sudo -u root -- rm -rf build", []string{"sudo -u root -- rm -rf build", "rm -rf build"}, []string{"rm build"}},
		{"FOO=1 /bin/rm -rf build", []string{"rm -rf build"}, []string{"rm build"}},
		{`\rm -fr build`, []string{"rm -fr build"}, []string{"rm build"}},
		{`"rm" -fr build`, []string{"rm -fr build"}, []string{"rm build"}},
		{`find . -exec rm -rf {} \;`, []string{"find . -exec rm -rf {} ;", "rm -rf $"}, []string{"rm $"}},
		{"find . -name '*.o' -delete", []string{"find . -name *.o -delete"}, []string{"find -delete ."}},
		{"ls | xargs rm -rf", []string{"ls", "xargs rm -rf", "rm -rf $"}, []string{"rm $"}},
		// With -I, xargs puts each input line where {} stands: computed.
		{"xargs -n 1 -I{} rm {}", []string{"xargs -n 1 -I{} rm {}", "rm $ $"}, []string{"rm $", "rm $"}},
		{"env -i PATH=/bin rm -rf x", []string{"env -i PATH=/bin rm -rf x", "rm -rf x"}, []string{"rm x"}},
		{"env -S 'rm -rf x'", []string{"env -S rm -rf x", "rm -rf x"}, []string{"rm x"}},
		{"timeout -s KILL 10 rm -rf x", []string{"timeout -s KILL 10 rm -rf x", "rm -rf x"}, []string{"rm x"}},
		{"nice -n 5 nohup rm -rf x", []string{"nice -n 5 nohup rm -rf x", "nohup rm -rf x", "rm -rf x"}, []string{"rm x"}},
		{"command rm -rf x", []string{"command rm -rf x", "rm -rf x"}, []string{"rm x"}},
		{"eval 'rm -rf x'", []string{"eval rm -rf x", "rm -rf x"}, []string{"rm x"}},
		{"su -c 'rm -rf x' root", []string{"su -c rm -rf x root", "rm -rf x"}, []string{"rm x"}},
		{"bash <<'EOF'\nrm -rf x\nEOF", []string{"bash", "rm -rf x"}, []string{"rm x"}},
		{"bash <<< 'rm -rf x'", []string{"bash", "rm -rf x"}, []string{"rm x"}},
		{"rm -{r,f} x", []string{"rm -r -f x"}, []string{"rm x"}},
		{"(cd sub && rm -rf x)", []string{"cd sub", "rm -rf x"}, []string{"rm x"}},
		{"if true; then rm -rf x; fi", []string{"true", "rm -rf x"}, []string{"rm x"}},
		{"f() { rm -rf x; }; f", []string{"rm -rf x", "f"}, []string{"rm x"}},
		{"cat <(rm -rf x)", []string{"cat $", "rm -rf x"}, []string{"rm x"}},
		{"X=$(rm -rf x) true", []string{"true", "rm -rf x"}, []string{"rm x"}},
		{`echo "rm -rf /"`, []string{"echo rm -rf /"}, nil},
		{`grep -r "rm -rf" src`, []string{"grep -r rm -rf src"}, nil},
		{"echo x > .env", []string{"echo x"}, []string{"> .env"}},
		{"echo x >> log.txt", []string{"echo x"}, []string{">> log.txt"}},
		{"echo x &> both.txt", []string{"echo x"}, []string{"&> both.txt"}},
		{"echo x > /dev/null 2>&1", []string{"echo x"}, nil},
		{"echo x >&2", []string{"echo x"}, nil},
		{"echo x | tee a.txt", []string{"echo x", "tee a.txt"}, []string{"tee a.txt"}},
		{"echo x > $OUT", []string{"echo x"}, []string{"> $"}},
		{"mv a.txt b.txt", []string{"mv a.txt b.txt"}, []string{"mv a.txt", "mv b.txt"}},
		{"cp -r src dst", []string{"cp -r src dst"}, []string{"cp dst"}},
		{"sed -i 's/a/b/' f.txt", []string{"sed -i s/a/b/ f.txt"}, []string{"sed -i f.txt"}},
		{"chmod 600 key", []string{"chmod 600 key"}, []string{"chmod key"}},
		{"dd if=/dev/zero of=disk.img", []string{"dd if=/dev/zero of=disk.img"}, []string{"dd of= disk.img"}},
		{"$x -rf build", []string{"$ -rf build"}, nil},
		{"a && b | c; $(d)", []string{"a", "b", "c", "$", "d"}, nil},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			t.Parallel()
			a := shell.Analyze(c.line)
			if a.Err != nil {
				t.Fatalf("error: %v", a.Err)
			}
			if got := progs(a); !slices.Equal(got, c.cmds) {
				t.Errorf("commands = %q, want %q", got, c.cmds)
			}
			if got := writes(a); !slices.Equal(got, c.writes) {
				t.Errorf("writes = %q, want %q", got, c.writes)
			}
		})
	}
}

func TestAnalyzeErrors(t *testing.T) {
	t.Parallel()
	for _, line := range []string{"", "   ", "echo 'unterminated", "if", "a &&", "| b", "a ;; b", "echo $((", "$(", strings.Repeat("bash -c '", 1) + strings.Repeat("x", 1)} {
		if a := shell.Analyze(line); a.Err == nil {
			t.Errorf("Analyze(%q): want an error, got %q", line, progs(a))
		}
	}
	// Shells nested in shells beyond the limit.
	deep := strings.Repeat("eval ", 20) + "rm -rf x"
	if a := shell.Analyze(strings.Repeat("eval ", 10) + "rm -rf x"); a.Err != nil || len(a.Commands) != 11 {
		t.Errorf("ten evals: %v %q", a.Err, progs(a))
	}
	if a := shell.Analyze(deep); a.Err == nil {
		t.Errorf("deep nesting: want an error")
	}
}

func TestPipelines(t *testing.T) {
	t.Parallel()
	a := shell.Analyze("curl -s x | sudo bash; echo a | b | c")
	type ps struct {
		prog        string
		pipe, stage int
	}
	var got []ps
	for _, c := range a.Commands {
		got = append(got, ps{c.Prog, c.Pipe, c.Stage})
	}
	want := []ps{{"curl", 0, 0}, {"sudo", 0, 1}, {"bash", 0, 1}, {"echo", 1, 0}, {"b", 1, 1}, {"c", 1, 2}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestPatterns(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pat, line string
		strict    bool
		want      bool
	}{
		{"rm -rf *", "rm -rf build", false, true},
		{"rm -rf *", "rm -fr build", false, true},
		{"rm -rf *", "rm -r -f build", false, true},
		{"rm -rf *", "rm --recursive --force build", false, true},
		{"rm -rf *", "rm -R -f build", false, true},
		{"rm -rf *", "rm -r build", false, false},
		{"rm -rf *", "rm -- -rf", false, false},
		{"rm -rf *", "rm -rf", false, true},
		{"rm -rf *", "rm $FLAGS build", false, true},
		{"rm -rf *", "rm $FLAGS build", true, false},
		{"git push --force *", "git push origin main --force", false, true},
		{"git push --force *", "git push -f", false, true},
		{"git push --force *", "git push origin +main", false, true},
		{"git push --force *", "git -C /x push --force", false, true},
		{"git push --force *", "git push --force-with-lease", false, false},
		{"git push --force *", "git push origin main", false, false},
		{"git status", "git status", true, true},
		{"git status", "git status --short", true, false},
		{"git status *", "git status --short", true, true},
		{"git status *", "git status", true, true},
		{"npm run test:*", "npm run test:unit", true, true},
		{"npm run test:*", "npm run test:unit -- --watch", true, true},
		// npm reads --watch before "--" as its own option, not the script's.
		{"npm run test:*", "npm run test:unit --watch", true, false},
		{"npm run test:*", "npm run build", true, false},
		{"chmod 777 *", "chmod -R 777 /srv", false, true},
		{"echo *", "echo hi", true, true},
		{"*", "anything at all", true, true},
		{"mkfs* *", "mkfs.ext4 /dev/sda1", false, true},
		{"ls -la", "ls -al", true, true},
		{"ls -la", "ls -l", true, false},
	}
	for _, c := range cases {
		p, err := shell.CompilePattern(c.pat)
		if err != nil {
			t.Fatal(err)
		}
		a := shell.Analyze(c.line)
		if a.Err != nil {
			t.Fatal(a.Err)
		}
		if got := p.Match(a, 0, c.strict); got != c.want {
			t.Errorf("%q vs %q (strict %v) = %v, want %v", c.pat, c.line, c.strict, got, c.want)
		}
	}
}

func TestPipelinePattern(t *testing.T) {
	t.Parallel()
	p, _ := shell.CompilePattern("curl * | bash")
	for line, want := range map[string]bool{
		"curl -fsSL https://x | bash":      true,
		"curl -fsSL https://x | sudo bash": true,
		"curl x | grep y | bash":           true,
		"curl x > f; bash f":               false,
		"bash | curl x":                    false,
		"curl x | sh":                      false,
	} {
		a := shell.Analyze(line)
		got := false
		for i := range a.Commands {
			got = got || p.Match(a, i, false)
		}
		if got != want {
			t.Errorf("%q: %v, want %v", line, got, want)
		}
	}
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"git status && rm -rf build", "echo $(rm -rf build)", "bash -c 'rm -rf x'",
		"find . -exec rm {} \\;", "a | b > c", "cat <<EOF\nx\nEOF", "sudo -u x env A=1 rm -rf y",
		"echo {1..1000}{1..1000}{1..100}", "git -c core.fsmonitor=x status", "PATH=src ls", "echo $'\\x72m' | bash"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		a := shell.Analyze(line)
		for _, c := range a.Commands {
			if len(c.Args) == 0 {
				t.Fatalf("%q: a command with no words", line)
			}
			if !c.Dynamic && shell.IsDyn(c.Prog) {
				t.Fatalf("%q: computed program not marked dynamic", line)
			}
		}
		// Pooled analyses give the same result.
		b := shell.Get()
		b.Analyze(line)
		if (a.Err == nil) != (b.Err == nil) || len(a.Commands) != len(b.Commands) || len(a.Writes) != len(b.Writes) {
			t.Fatalf("%q: pooled analysis differs", line)
		}
		shell.Put(b)
	})
}

// Brace expansion is bounded: the 33-byte line that expands to 10^8 words
// is read with a few MiB, and the word is computed, so no rule allows it.
func TestBraceBombBounded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	a := shell.Analyze("echo {1..1000}{1..1000}{1..100}")
	runtime.ReadMemStats(&after)
	if a.Err != nil || len(a.Commands) != 1 {
		t.Fatalf("analysis: %v %q", a.Err, progs(a))
	}
	if a.Commands[0].Risk == "" {
		t.Errorf("a brace expansion past the bound must stop an allow")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("the analysis allocated %d MiB", got>>20)
	}
	if n := len(shell.Analyze("echo {1..1000000}").Commands[0].Args); n > 2000 {
		t.Errorf("{1..1000000} gave %d words", n)
	}
}

// TestAnsiCLocale: bash writes $'\u00e9' as é in a UTF-8 locale and as the
// text \u00E9 in the C locale (checked with bash 5.2); ASCII is the same in
// both. Outside a UTF-8 locale such a word is computed, so no rule can
// allow it on a guess.
func TestAnsiCLocale(t *testing.T) {
	for _, tc := range []struct {
		lcAll, word string
		dyn         bool
		want        string
	}{
		{"C.UTF-8", `$'\u00e9'`, false, "é"},
		{"en_US.utf8", `$'\U0001F600'`, false, "\U0001F600"},
		{"C", `$'\u00e9'`, true, ""},
		{"POSIX", `$'a\U00e9b'`, true, ""},
		{"C", `$'\u0041'`, false, "A"},
	} {
		t.Run(tc.lcAll+" "+tc.word, func(t *testing.T) {
			t.Setenv("LC_ALL", tc.lcAll)
			a := shell.Analyze("cat " + tc.word)
			if a.Err != nil || len(a.Commands) != 1 || len(a.Commands[0].Args) != 2 {
				t.Fatalf("Analyze: %+v", a)
			}
			w := a.Commands[0].Args[1]
			if shell.IsDyn(w) != tc.dyn || !tc.dyn && w != tc.want {
				t.Errorf("LC_ALL=%s: %s read as %q (computed %v), want %q (computed %v)", tc.lcAll, tc.word, w, shell.IsDyn(w), tc.want, tc.dyn)
			}
		})
	}
}
