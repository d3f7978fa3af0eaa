//go:build !unix

package wire

import "crypto/rand"

// randomBytes fills b from the system's random source.
func randomBytes(b []byte) error {
	_, err := rand.Read(b)
	return err
}
