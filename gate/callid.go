package gate

import (
	"crypto/rand"
	"encoding/hex"
)

// NewCallID is a fresh call id ("c-" and 24 hex digits), the shape the
// hooks give their calls ("" if the system's random source failed).
func NewCallID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return ""
	}
	return "c-" + hex.EncodeToString(b[:])
}
