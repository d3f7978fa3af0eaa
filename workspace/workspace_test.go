package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden/engine"
)

// Interface guard.
var _ engine.Workspace = (*View)(nil)

// settle waits until what the test wrote is older than the clock step
// within which the View does not remember an answer (racy), so that the
// answers read next are remembered.
func settle(t *testing.T) {
	t.Helper()
	time.Sleep(fineStep + 150*time.Millisecond)
}

func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func write(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func facts(v *View) int {
	g := v.cur.Load()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.facts
}

// An answer is remembered until Refresh finds what it depends on changed:
// a name made in a folder (Lstat, Stat), a link made to lead elsewhere
// (Readlink, Stat through it), an entry added (ReadDir), a file written
// (ReadFile).
func TestViewRefreshSeesEachChange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		setup  func(dir string)
		read   func(v *View, dir string) string
		change func(dir string)
	}{
		{"a name made in a folder", func(dir string) { write(t, filepath.Join(dir, "src", "a.go"), "x") },
			func(v *View, dir string) string {
				_, err := v.Lstat(filepath.Join(dir, "src", ".git"))
				return errText(err)
			},
			func(dir string) { write(t, filepath.Join(dir, "src", ".git"), "gitdir: /elsewhere\n") }},
		{"a file made where none was (Stat)", func(dir string) {},
			func(v *View, dir string) string {
				fi, err := v.Stat(filepath.Join(dir, "HEAD"))
				return errText(err) + modeText(fi)
			},
			func(dir string) { write(t, filepath.Join(dir, "HEAD"), "ref: refs/heads/main\n") }},
		{"a link made to lead elsewhere", func(dir string) {
			write(t, filepath.Join(dir, "a", "x"), "a")
			write(t, filepath.Join(dir, "b", "x"), "b")
			if err := os.Symlink("a", filepath.Join(dir, "l")); err != nil {
				t.Fatal(err)
			}
		},
			func(v *View, dir string) string {
				text, err := v.Readlink(filepath.Join(dir, "l"))
				return text + errText(err)
			},
			func(dir string) {
				os.Remove(filepath.Join(dir, "l"))
				if err := os.Symlink("b", filepath.Join(dir, "l")); err != nil {
					t.Fatal(err)
				}
			}},
		{"what a link leads to made a folder", func(dir string) {
			write(t, filepath.Join(dir, "t"), "file")
			if err := os.Symlink("t", filepath.Join(dir, "l")); err != nil {
				t.Fatal(err)
			}
		},
			func(v *View, dir string) string {
				fi, err := v.Stat(filepath.Join(dir, "l"))
				return errText(err) + modeText(fi)
			},
			func(dir string) {
				os.Remove(filepath.Join(dir, "t"))
				if err := os.Mkdir(filepath.Join(dir, "t"), 0o755); err != nil {
					t.Fatal(err)
				}
			}},
		{"an entry added to a folder", func(dir string) { write(t, filepath.Join(dir, "d", "a"), "a") },
			func(v *View, dir string) string {
				ents, err := v.ReadDir(filepath.Join(dir, "d"))
				s := errText(err)
				for _, e := range ents {
					s += e.Name() + ","
				}
				return s
			},
			func(dir string) { write(t, filepath.Join(dir, "d", ".env"), "KEY=1") }},
		{"a file written again with its old size and times", func(dir string) { write(t, filepath.Join(dir, ".gitignore"), "*.env\n") },
			func(v *View, dir string) string {
				data, err := v.ReadFile(filepath.Join(dir, ".gitignore"))
				return string(data) + errText(err)
			},
			func(dir string) {
				f := filepath.Join(dir, ".gitignore")
				fi, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				write(t, f, "*.txt\n")
				// Only the change time tells: the modification time is
				// set back as it was.
				if err := os.Chtimes(f, fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		for _, mode := range modes {
			t.Run(mode+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				dir := tempDir(t)
				c.setup(dir)
				settle(t)
				v := newView(t, mode)
				before := c.read(v, dir)
				if facts(v) == 0 {
					t.Fatalf("nothing remembered of %q", before)
				}
				watching(t, v, mode)
				c.change(dir)
				if got := c.read(v, dir); got != before {
					t.Fatalf("the View read the disk again before Refresh: %q, then %q", before, got)
				}
				if !v.Refresh() {
					t.Fatalf("Refresh did not see the change")
				}
				live := c.read(Live(), dir)
				if live == before {
					t.Fatalf("the change changed nothing: %q", live)
				}
				if got := c.read(v, dir); got != live {
					t.Errorf("after Refresh: %q, the disk says %q", got, live)
				}
			})
		}
	}
}

// A change made after an answer was read and before the Refresh that
// first watches what it depends on is seen by that Refresh: the path is
// watched, then stat'ed against its stamp.
func TestViewFirstRefreshSeesAnEarlierChange(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := tempDir(t)
			d := filepath.Join(dir, "d")
			write(t, filepath.Join(d, "one"), "")
			settle(t)
			v := newView(t, mode)
			if ents, _ := v.ReadDir(d); len(ents) != 1 {
				t.Fatalf("listed %d entries", len(ents))
			}
			write(t, filepath.Join(d, "two"), "")
			if !v.Refresh() {
				t.Fatal("the first Refresh did not see a change made before it")
			}
			if ents, _ := v.ReadDir(d); len(ents) != 2 {
				t.Errorf("after Refresh: %d entries, want 2", len(ents))
			}
		})
	}
}

// modes are the two ways a Refresh checks: the system's watcher, and a
// stat of each stamped path (where there is no watcher).
var modes = []string{"watch", "stat"}

// newView is New, with the watcher turned off in the mode "stat".
func newView(t *testing.T, mode string) *View {
	v := New()
	if mode == "stat" {
		v.triedW = true
	}
	return v
}

// watching refreshes v, which must keep what it remembers, and in the
// mode "watch" checks that every stamped path that leads to a folder or to
// nothing is watched from then on (a change after it is found by the
// watcher alone, no stat), and every one that leads to a file is not (a
// write through a shared mapping sends no event: a stat each Refresh).
func watching(t *testing.T, v *View, mode string) {
	t.Helper()
	if v.Refresh() {
		t.Fatal("Refresh forgot though nothing changed")
	}
	if mode != "watch" {
		return
	}
	if v.w == nil {
		t.Skip("no watcher on this system")
	}
	g := v.cur.Load()
	for i, p := range g.paths {
		fi, err := os.Stat(p)
		file := err == nil && !fi.IsDir()
		if g.watched[i] == file {
			t.Fatalf("%s (a file: %v) watched: %v", p, file, g.watched[i])
		}
	}
}

func errText(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "missing"
	}
	if err != nil {
		return "error"
	}
	return ""
}

func modeText(fi fs.FileInfo) string {
	if fi == nil {
		return ""
	}
	return fi.Mode().Type().String()
}

// Refresh keeps what nothing changed: a file written elsewhere, a name
// made beside a folder on the way, a file written in a folder whose
// entries are not asked for.
func TestViewRefreshKeepsWhatHolds(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := tempDir(t)
			write(t, filepath.Join(dir, "src", "a.go"), "package a")
			settle(t)
			v := newView(t, mode)
			if _, err := v.Lstat(filepath.Join(dir, ".git")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Lstat: %v", err)
			}
			if _, err := v.ReadFile(filepath.Join(dir, "src", "a.go")); err != nil {
				t.Fatal(err)
			}
			n := facts(v)
			watching(t, v, mode)
			write(t, filepath.Join(t.TempDir(), "other"), "x")
			if err := os.Mkdir(dir+"-beside", 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, "src", "b.go"), "package a")
			if v.Refresh() || facts(v) != n {
				t.Errorf("Refresh forgot after a change elsewhere (%d facts, had %d)", facts(v), n)
			}
		})
	}
}

// What a path resolves through changes, the folder it leads to untouched:
// a folder on the way replaced, a link on the way led elsewhere, the
// folder a link leads into moved, a missing folder made, a folder reached
// through a link and "..", a file on the way made a folder. Refresh sees
// each, in both modes; in the mode "watch", by the watcher's events.
func TestViewRefreshSeesTheWay(t *testing.T) {
	t.Parallel()
	link := func(t *testing.T, to, at string) {
		t.Helper()
		if err := os.Symlink(to, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		path   string // listed, below the test's folder
		setup  func(t *testing.T, dir string)
		change func(t *testing.T, dir string)
	}{
		{"a folder on the way replaced", "p/q",
			func(t *testing.T, dir string) { write(t, filepath.Join(dir, "p", "q", "one"), "") },
			func(t *testing.T, dir string) {
				if err := os.Rename(filepath.Join(dir, "p"), filepath.Join(dir, "p.old")); err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "p", "q", "two"), "")
			}},
		{"a link on the way led elsewhere", "l/d",
			func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "a", "d", "one"), "")
				write(t, filepath.Join(dir, "b", "d", "two"), "")
				link(t, "a", filepath.Join(dir, "l"))
			},
			func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, "l"))
				link(t, "b", filepath.Join(dir, "l"))
			}},
		{"the folder a link leads into moved", "l/d",
			func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "t", "x", "d", "one"), "")
				link(t, filepath.Join(dir, "t", "x"), filepath.Join(dir, "l"))
			},
			func(t *testing.T, dir string) {
				if err := os.Rename(filepath.Join(dir, "t"), filepath.Join(dir, "t2")); err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "t", "x", "d", "two"), "")
			}},
		{"a missing folder made", "m/n",
			func(t *testing.T, dir string) {},
			func(t *testing.T, dir string) { write(t, filepath.Join(dir, "m", "n", "two"), "") }},
		{"a folder reached through a link and ..", "l/../d",
			func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "s", "d", "one"), "")
				write(t, filepath.Join(dir, "d", "lexical"), "")
				if err := os.MkdirAll(filepath.Join(dir, "s", "deep"), 0o755); err != nil {
					t.Fatal(err)
				}
				link(t, filepath.Join("s", "deep"), filepath.Join(dir, "l"))
			},
			func(t *testing.T, dir string) { write(t, filepath.Join(dir, "s", "d", "two"), "") }},
		{"a file on the way made a folder", "g/d",
			func(t *testing.T, dir string) { write(t, filepath.Join(dir, "g"), "file") },
			func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, "g"))
				write(t, filepath.Join(dir, "g", "d", "two"), "")
			}},
	} {
		for _, mode := range modes {
			t.Run(mode+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				dir := tempDir(t)
				c.setup(t, dir)
				settle(t)
				v := newView(t, mode)
				// Joined by hand: filepath.Join would clean "l/..".
				p := dir + "/" + c.path
				list := func(v *View) string {
					ents, err := v.ReadDir(p)
					s := errText(err)
					for _, e := range ents {
						s += e.Name() + ","
					}
					return s
				}
				before := list(v)
				if facts(v) == 0 {
					t.Fatalf("nothing remembered of %q", before)
				}
				watching(t, v, mode)
				c.change(t, dir)
				if !v.Refresh() {
					t.Fatalf("Refresh did not see the change (listed %q)", before)
				}
				live := list(Live())
				if live == before {
					t.Fatalf("the change changed nothing: %q", live)
				}
				if got := list(v); got != live {
					t.Errorf("after Refresh: %q, the disk says %q", got, live)
				}
			})
		}
	}
}

// An answer read within the clock step of a change is not remembered: a
// change right after it may leave the times as they were.
func TestViewForgetsRacyAnswers(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	f := filepath.Join(dir, "config")
	write(t, f, "a")
	v := New()
	if data, _ := v.ReadFile(f); string(data) != "a" {
		t.Fatalf("read %q", data)
	}
	write(t, f, "b")
	if data, _ := v.ReadFile(f); string(data) != "b" {
		t.Errorf("a racy answer was remembered: %q after the file became b", data)
	}
}

// A View stops remembering at its limits and starts afresh at the next
// Refresh, so that a Refresh stats at most maxDeps paths.
func TestViewLimits(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	for i := range maxDeps + 10 {
		if err := os.Mkdir(filepath.Join(dir, "d"+string(rune('a'+i%26))+string(rune('a'+i/26%26))), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	settle(t)
	v := New()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		v.ReadDir(filepath.Join(dir, e.Name()))
	}
	g := v.cur.Load()
	if len(g.paths) != maxDeps || !g.stale {
		t.Fatalf("%d paths remembered, stale %v; want %d, true", len(g.paths), g.stale, maxDeps)
	}
	if !v.Refresh() || facts(v) != 0 {
		t.Errorf("Refresh at the limit kept %d facts", facts(v))
	}
}

// Live remembers nothing.
func TestLiveRemembersNothing(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	f := filepath.Join(dir, "a")
	write(t, f, "a")
	settle(t)
	v := Live()
	v.ReadFile(f)
	write(t, f, "b")
	if data, _ := v.ReadFile(f); string(data) != "b" {
		t.Errorf("Live read %q", data)
	}
}

// Decisions read a View while another goroutine refreshes it (run with
// -race): every answer is the disk's, before or after the change.
func TestViewConcurrentRefresh(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	f := filepath.Join(dir, "a")
	write(t, f, "one")
	settle(t)
	v := New()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				data, err := v.ReadFile(f)
				if err != nil || !bytes.Equal(data, []byte("one")) && !bytes.Equal(data, []byte("two")) {
					t.Errorf("read %q, %v", data, err)
					return
				}
				v.Lstat(filepath.Join(dir, ".git"))
			}
		}()
	}
	for range 50 {
		v.Refresh()
	}
	// Replaced whole (a write in place passes through an empty file).
	write(t, f+".new", "two")
	if err := os.Rename(f+".new", f); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		v.Refresh()
	}
	close(stop)
	wg.Wait()
	v.Refresh()
	if data, _ := v.ReadFile(f); string(data) != "two" {
		t.Errorf("after the change and Refresh: %q", data)
	}
}

// Git lists nothing, without an error, where git finds no repository.
func TestGitWithoutRepository(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	out, err := New().Git(dir, "ls-files", "-z")
	if err != nil || len(out) != 0 {
		t.Errorf("git ls-files outside a repository: %q, %v", out, err)
	}
}

// BenchmarkRefresh is the check hookd and serve make before each decision,
// for the answers a `git status` in the root reads (its .git, a HEAD),
// for the 19 folders a serve process's decisions depended on in the e2e
// benchmark (the home folder's agent folders, the PATH's folders, the
// project's), and for those and two files, with the watcher and by a stat
// each.
func BenchmarkRefresh(b *testing.B) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var many []string
	for i := range 19 {
		many = append(many, filepath.Join(dir, "d"+strconv.Itoa(i), "sub"))
		if err := os.MkdirAll(many[i], 0o755); err != nil {
			b.Fatal(err)
		}
	}
	files := []string{filepath.Join(dir, "warden.yaml"), filepath.Join(dir, ".warden", "serve-tokens.json")}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(fineStep + 150*time.Millisecond)
	for _, paths := range []struct {
		name string
		read func(v *View)
		n    int
	}{
		{"git-status", func(v *View) {
			v.Lstat(filepath.Join(dir, ".git"))
			v.Stat(filepath.Join(dir, "HEAD"))
		}, 2},
		{"paths=19", func(v *View) {
			for _, p := range many {
				v.Stat(p)
			}
		}, len(many)},
		// A service's: the folders, and two files (the policy, the
		// tokens), which are stat'ed each time.
		{"paths=19+files=2", func(v *View) {
			for _, p := range many {
				v.Stat(p)
			}
			v.Stat(files[0])
			v.Stat(files[1])
		}, len(many) + 2},
	} {
		for _, mode := range modes {
			b.Run(paths.name+"/"+mode, func(b *testing.B) {
				v := New()
				if mode == "stat" {
					v.triedW = true
				}
				paths.read(v)
				if facts(v) != paths.n {
					b.Fatalf("%d answers remembered", facts(v))
				}
				b.ReportAllocs()
				for b.Loop() {
					if v.Refresh() {
						b.Fatal("forgot")
					}
				}
			})
		}
	}
}

// BenchmarkLstat is a remembered answer, as the engine reads it.
func BenchmarkLstat(b *testing.B) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(fineStep + 150*time.Millisecond)
	v := New()
	name := filepath.Join(dir, ".git")
	v.Lstat(name)
	b.ReportAllocs()
	for b.Loop() {
		v.Lstat(name)
	}
}
