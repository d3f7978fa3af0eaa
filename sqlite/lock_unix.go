//go:build unix

package sqlite

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// locked: lockDir excludes other creators.
const locked = true

// lockDir takes the lock that makes creators of a store in dir take
// turns (flock on the folder, which the system lets go when its process
// dies). A process that finds another creating waits for it without
// spinning (a shared lock, which every waiter gets at once when the
// creator lets go) and returns without the lock once done() reports the
// store made; it gives up when ctx is done or lockPatience has passed.
func lockDir(ctx context.Context, dir string, done func() bool) (func(), error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	fd := int(d.Fd())
	ctx, cancel := context.WithTimeout(ctx, lockPatience)
	defer cancel()
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(fd, syscall.LOCK_UN)
				d.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			d.Close()
			return nil, err
		}
		shared := make(chan error, 1)
		go func() { shared <- flockRetry(fd, syscall.LOCK_SH) }()
		select {
		case err := <-shared:
			syscall.Flock(fd, syscall.LOCK_UN)
			if err != nil {
				d.Close()
				return nil, err
			}
			if done() {
				d.Close()
				return func() {}, nil
			}
			// The creator let go without a store (it died): take its turn.
		case <-ctx.Done():
			// The goroutine's flock returns when the creator lets go;
			// the file stays open until then.
			go func() { <-shared; syscall.Flock(fd, syscall.LOCK_UN); d.Close() }()
			return nil, errors.New("another process is creating the store and has not finished in time")
		}
		time.Sleep(time.Millisecond)
	}
}

func flockRetry(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
