//go:build !linux

package hookd

import (
	"errors"
	"syscall"
	"time"
)

// ask needs SO_PEERCRED to know who answers; elsewhere the client always
// runs `warden hook` itself.
func ask(socket string, req *Request, deadline time.Time) (Response, bool, error) {
	return Response{}, false, errors.New("hookd: not supported on this system")
}

// CheckPeer relies on the socket folder's permissions here.
func CheckPeer(syscall.RawConn) error { return nil }
