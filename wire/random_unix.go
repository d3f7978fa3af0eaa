//go:build unix

package wire

import (
	"errors"
	"os"
)

// randomBytes fills b from /dev/urandom rather than crypto/rand: the
// warden-hook client links this package, and crypto/rand brings the
// initialisation of the whole FIPS module into every start.
func randomBytes(b []byte) error {
	f, err := os.Open("/dev/urandom")
	if err != nil {
		return err
	}
	defer f.Close()
	for len(b) > 0 {
		n, err := f.Read(b)
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("/dev/urandom gave nothing")
		}
		b = b[n:]
	}
	return nil
}
