// Package workspace gathers what the engine knows of the file system into
// a view (engine.Workspace), so that the engine itself never reads the
// disk: whether a folder is a git repository, which paths are links and
// where they lead, which files a folder holds, what git's index and ignore
// files say.
//
// A View kept across decisions (New) remembers each answer it read with a
// stamp of what the answer depends on: the folder that holds a name (for a
// name's type and a link's text), the file or folder itself (for what a
// path leads to, a folder's entries, a file's contents). A stamp is the
// file's identity (device, inode), type, size, and change and modification
// times. Refresh is the validity check: it starts afresh when a stamped
// path changed. On Linux the process's inotify watcher covers each stamped
// path that leads to a folder or to nothing once a Refresh has stat'ed it
// (the folders it resolves through, the folder it leads to, the mount
// table; watch_linux.go), so a Refresh that finds nothing changed is one
// poll and a stat of each stamped file; a path the watcher cannot cover
// (a file, whose contents a shared mapping changes with no event, a
// network file system, a folder it may not read) is stat'ed again by
// each Refresh, as every path is elsewhere. An answer whose
// stamp is too recent to tell a later change by its times (within the file
// system's clock step of the read) is not remembered, as git treats a
// racily clean index entry. A caller that decides many calls (hookd,
// serve, a long-lived client) keeps one View and calls Refresh before each
// decision; a one-shot caller (warden check, warden hook) builds one per
// call. Live is a View that remembers nothing.
package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Limits of what one View remembers: past them it stops remembering, and
// the next Refresh starts afresh (so a Refresh stats at most maxDeps paths).
const (
	maxDeps  = 512
	maxFacts = 1 << 15
	maxBytes = 32 << 20
)

// The clock step within which a change may leave a file's times as they
// were: the kernel's timer tick for file systems that keep nanoseconds,
// two seconds for those that keep whole seconds (FAT keeps two).
const (
	fineStep   = 100 * time.Millisecond
	coarseStep = 2 * time.Second
)

// View is a view of the file system for the engine. It is safe for
// concurrent use; Refresh may run while decisions read it.
type View struct {
	live bool
	mu   sync.Mutex // one Refresh at a time
	cur  atomic.Pointer[gen]
	// w tells Refresh which stamped paths changed without a stat each
	// (Linux's inotify, one for the process); nil until the first
	// Refresh, or where the system gives none. Guarded by mu, as is held.
	w      *watcher
	triedW bool
	held   *heldSet
}

// heldSet is the watch set of a View's current generation, let go when
// the View is no longer reachable.
type heldSet struct{ set *watchSet }

// New returns a View that remembers what it reads until Refresh finds it
// changed.
func New() *View {
	v := &View{}
	v.cur.Store(newGen())
	return v
}

// Live returns a View that remembers nothing: every answer is read from
// the disk when the engine asks.
func Live() *View { return &View{live: true} }

// gen is one generation of remembered answers, all checked by one Refresh.
type gen struct {
	// snap holds the answers remembered for a while, read without a lock;
	// newer ones wait in dirty until as many reads missed snap as dirty
	// holds answers, then a copy of snap with them takes its place (the
	// copies cost each answer a constant on average).
	snap atomic.Pointer[answers]
	// last is, for each method, the answer a read found last: a caller
	// that asks for the same path again and again (the engine, for the
	// workspace root's .git on each git command) finds it with a compare
	// of the path, not a map lookup.
	last   [nOps]atomic.Pointer[fact]
	mu     sync.Mutex
	dirty  answers
	nDirty int
	misses int

	deps   map[string]int // path -> index in paths and stamps
	paths  []string       // append only
	stamps []stamp
	facts  int
	bytes  int
	// stale: a stamped path changed while answers were remembered, or a
	// limit was reached; the next Refresh starts afresh.
	stale bool

	// Refresh's own (under View.mu): which of paths the watcher covers
	// (one entry for each path it was tried on), and what it watches for
	// them.
	watched  []bool
	nWatched int // the trues of watched: a Refresh polls only when one is
	set      *watchSet
}

// answers are what a gen remembers: one map per method asked, keyed by the
// path (a map keyed by the string alone is read through the runtime's
// string fast path, which a struct key of method and path is not).
type answers [nOps]map[string]*fact

func newAnswers() answers {
	var fs answers
	for i := range fs {
		fs[i] = map[string]*fact{}
	}
	return fs
}

func newGen() *gen {
	g := &gen{deps: map[string]int{}, dirty: newAnswers(), set: newWatchSet()}
	snap := newAnswers()
	g.snap.Store(&snap)
	return g
}

// The methods whose answers are remembered.
const (
	opLstat = iota
	opStat
	opLink
	opDir
	opFile
	nOps
)

// load returns the answer remembered for path by the method op.
func (g *gen) load(op int, path string) (*fact, bool) {
	if f := g.last[op].Load(); f != nil && f.path == path {
		return f, true
	}
	if f, ok := g.snap.Load()[op][path]; ok {
		g.last[op].Store(f)
		return f, true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.dirty[op][path]
	if g.nDirty > 0 {
		if g.misses++; g.misses >= g.nDirty {
			old := g.snap.Load()
			var m answers
			for i := range m {
				m[i] = make(map[string]*fact, len(old[i])+len(g.dirty[i]))
				for k, v := range old[i] {
					m[i][k] = v
				}
				for k, v := range g.dirty[i] {
					m[i][k] = v
				}
			}
			g.snap.Store(&m)
			g.dirty, g.nDirty, g.misses = newAnswers(), 0, 0
		}
	}
	return f, ok
}

// fact is one remembered answer.
type fact struct {
	path string // the path asked
	fi   fs.FileInfo
	text string
	ents []fs.DirEntry
	data []byte
	err  error
}

// stamp is what a Refresh compares of a path: the result of stat (which
// follows links) on it.
type stamp struct {
	err          string // the error's text when stat failed
	mode         fs.FileMode
	size         int64
	mtime, ctime int64
	dev, ino     uint64
	usable       bool // the system told the identity and change time
}

// stampOf stats path and returns its stamp with what stat returned.
func stampOf(path string) (stamp, fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		s := stamp{err: err.Error(), usable: true}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			s.err = pe.Err.Error()
		}
		return s, nil, err
	}
	s := stamp{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	s.usable = sysStamp(&s, fi)
	return s, fi, nil
}

// racy reports a stamp whose times are within the clock step of now: a
// change right after the read may leave them as they are.
func (s stamp) racy(now time.Time) bool {
	if s.err != "" {
		return false
	}
	step := fineStep
	if s.mtime%1e9 == 0 && s.ctime%1e9 == 0 {
		step = coarseStep
	}
	return max(s.mtime, s.ctime) > now.Add(-step).UnixNano()
}

// keep remembers the answer f to k when it may be: it depends on path,
// stamped s before the answer was read at now.
func (g *gen) keep(op int, name string, f *fact, path string, s stamp, now time.Time, size int) {
	f.path = name
	if !s.usable || s.racy(now) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stale {
		return
	}
	if i, ok := g.deps[path]; ok {
		if g.stamps[i] != s {
			g.stale = true // changed since another answer was read
			return
		}
	} else {
		if len(g.paths) >= maxDeps {
			g.stale = true
			return
		}
		g.deps[path] = len(g.paths)
		g.paths = append(g.paths, path)
		g.stamps = append(g.stamps, s)
	}
	if g.facts >= maxFacts || g.bytes+size > maxBytes {
		g.stale = true
		return
	}
	g.facts++
	g.bytes += size
	if _, ok := g.dirty[op][name]; !ok {
		g.nDirty++
	}
	g.dirty[op][name] = f
}

// Refresh is the validity check: when a path the remembered answers
// depend on changed (the watcher's events, or a stat of each path it does
// not cover), or the View reached its limits, it forgets them all. It
// reports whether it did.
func (v *View) Refresh() bool {
	if v.live {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	g := v.cur.Load()
	g.mu.Lock()
	stale, paths, stamps := g.stale, g.paths, g.stamps
	g.mu.Unlock()
	if !stale && g.nWatched > 0 {
		stale = v.w.changed(g.set)
	}
	tried := len(g.watched)
	if !stale && tried < len(paths) {
		// The watcher is taken when there is first a path to watch (a
		// one-shot caller that never has one opens none).
		v.takeWatcher(g)
	}
	for i := tried; !stale && i < len(paths); i++ {
		// Watched first, then stat'ed (below): a change before the
		// watch is in the stamp, one after it an event. A path the
		// watcher cannot cover is tried once a generation.
		ok := v.w != nil && v.w.watch(g.set, paths[i])
		g.watched = append(g.watched, ok)
		if ok {
			g.nWatched++
		}
	}
	for i := 0; !stale && i < len(paths); i++ {
		if g.watched[i] && i < tried {
			continue // watched before this Refresh: its events tell
		}
		if s, _, _ := stampOf(paths[i]); s != stamps[i] {
			stale = true
		}
	}
	if stale {
		if v.w != nil {
			v.w.forget(g.set)
		}
		next := newGen()
		if v.w != nil {
			v.held.set = next.set
		}
		v.cur.Store(next)
	}
	return stale
}

// takeWatcher gets the process's watcher for v, the first time, and has
// v's watches follow g's set (let go when v is no longer reachable).
// v.mu is held.
func (v *View) takeWatcher(g *gen) {
	if !v.triedW {
		v.triedW = true
		if v.w = theWatcher(); v.w != nil {
			v.held = &heldSet{}
			w := v.w
			runtime.AddCleanup(v, func(h *heldSet) {
				if h.set != nil {
					w.forget(h.set)
				}
			}, v.held)
		}
	}
	if v.w != nil {
		v.held.set = g.set
	}
}

// holder returns the path whose stamp covers the name in path: its
// folder, or the path itself when its last part does not name an entry
// of a folder ("/", ".", "..").
func holder(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return path
	}
	switch path[i+1:] {
	case "", ".", "..":
		return path
	}
	if i == 0 {
		return "/"
	}
	return path[:i]
}

// Lstat implements engine.Workspace: os.Lstat. What is remembered depends
// on the folder holding the name: the name's type changes only when the
// entry does.
func (v *View) Lstat(name string) (fs.FileInfo, error) {
	if v.live {
		return os.Lstat(name)
	}
	g := v.cur.Load()
	if f, ok := g.load(opLstat, name); ok {
		return f.fi, f.err
	}
	now := time.Now()
	dep := holder(name)
	s, _, _ := stampOf(dep)
	fi, err := os.Lstat(name)
	g.keep(opLstat, name, &fact{fi: fi, err: err}, dep, s, now, 0)
	return fi, err
}

// Stat implements engine.Workspace: os.Stat, which is its own stamp.
func (v *View) Stat(name string) (fs.FileInfo, error) {
	if v.live {
		return os.Stat(name)
	}
	g := v.cur.Load()
	if f, ok := g.load(opStat, name); ok {
		return f.fi, f.err
	}
	now := time.Now()
	s, fi, err := stampOf(name)
	g.keep(opStat, name, &fact{fi: fi, err: err}, name, s, now, 0)
	return fi, err
}

// Readlink implements engine.Workspace: os.Readlink. A link's text
// changes only with the entry, so it depends on the folder holding it.
func (v *View) Readlink(name string) (string, error) {
	if v.live {
		return os.Readlink(name)
	}
	g := v.cur.Load()
	if f, ok := g.load(opLink, name); ok {
		return f.text, f.err
	}
	now := time.Now()
	dep := holder(name)
	s, _, _ := stampOf(dep)
	text, err := os.Readlink(name)
	g.keep(opLink, name, &fact{text: text, err: err}, dep, s, now, 0)
	return text, err
}

// ReadDir implements engine.Workspace: os.ReadDir, which depends on the
// folder's own stamp (an entry made, removed or renamed changes its
// modification time).
func (v *View) ReadDir(name string) ([]fs.DirEntry, error) {
	if v.live {
		return os.ReadDir(name)
	}
	g := v.cur.Load()
	if f, ok := g.load(opDir, name); ok {
		return f.ents, f.err
	}
	now := time.Now()
	s, _, _ := stampOf(name)
	ents, err := os.ReadDir(name)
	g.keep(opDir, name, &fact{ents: ents, err: err}, name, s, now, 64*len(ents))
	return ents, err
}

// ReadFile implements engine.Workspace: os.ReadFile, which depends on the
// file's own stamp. The bytes returned are shared: the caller must not
// change them.
func (v *View) ReadFile(name string) ([]byte, error) {
	if v.live {
		return os.ReadFile(name)
	}
	g := v.cur.Load()
	if f, ok := g.load(opFile, name); ok {
		return f.data, f.err
	}
	now := time.Now()
	s, _, _ := stampOf(name)
	data, err := os.ReadFile(name)
	g.keep(opFile, name, &fact{data: data, err: err}, name, s, now, len(data))
	return data, err
}

// Getenv implements engine.Workspace: os.Getenv.
func (v *View) Getenv(key string) string { return os.Getenv(key) }

// UserHomeDir implements engine.Workspace: os.UserHomeDir.
func (v *View) UserHomeDir() (string, error) { return os.UserHomeDir() }

// UserHome implements engine.Workspace: the home folder os/user's Lookup
// finds for name, read each time (it is asked only for ~NAME paths).
func (v *View) UserHome(name string) (string, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return "", err
	}
	return u.HomeDir, nil
}

// Git implements engine.Workspace: it runs git in the work tree top, each
// time (what git lists depends on every file of the work tree), with the
// process's environment less the variables that point git at another
// repository, index or configuration. When git fails and finds no
// repository it can use at top, it returns no output and no error.
func (v *View) Git(top string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-optional-locks", "-C", top}, args...)...)
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	if err != nil {
		check := exec.CommandContext(ctx, "git", "-C", top, "rev-parse", "--git-dir")
		check.Env = cmd.Env
		if check.Run() != nil && ctx.Err() == nil {
			// No repository git can use here: the command the agent
			// runs fails as well, printing nothing.
			return nil, nil
		}
		return nil, err
	}
	return out, nil
}

// gitEnv is the environment warden runs git in: the process's, less the
// variables that point git at another repository, index or configuration.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
}
