//go:build linux

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/warden-run/warden/internal/fsnotice"
)

// watcher tells a View which of its stamped paths changed without a stat
// a path: an inotify instance watches every folder that resolving a path
// goes through (for the names resolved in it) and the folder it leads to
// (for everything stat tells of it), and the process's mount
// table is polled for mounts made or removed. The kernel queues an event
// while the system call that changes a watched file runs, before that call
// returns; so a change made before a decision was asked for is in the
// queue when the decision's Refresh looks, and one poll of the two
// descriptors, which finds nothing, vouches for every watched path.
//
// A path is watched only where the events are sure: a path that leads
// to a folder, or to nothing (a file's contents can change through a
// shared mapping with no event), on a local file system (not NFS, FUSE,
// 9p or /proc, where a change can come from elsewhere with no event),
// with every folder on the way readable, and fewer than 40 links. A path
// that cannot be is stat'ed by each Refresh, as before.
//
// One watcher serves the whole process (inotify instances are few, 128 a
// user by default, and shared with the user's editors and agents): each
// View's generation holds a watchSet, and the events read by any View's
// Refresh are handed to every set that holds their watch.
type watcher struct {
	mu     sync.Mutex
	ino    int // the inotify descriptor
	mounts *fsnotice.Mounts
	buf    []byte
	// mountGen counts the changes of the mount table seen.
	mountGen uint64
	// subs are, for each watch, the sets that hold it.
	subs map[int32]map[*watchSet]bool
}

// watchSet is what one generation of a View watches.
type watchSet struct {
	recs     map[int32]*watchRec
	hit      bool   // an event touched what recs depend on
	mountGen uint64 // the watcher's when the first watch was made
}

// watchRec is what a set depends on below one watch: every name in the
// folder (all: the folder's own stamp is a dependency) or only the names
// a path resolves through.
type watchRec struct {
	all   bool
	names map[string]bool
}

func newWatchSet() *watchSet { return &watchSet{recs: map[int32]*watchRec{}} }

// empty reports whether the set watches nothing yet.
func (ws *watchSet) empty() bool { return len(ws.recs) == 0 }

var shared struct {
	once sync.Once
	w    *watcher
}

// theWatcher returns the process's watcher, or nil where the system gives
// none (a View then stats every path, as without one).
func theWatcher() *watcher {
	shared.once.Do(func() {
		ino, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			return
		}
		mounts, err := fsnotice.OpenMounts()
		if err != nil {
			unix.Close(ino)
			return
		}
		shared.w = &watcher{ino: ino, mounts: mounts, buf: make([]byte, 16<<10), subs: map[int32]map[*watchSet]bool{}}
	})
	return shared.w
}

// The events that change a folder's entries, or what stat tells of the
// watched folder itself.
const (
	entryEvents = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO
	selfEvents  = unix.IN_ATTRIB | unix.IN_MODIFY | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_UNMOUNT
	dirMask     = entryEvents | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR
	maxLinks    = 40
)

// changed reports whether an event since ws's first watch touches what
// it depends on, or the mount table changed: one poll when nothing
// happened. The events read are handed to every set that holds their
// watch.
func (w *watcher) changed(ws *watchSet) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.poll() {
		return true
	}
	return ws.hit || ws.mountGen != w.mountGen
}

// poll takes in what happened since the last look: the events queued,
// handed to the sets they touch, and a change of the mount table. It
// reports false when the system did not answer. w.mu is held.
func (w *watcher) poll() bool {
	fds := []unix.PollFd{{Fd: int32(w.ino), Events: unix.POLLIN}, {Fd: int32(w.mounts.Fd()), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false
		}
		if n > 0 {
			if fds[1].Revents != 0 {
				// A mount made or removed may stand where a watched
				// path resolved, with no event.
				w.mountGen++
			}
			if fds[0].Revents != 0 {
				w.drain()
			}
		}
		return true
	}
}

// drain reads every queued event and marks the sets it touches (an
// overflow of the queue touches all).
func (w *watcher) drain() {
	for {
		n, err := unix.Read(w.ino, w.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		fsnotice.Events(w.buf[:n], func(wd int32, mask uint32, name string) {
			if mask&unix.IN_Q_OVERFLOW != 0 {
				// Events were lost: every set may have missed one.
				for _, sets := range w.subs {
					for ws := range sets {
						ws.hit = true
					}
				}
				w.mountGen++
				return
			}
			for ws := range w.subs[wd] {
				r := ws.recs[wd]
				switch {
				case name == "":
					// The watched folder itself; IN_IGNORED:
					// its watch is gone with it.
					if mask&(selfEvents|unix.IN_IGNORED) != 0 {
						ws.hit = true
					}
				case mask&entryEvents != 0 && (r.all || r.names[name]):
					ws.hit = true
				}
			}
		})
	}
}

// add watches the folder at path (a path with no links) for ws and
// returns its record there. w.mu is held.
func (w *watcher) add(ws *watchSet, path string) (*watchRec, bool) {
	if !fsnotice.Local(path) {
		return nil, false
	}
	if ws.empty() {
		// A mount table changed before the set's first watch is not a
		// change for it (the stats after its watches see what it did).
		w.poll()
		ws.mountGen = w.mountGen
	}
	// No poll between the watch and its record below: an event of the
	// new watch waits in the queue until the set holds it.
	wd, err := unix.InotifyAddWatch(w.ino, path, dirMask)
	if err != nil {
		return nil, false
	}
	sets := w.subs[int32(wd)]
	if sets == nil {
		sets = map[*watchSet]bool{}
		w.subs[int32(wd)] = sets
	}
	sets[ws] = true
	r := ws.recs[int32(wd)]
	if r == nil {
		r = &watchRec{names: map[string]bool{}}
		ws.recs[int32(wd)] = r
	}
	return r, true
}

// watch adds the watches that cover what stat(path) tells: the root and
// every folder resolving path goes through, each for the name resolved in
// it, and the folder path leads to, for all of it. Each watch is
// made before the name below it is looked up, so a change meanwhile is an
// event. It reports false when path cannot be covered (the caller stats
// it).
func (w *watcher) watch(ws *watchSet, path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	// Held throughout: the records are read by other Views' Refresh.
	w.mu.Lock()
	defer w.mu.Unlock()
	type step struct {
		path string
		rec  *watchRec
	}
	root, ok := w.add(ws, "/")
	if !ok {
		return false
	}
	stack := []step{{"/", root}}
	rest := parts(path)
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		top := stack[len(stack)-1]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		top.rec.names[c] = true
		next := filepath.Join(top.path, c)
		fi, err := os.Lstat(next)
		if err != nil {
			// Missing, not a folder, or not searchable: stat fails the
			// same way until the name in top, or top itself, changes.
			var errno unix.Errno
			return errors.As(err, &errno) && (errno == unix.ENOENT || errno == unix.ENOTDIR || errno == unix.EACCES)
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			if links++; links > maxLinks {
				return false
			}
			text, err := os.Readlink(next)
			if err != nil {
				return false
			}
			if filepath.IsAbs(text) {
				stack = stack[:1]
			}
			rest = append(parts(text), rest...)
		case fi.IsDir():
			r, ok := w.add(ws, next)
			if !ok {
				return false
			}
			stack = append(stack, step{next, r})
		default:
			// A file with more below it ("f/", "f/x", "f/..") fails
			// stat until the name in top changes. A path that leads to
			// a file is left to the stat of each Refresh: a write
			// through a shared mapping (mmap) sends no event, and
			// moves the file's times.
			return len(rest) > 0
		}
	}
	stack[len(stack)-1].rec.all = true
	return true
}

// parts splits a path at its slashes; empty parts stand for repeated or
// trailing slashes (a trailing one still asks for a folder).
func parts(p string) []string {
	ps := strings.Split(p, "/")
	if ps[0] == "" {
		ps = ps[1:]
	}
	return ps
}

// forget lets go of ws's watches (a generation set aside): a watch no
// other set holds is removed.
func (w *watcher) forget(ws *watchSet) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for wd := range ws.recs {
		sets := w.subs[wd]
		delete(sets, ws)
		if len(sets) == 0 {
			delete(w.subs, wd)
			unix.InotifyRmWatch(w.ino, uint32(wd))
		}
	}
	ws.recs = map[int32]*watchRec{}
}
