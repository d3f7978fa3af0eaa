package hookd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// ask sends one request to the hookd listening on socket and returns its
// answer. sent reports whether the request reached a hookd: before that,
// nothing was decided and the caller may run the hook another way.
func ask(socket string, req *Request, deadline time.Time) (resp Response, sent bool, err error) {
	if err := CheckDir(dirOf(socket)); err != nil {
		return resp, false, fmt.Errorf("%w: %v", errNoServer, err)
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return resp, false, err
	}
	defer syscall.Close(fd)
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: socket}); err != nil {
		return resp, false, fmt.Errorf("%w: %v", errNoServer, err)
	}
	// Only a hookd of this user may answer: anything else could say allow.
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return resp, false, fmt.Errorf("%w: %v", errNoServer, err)
	}
	if int(cred.Uid) != os.Getuid() {
		return resp, false, fmt.Errorf("%w: the process on %s belongs to user %d", errNoServer, socket, cred.Uid)
	}
	msg, err := json.Marshal(req)
	if err != nil {
		return resp, false, err
	}
	if err := writeAll(fd, msg, deadline); err != nil {
		return resp, false, err
	}
	if err := syscall.Shutdown(fd, syscall.SHUT_WR); err != nil {
		return resp, true, err
	}
	var buf bytes.Buffer
	chunk := make([]byte, 64<<10)
	for {
		if err := setTimeout(fd, syscall.SO_RCVTIMEO, deadline); err != nil {
			return resp, true, err
		}
		n, err := syscall.Read(fd, chunk)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			return resp, true, errTimeout
		}
		if err != nil {
			return resp, true, err
		}
		if n == 0 {
			break
		}
		buf.Write(chunk[:n])
		if buf.Len() > MaxMessage {
			return resp, true, errors.New("hookd's answer is too long")
		}
	}
	if buf.Len() == 0 {
		return resp, true, io.ErrUnexpectedEOF
	}
	if err := json.Unmarshal(buf.Bytes(), &resp); err != nil {
		return resp, true, fmt.Errorf("hookd's answer is not JSON: %w", err)
	}
	if resp.Refused != "" {
		return resp, true, fmt.Errorf("%w: %s", errRefused, resp.Refused)
	}
	return resp, true, nil
}

func writeAll(fd int, b []byte, deadline time.Time) error {
	for len(b) > 0 {
		if err := setTimeout(fd, syscall.SO_SNDTIMEO, deadline); err != nil {
			return err
		}
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			return errTimeout
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// setTimeout bounds the next blocking read or write by the deadline.
func setTimeout(fd, opt int, deadline time.Time) error {
	left := time.Until(deadline)
	if left <= 0 {
		return errTimeout
	}
	tv := syscall.NsecToTimeval(left.Nanoseconds())
	return syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, opt, &tv)
}

// CheckPeer refuses a connection from another user: hookd answers only the
// user it runs as.
func CheckPeer(rc syscall.RawConn) error {
	var cred *syscall.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("connection from user %d refused", cred.Uid)
	}
	return nil
}
