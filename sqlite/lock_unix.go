//go:build unix

package sqlite

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"syscall"
	"time"
)

// locked: lockDir excludes other creators.
const locked = true

// lockDir takes the lock that makes creators of a store in dir take
// turns (flock on the folder, which the system lets go when its process
// dies), waiting until ctx is done or lockPatience has passed.
func lockDir(ctx context.Context, dir string) (func(), error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockPatience)
	for {
		err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
				d.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			d.Close()
			return nil, err
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			d.Close()
			return nil, errors.New("another process is creating the store and has not finished")
		}
		time.Sleep(time.Duration(2+rand.IntN(8)) * time.Millisecond)
	}
}
