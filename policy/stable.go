package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Settle is how long a policy file must have gone unchanged before warden
// decides with it. A file being rewritten in place passes through every
// prefix of its new text, and many of those prefixes load (they lack the
// rules that come later); a file changed in the last Settle is read again
// once it has been quiet that long.
var Settle = 300 * time.Millisecond

// SettleWait bounds how long ReadStable waits for a file that keeps
// changing; then it fails with ErrUnsettled.
var SettleWait = 3 * time.Second

// ErrUnsettled is returned for a policy file that kept changing while
// warden waited for it to settle.
var ErrUnsettled = errors.New("the policy file is being changed")

// ReadStable reads a file that may be rewritten at any moment (the policy
// file while someone edits it) and returns its bytes only when they were
// read whole: the file was not changed during the read (stat, read, stat
// again) and not in the Settle before it. A file changed more recently is
// read again once it has settled, for at most SettleWait; then the error
// wraps ErrUnsettled, and the caller denies. A folder is an error.
func ReadStable(path string) ([]byte, error) {
	start := time.Now()
	for {
		data, before, err := readOnce(path)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		age := now.Sub(before.ModTime())
		var wait time.Duration
		switch {
		case age >= Settle:
			return data, nil
		case age >= 0:
			wait = Settle - age
		default:
			// A modification time in the future (a skewed clock): stable
			// when a second read after a pause gives the same file.
			time.Sleep(min(Settle, 50*time.Millisecond))
			again, after, err := readOnce(path)
			if err != nil {
				return nil, err
			}
			if sameFile(before, after) && string(again) == string(data) {
				return data, nil
			}
			wait = 10 * time.Millisecond
		}
		if now.Add(wait).Sub(start) > SettleWait {
			return nil, fmt.Errorf("policy %s: %w (it changed %s ago, and kept changing for %s; warden decides only with a whole file)",
				path, ErrUnsettled, max(age, 0).Round(time.Millisecond), SettleWait)
		}
		time.Sleep(wait)
	}
}

// ReadOnce reads a file whole, as it was at one moment (stat, read, stat
// again, reading again if it changed meanwhile), without waiting for it to
// settle: the bytes may be a prefix of a file being written. A folder is
// an error.
func ReadOnce(path string) ([]byte, error) {
	data, _, err := readOnce(path)
	return data, err
}

// readOnce reads path between two stats and reports the file as it was;
// a change during the read makes it read again.
func readOnce(path string) ([]byte, fs.FileInfo, error) {
	for range 100 {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("policy: %w", err)
		}
		before, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("policy: %w", err)
		}
		if before.IsDir() {
			f.Close()
			return nil, nil, fmt.Errorf("policy: %s is a folder, not a policy file", path)
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("policy: %w", err)
		}
		after, err := os.Stat(path)
		if err != nil {
			return nil, nil, fmt.Errorf("policy: %w", err)
		}
		if sameFile(before, after) && int64(len(data)) == after.Size() {
			return data, after, nil
		}
	}
	return nil, nil, fmt.Errorf("policy %s: %w (it changed during every read)", path, ErrUnsettled)
}

func sameFile(a, b fs.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
