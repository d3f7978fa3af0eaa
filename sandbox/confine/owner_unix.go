//go:build unix

package confine

import (
	"io/fs"
	"syscall"
)

// fileOwner returns the user id that owns a file.
func fileOwner(st fs.FileInfo) (int, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(sys.Uid), true
}
