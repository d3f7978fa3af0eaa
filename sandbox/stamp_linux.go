package sandbox

import "golang.org/x/sys/unix"

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
