package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The command blocks of README.md and docs/*.md are run by TestDocBlocks,
// as written. A page marks a block it cannot run here with an HTML comment
// on the line before the block's fence (docs/testing.md, "The docs' own
// test"):
//
//	<!-- doc-test: skip REASON -->             the block is not run
//	<!-- doc-test: skip-line LINE: REASON -->  the block runs without that line
//
// A reason is required, so that a reader sees why the block is not run
// and which test runs it instead.

// docBlock is one command block of a page (a fence of language sh, bash
// or shell).
type docBlock struct {
	page string // relative to the repository, such as docs/hosts.md
	line int    // of the opening fence
	text string
	skip string   // the reason the block is not run; empty: it runs
	drop []string // lines left out, each with its reason
	// nextJSON is the page's first json block after this one, if any.
	nextJSON string
}

// docWant is what a block shows when it runs.
type docWant struct {
	exit  int      // the block's exit status (the last command's)
	shows []string // text its output contains, or with "re:" a regular expression it matches
	// json: the first JSON object of the output equals the page's next
	// json block after this one (the output the page shows).
	json bool
}

// docWants names, by page and the start of a block, what the block must
// show; a block not named here must exit 0. Every entry must match a
// block, so that this table follows the pages.
var docWants = map[string]map[string]docWant{
	"README.md": {
		// The first command: a deny, which `go run` reports as exit status 2 (and exits 1).
		"# Decide a tool call": {exit: 1, shows: []string{`"decision": "deny"`, `"code": "RULE_DENY"`, `"rule": "no-rm-rf"`,
			`"suggestion": "Delete specific files by name, or ask the user to remove the folder."`, "exit status 2"}, json: true},
		`cd "$(mktemp -d)"`: {shows: []string{"wrote a starter policy", "for go", "every check passed"}},
		"cd examples/coding": {shows: []string{"APPROVAL REQUIRED: RULE_ASK", "approved a-", "## ALLOWED",
			"Rule: grant:g-", `re:(?m)^\S+ \S+ +S +- +Bash +ask +RULE_ASK`, `re:(?m)^\S+ \S+ +S +- +Bash +allow +ALLOWED +grant:g-`, "revoked g-"}},
	},
	"docs/sessions.md": {
		"cd examples/coding": {shows: []string{"APPROVAL REQUIRED: RULE_ASK", "approved a-", "Rule: grant:g-", "ALLOWED  grant:g-",
			"rejected a-", "APPROVAL_REJECTED", "Their message: Open a pull request instead.", "by rule grant:g-",
			"WARDEN REMINDER", "revoked g-", "approvals: 0 dropped"}},
	},
	"docs/hosts.md": {
		`cd "$(mktemp -d)"`: {shows: []string{"wrote a starter policy", "for go", "every check passed"}},
	},
	"docs/check.md": {
		"warden lint": {exit: 2, shows: []string{"52 passed, 0 failed", "12 passed, 0 failed", "decision: deny"}},
	},
	"docs/compile.md": {
		"go run ./examples/compile/replay": {shows: []string{"ok: rule ask-before-send (ask), 2 tests pass",
			"+  - id: support-no-ticket-delete", "4 rules: 4 compiled, 0 kept, 0 failed", "not written: run again with --write"}},
	},
	"docs/client.md": {
		"go run ./examples/middleware": {shows: []string{"mail.send: allow", "mail.batch_delete: deny", "APPROVAL REQUIRED"}},
	},
	"docs/mcp.md": {
		"warden init claude": {shows: []string{".mcp.json", "config.toml", "settings.json", "opencode.json"}},
	},
	"docs/reports.md": {
		// One accepted response; a response held for its metadata, then the retry; the filtered stream.
		"go run ./cmd/warden report check": {shows: []string{"result: FINAL after 1 turn(s)", `meta "support": schema_invalid`,
			"## Final answer not accepted yet", "result: FINAL after 2 turn(s)",
			"re:(?m)^bank and was retried. The duplicate charge has been refunded; it will appear$"}},
	},
}

// docFailures are texts no block may show: a command or flag the docs name
// that warden does not have, or a block run in the wrong folder.
var docFailures = []string{"command not found", "flag provided but not defined", "Usage:", "unknown command",
	"no warden.yaml", "panic:"}

// docPages returns README.md and every page of docs/, relative to root.
func docPages(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range pages {
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

var docMarker = regexp.MustCompile(`^<!-- doc-test: (skip|skip-line) (.*?) -->$`)

// docBlocks reads the command blocks of one page, with their markers.
func docBlocks(t *testing.T, root, page string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		fence, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			if m := docMarker.FindStringSubmatch(lines[i]); m == nil && strings.Contains(lines[i], "doc-test:") {
				t.Errorf("%s:%d: a doc-test marker this test does not read: %s", page, i+1, lines[i])
			}
			continue
		}
		start := i
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		if i == len(lines) {
			t.Errorf("%s:%d: a code block that is never closed", page, start+1)
		}
		switch strings.TrimSpace(fence) {
		case "sh", "bash", "shell":
		case "json":
			for k := range blocks {
				if blocks[k].nextJSON == "" {
					blocks[k].nextJSON = strings.Join(body, "\n")
				}
			}
			continue
		default:
			continue
		}
		b := docBlock{page: page, line: start + 1, text: strings.Join(body, "\n") + "\n"}
		if start > 0 {
			if m := docMarker.FindStringSubmatch(lines[start-1]); m != nil {
				switch m[1] {
				case "skip":
					b.skip = strings.TrimSpace(m[2])
					if b.skip == "" {
						t.Errorf("%s:%d: doc-test: skip needs a reason", page, start)
					}
				case "skip-line":
					line, why, ok := strings.Cut(m[2], ": ")
					if !ok || strings.TrimSpace(why) == "" {
						t.Errorf("%s:%d: doc-test: skip-line needs LINE: REASON", page, start)
					}
					if !strings.Contains("\n"+b.text, "\n"+line+"\n") {
						t.Errorf("%s:%d: doc-test: skip-line %q is no line of the block", page, start, line)
					}
					b.drop = append(b.drop, line)
				}
			}
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// TestDocBlocks runs every command block of README.md and docs/*.md as
// written, page by page, each page in a copy of the repository of its own
// (its blocks in order, from the copy's root, so a block may build on the
// one before), with the built warden and warden-hook on PATH, and checks
// what each shows. Blocks marked doc-test: skip are not run (each says
// why and which test runs it instead).
func TestDocBlocks(t *testing.T) {
	t.Parallel()
	root := repoRoot
	sock, err := os.MkdirTemp("", "whd-") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command(wardenBin, "hookd", "stop", "--socket", filepath.Join(sock, "hookd.sock")).Run()
		os.RemoveAll(sock)
	})
	// The blocks' go commands build from the module cache and build cache
	// this test was built with, and never reach the network.
	gocache, modcache := goEnv(t, "GOCACHE"), goEnv(t, "GOMODCACHE")

	used := map[string]map[string]bool{}
	ran := map[string]bool{} // the pages whose subtest ran (-run may choose some)
	for _, page := range docPages(t, root) {
		blocks := docBlocks(t, root, page)
		used[page] = map[string]bool{}
		run := 0
		for _, b := range blocks {
			if b.skip == "" {
				run++
			}
		}
		if run == 0 {
			continue
		}
		t.Run(page, func(t *testing.T) {
			ran[page] = true
			work := filepath.Join(t.TempDir(), "warden")
			copyRepo(t, root, work)
			home := filepath.Join(t.TempDir(), "home")
			mustMkdir(t, home)
			env := []string{"PATH=" + filepath.Dir(wardenBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
				"HOME=" + home, "TMPDIR=" + t.TempDir(), "GOPATH=" + filepath.Join(home, "go"), "GOCACHE=" + gocache,
				"GOMODCACHE=" + modcache, "GOPROXY=off", "GOTOOLCHAIN=local",
				"WARDEN_HOOKD_SOCKET=" + filepath.Join(sock, "hookd.sock"), "LANG=C.UTF-8"}
			if v := os.Getenv("WARDEN_HOOK_TIMEOUT"); v != "" {
				env = append(env, "WARDEN_HOOK_TIMEOUT="+v)
			}
			// And with the flags it was built with (./test.sh builds as
			// the release does), so that they find its compiled packages.
			for _, k := range []string{"GOFLAGS", "CGO_ENABLED"} {
				if v, ok := os.LookupEnv(k); ok {
					env = append(env, k+"="+v)
				}
			}
			for _, b := range blocks {
				if b.skip != "" {
					continue
				}
				text := b.text
				for _, d := range b.drop {
					text = strings.Replace("\n"+text, "\n"+d+"\n", "\n", 1)[1:]
				}
				code, out := runDocBlock(t, work, env, text)
				where := fmt.Sprintf("%s:%d", b.page, b.line)
				want, named := docWant{}, false
				for prefix, w := range docWants[page] {
					if strings.HasPrefix(b.text, prefix) {
						want, named = w, true
						used[page][prefix] = true
					}
				}
				if code != want.exit {
					t.Errorf("%s: the block exited %d, want %d (named in docWants: %v):\n%s\n--- output:\n%s", where, code, want.exit, named, b.text, out)
				}
				for _, s := range want.shows {
					if re, ok := strings.CutPrefix(s, "re:"); ok {
						if !regexp.MustCompile(re).MatchString(out) {
							t.Errorf("%s: the block shows no match of %s:\n%s", where, re, out)
						}
					} else if !strings.Contains(out, s) {
						t.Errorf("%s: the block does not show %q:\n%s", where, s, out)
					}
				}
				if want.json {
					checkDocJSON(t, where, b.nextJSON, out)
				}
				for _, s := range docFailures {
					if strings.Contains(out, s) {
						t.Errorf("%s: the block shows %q, a command that failed:\n%s", where, s, out)
					}
				}
			}
		})
	}
	for page, wants := range docWants {
		if !ran[page] {
			if _, err := os.Stat(filepath.Join(root, page)); err != nil {
				t.Errorf("docWants names %s, which is not there", page)
			}
			continue
		}
		for prefix := range wants {
			if !used[page][prefix] {
				t.Errorf("docWants names a block of %s starting with %q that is not there (or not run)", page, prefix)
			}
		}
	}
}

// checkDocJSON checks that the first JSON object of out equals the JSON
// the page shows for it.
func checkDocJSON(t *testing.T, where, shown, out string) {
	t.Helper()
	var want, got any
	if err := json.Unmarshal([]byte(shown), &want); err != nil || shown == "" {
		t.Errorf("%s: the page shows no JSON after the block (%v)", where, err)
		return
	}
	i := strings.Index(out, "{")
	if i < 0 {
		t.Errorf("%s: the block prints no JSON object:\n%s", where, out)
		return
	}
	if err := json.NewDecoder(strings.NewReader(out[i:])).Decode(&got); err != nil {
		t.Errorf("%s: the block's JSON: %v\n%s", where, err, out)
		return
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("%s: the block prints\n%s\nbut the page shows\n%s", where, g, shown)
	}
}

// runDocBlock runs one block with bash in dir and returns its exit status
// and output. What the block leaves running in the background (a server
// it started with &) is killed when the block ends.
func runDocBlock(t *testing.T, dir string, env []string, block string) (int, string) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out-")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", block)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err = cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	data, rerr := os.ReadFile(out.Name())
	if rerr != nil {
		t.Fatal(rerr)
	}
	if ctx.Err() != nil {
		t.Errorf("the block did not finish within 5 minutes:\n%s", block)
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("run the block: %v", err)
	}
	return cmd.ProcessState.ExitCode(), string(data)
}

// copyRepo copies the repository's files (those git tracks, or every file
// but .git and .warden when git cannot say) from root to dst.
func copyRepo(t *testing.T, root, dst string) {
	t.Helper()
	var files []string
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output(); err == nil {
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
	} else {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == ".warden") {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				rel, _ := filepath.Rel(root, p)
				files = append(files, rel)
			}
			return nil
		})
	}
	for _, f := range files {
		src := filepath.Join(root, f)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // removed from the work tree, or a link
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, f)
		mustMkdir(t, filepath.Dir(p))
		if err := os.WriteFile(p, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocLinks checks every link of README.md and docs/*.md that points
// into the repository: the file exists, and a #anchor names a heading of
// the page it points to (as GitHub makes anchors from headings).
func TestDocLinks(t *testing.T) {
	root := repoRoot
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := headingAnchors(t, file)
		anchors[file] = a
		return a
	}
	links := 0
	for _, page := range docPages(t, root) {
		f, err := os.Open(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		n, inFence := 0, false
		for sc.Scan() {
			n++
			line := sc.Text()
			if strings.HasPrefix(line, "```") {
				inFence = !inFence
				continue
			}
			if inFence {
				continue
			}
			line = inlineCode.ReplaceAllString(line, "")
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				path := filepath.Join(root, page)
				if file != "" {
					path = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
				}
				fi, err := os.Stat(path)
				if err != nil {
					t.Errorf("%s:%d: link %s: %v", page, n, target, err)
					continue
				}
				if anchor == "" {
					continue
				}
				if fi.IsDir() || !strings.HasSuffix(path, ".md") {
					t.Errorf("%s:%d: link %s: an anchor into a file that is no Markdown page", page, n, target)
					continue
				}
				if !anchorsOf(path)[anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading with the anchor #%s", page, n, target, filepath.Base(path), anchor)
				}
			}
		}
		f.Close()
	}
	if links < 20 {
		t.Errorf("only %d links into the repository found: is the link pattern still right?", links)
	}
}

var inlineCode = regexp.MustCompile("`[^`]*`")

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file: the heading's text in lower case, without punctuation
// other than '-' and '_', spaces as '-', and -1, -2, ... on repeats.
func headingAnchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		if k := seen[a]; k > 0 {
			out[fmt.Sprintf("%s-%d", a, k)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocPaths checks that the repository paths the pages name exist: a
// path in inline code (`engine/decide.go`, `shell/progs/`) and, in the
// plain code blocks that draw the packages (docs/architecture.md), each
// word that is a path. A name counts as a repository path when its first
// part is a file or folder at the repository's root; a name with a glob
// must match at least one file. So a package that moves, or a file that is
// renamed, shows here as the page that still names it.
func TestDocPaths(t *testing.T) {
	root := repoRoot
	top := map[string]bool{}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			top[e.Name()] = true
		}
	}
	pathLike := regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.*-]+)+/?$`)
	word := regexp.MustCompile(`[A-Za-z0-9_.*/-]+`)
	checked := 0
	check := func(page string, n int, p string) {
		p = strings.TrimRight(p, ".,:;")
		if !pathLike.MatchString(p) || !top[strings.SplitN(p, "/", 2)[0]] {
			return
		}
		checked++
		// A placeholder in capitals (HOST.json, NAME) stands for any name.
		p = placeholder.ReplaceAllString(p, "${1}*${2}")
		// A Go name in its package: internal/hookd.Client.Run.
		if dir, name, ok := goName(p); ok {
			if !declares(filepath.Join(root, filepath.FromSlash(dir)), name) {
				t.Errorf("%s:%d: %s: package %s declares no %s", page, n, p, dir, name)
			}
			return
		}
		if strings.Contains(p, "*") {
			if m, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(p))); len(m) == 0 {
				t.Errorf("%s:%d: %s matches no file of the repository", page, n, p)
			}
			return
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Errorf("%s:%d: %s is no file or folder of the repository", page, n, p)
		}
	}
	for _, page := range docPages(t, root) {
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		fence := ""
		inFence := false
		for i, line := range strings.Split(string(data), "\n") {
			if f, ok := strings.CutPrefix(line, "```"); ok {
				if !inFence {
					fence = strings.TrimSpace(f)
				}
				inFence = !inFence
				continue
			}
			switch {
			case inFence && fence == "" && page == "docs/architecture.md":
				for _, w := range word.FindAllString(line, -1) {
					check(page, i+1, w)
				}
			case !inFence:
				for _, m := range inlineCode.FindAllString(line, -1) {
					check(page, i+1, strings.Trim(m, "`"))
				}
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d repository paths found in the pages: is the pattern still right?", checked)
	}
}

var placeholder = regexp.MustCompile(`(^|/)[A-Z][A-Z_]+((\.[a-z]+)?(/|$))`)

// goName splits pkg/path.Name.Method into the package's folder and the
// last name, when the path names a Go identifier rather than a file.
func goName(p string) (dir, name string, ok bool) {
	i := strings.LastIndexByte(p, '/')
	dot := strings.IndexByte(p[i+1:], '.')
	if dot < 0 {
		return "", "", false
	}
	rest := p[i+1+dot+1:]
	if rest == "" || !(rest[0] >= 'A' && rest[0] <= 'Z') {
		return "", "", false // a file name such as sessions.go
	}
	names := strings.Split(rest, ".")
	return p[:i+1+dot], names[len(names)-1], true
}

// declares reports whether a Go file of the folder dir names name as a
// declared identifier (a func, method, type, var or const).
func declares(dir, name string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	decl := regexp.MustCompile(`(?m)^(func (\([^)]*\) )?` + regexp.QuoteMeta(name) + `\b|type ` + regexp.QuoteMeta(name) + `\b|\t` + regexp.QuoteMeta(name) + `\s+(=|[A-Za-z*\[])|(var|const) ` + regexp.QuoteMeta(name) + `\b)`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err == nil && decl.Match(data) {
			return true
		}
	}
	return false
}
