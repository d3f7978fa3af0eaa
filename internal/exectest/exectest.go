// Package exectest writes files that a test then runs. It is imported by
// tests only.
//
// A test that writes a program and runs it while other tests of its
// package start processes can fail with "text file busy" (ETXTBSY): a
// process forked while the file was open for writing holds that
// descriptor until it execs, and Linux refuses to run a file that is open
// for writing. WriteFile holds syscall.ForkLock for reading while the file
// is open, so no fork of this process can happen in that window.
package exectest

import (
	"os"
	"syscall"
)

// WriteFile is os.WriteFile with no fork of this process while the file
// is open.
func WriteFile(name string, data []byte, perm os.FileMode) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(name, data, perm)
}
