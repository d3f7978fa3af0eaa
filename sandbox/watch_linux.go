package sandbox

import (
	"golang.org/x/sys/unix"

	"github.com/warden-run/warden/internal/fsnotice"
)

// dirWatch watches the folders of one walk with inotify, so that a walk
// in a process that keeps it (hookd) skips the folders nothing happened
// in instead of checking each one's stamp (Specs.Watch). A folder's
// record is trusted only while its watch was in place before the folder
// was last read or checked: every change to its entries after that is an
// event. A lost event (the kernel's queue overflowed), a mount made or
// removed (which no event tells), or a failure makes every folder be
// checked by its stamp again, as without a watch. A folder on a file
// system where a change may come with no event (NFS, FUSE, 9p) is not
// watched.
type dirWatch struct {
	fd     int
	mounts *fsnotice.Mounts
	wds    map[int32]string // watch descriptor: folder
	dirs   map[string]int32 // folder: watch descriptor
	buf    []byte
}

// watchMask: an entry made, removed or renamed in the folder, the folder
// itself removed, renamed or its permissions changed.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ATTRIB | unix.IN_ONLYDIR

// newDirWatch returns a watch, or nil where inotify cannot be had.
func newDirWatch() *dirWatch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	mounts, err := fsnotice.OpenMounts()
	if err != nil {
		unix.Close(fd)
		return nil
	}
	return &dirWatch{fd: fd, mounts: mounts, wds: map[int32]string{}, dirs: map[string]int32{}, buf: make([]byte, 64<<10)}
}

// add watches dir and reports whether it is watched.
func (w *dirWatch) add(dir string) bool {
	if _, ok := w.dirs[dir]; ok {
		return true
	}
	if !fsnotice.Local(dir) {
		return false // checked by its stamp
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		return false // the user's watch limit, or the folder gone: checked by its stamp
	}
	if old, ok := w.wds[int32(wd)]; ok && old != dir {
		// The same folder under another name (renamed): the
		// descriptor follows the folder.
		delete(w.dirs, old)
	}
	w.wds[int32(wd)] = dir
	w.dirs[dir] = int32(wd)
	return true
}

// remove stops watching dir, which left the walk.
func (w *dirWatch) remove(dir string) {
	wd, ok := w.dirs[dir]
	if !ok {
		return
	}
	delete(w.dirs, dir)
	if w.wds[wd] == dir {
		delete(w.wds, wd)
		unix.InotifyRmWatch(w.fd, uint32(wd))
	}
}

// drain reads the events waiting and returns the folders they happened
// in; all reports that events were lost (every folder must be checked).
func (w *dirWatch) drain() (dirty map[string]bool, all bool) {
	dirty = map[string]bool{}
	// A mount on a walked folder hides what was walked there.
	all = w.mounts.Changed()
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			// EAGAIN: nothing more waiting.
			return dirty, all || err != nil && err != unix.EAGAIN
		}
		fsnotice.Events(w.buf[:n], func(wd int32, mask uint32, _ string) {
			if mask&unix.IN_Q_OVERFLOW != 0 {
				all = true
				return
			}
			dir, ok := w.wds[wd]
			if !ok {
				return
			}
			dirty[dir] = true
			if mask&unix.IN_IGNORED != 0 {
				// The folder is gone (or unmounted): its watch went
				// with it.
				delete(w.wds, wd)
				if w.dirs[dir] == wd {
					delete(w.dirs, dir)
				}
			}
		})
	}
}

func (w *dirWatch) close() {
	unix.Close(w.fd)
	w.mounts.Close()
}
