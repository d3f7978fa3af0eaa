//go:build linux

package workspace

import (
	"io/fs"
	"syscall"
)

// sysStamp fills the identity and change time of a file from what the
// system's stat returned.
func sysStamp(s *stamp, fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	s.dev, s.ino = uint64(st.Dev), uint64(st.Ino)
	s.ctime = st.Ctim.Nano()
	return true
}
