package sandbox

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileStamp is what tells a folder (or file) changed: its identity,
// type, size, and modification and change times.
type fileStamp struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime int64
	usable       bool
}

func statFile(path string) (fileStamp, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileStamp{}, err
	}
	return fileStamp{
		dev: st.Dev, ino: st.Ino, mode: st.Mode, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), usable: true,
	}, nil
}

// ownedFile reports a regular file of this user (or root) that nobody
// else may write.
func ownedFile(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().IsRegular() && fi.Mode()&0o022 == 0 && (int(st.Uid) == os.Geteuid() || st.Uid == 0)
}
