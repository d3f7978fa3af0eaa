//go:build !unix

package wire

import "crypto/rand"

// RandomBytes fills b from the system's random source.
func RandomBytes(b []byte) error {
	_, err := rand.Read(b)
	return err
}
