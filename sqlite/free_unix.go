//go:build unix

package sqlite

import "syscall"

// freeBytes returns the space left to this user on dir's file system, or
// -1 when it cannot tell.
func freeBytes(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
