//go:build !linux

package sandbox

import "os"

// fileStamp: on this system a stamp is never trusted, so Specs reads the
// workspace again for every call (there is no confinement here yet).
type fileStamp struct {
	mtime, ctime int64
	usable       bool
}

func statFile(path string) (fileStamp, error) {
	_, err := os.Stat(path)
	return fileStamp{}, err
}
