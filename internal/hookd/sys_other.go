//go:build !unix

package hookd

import (
	"errors"
	"io/fs"
	"syscall"
)

func owner(fs.FileInfo) (int, bool) { return 0, false }

func Detach(a *syscall.SysProcAttr) *syscall.SysProcAttr { return a }

// Lock is not supported here: hookd does not run on this system.
func Lock(string) (func(), error) { return nil, errors.New("warden hookd needs a Unix system") }
