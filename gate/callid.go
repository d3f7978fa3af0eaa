package gate

import (
	"crypto/rand"
	"time"

	"github.com/warden-run/warden/wire"
)

// NewCallID is a fresh call id for a call its caller gave none: "g-", the
// time (wire.OrderedID: the ids of one store grow in order, and the
// audit's call-id index takes each at its end) and 96 random bits ("" if
// the system's random source failed). The prefix sets it apart from the
// ids callers give (the hooks' "c-...").
func NewCallID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return ""
	}
	return wire.OrderedID("g-", time.Now(), b[:])
}
