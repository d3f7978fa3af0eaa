//go:build unix

package hookd

import (
	"io/fs"
	"os"
	"syscall"
)

// owner returns the user id that owns a file.
func owner(fi fs.FileInfo) (int, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return 0, false
}

// Detach makes a started process a session of its own, so that it
// outlives the client and no terminal signal reaches it.
func Detach(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// Lock takes an exclusive lock on file (created if needed) without
// waiting, so that one hookd serves a socket. The lock lasts until release
// or the process's end.
func Lock(file string) (release func(), err error) {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, ErrLocked
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}
