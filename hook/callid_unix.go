//go:build unix

package hook

import (
	"errors"
	"os"
)

// randomBytes fills b from the system's random source. It reads
// /dev/urandom rather than use crypto/rand: the warden-hook client, which
// hosts start for every event, links this package, and crypto/rand brings
// the initialisation of the whole FIPS module into every start.
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
