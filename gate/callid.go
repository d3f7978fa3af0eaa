package gate

import (
	"crypto/rand"
	"encoding/hex"
)

// NewCallID is a fresh call id for a call its caller gave none: "g-" and
// 24 hex digits ("" if the system's random source failed). The prefix
// sets it apart from the ids callers give (the hooks' "c-...").
func NewCallID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return ""
	}
	return "g-" + hex.EncodeToString(b[:])
}
