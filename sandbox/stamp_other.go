//go:build !linux

package sandbox

import "os"

// fileStamp: on this system a stamp is never trusted, so Specs reads the
// workspace again for every call (there is no confinement here yet).
type fileStamp struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime int64
	usable       bool
}

func statFile(path string) (fileStamp, error) {
	_, err := os.Stat(path)
	return fileStamp{}, err
}

// ownedFile: no walk file is trusted on this system.
func ownedFile(os.FileInfo) bool { return false }
