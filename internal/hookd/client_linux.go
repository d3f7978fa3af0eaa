package hookd

import (
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
//
// It waits for the answer in Go's network poller, not in a blocking read:
// a process blocked in a system call keeps the runtime's monitor thread
// waking every few microseconds, which on a busy machine costs the
// short-lived client more than its own work.
func ask(socket string, req *Request, deadline time.Time) (resp Response, sent bool, err error) {
	if err := CheckDir(dirOf(socket)); err != nil {
		return resp, false, fmt.Errorf("%w: %v", errNoServer, err)
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return resp, false, err
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: socket}); err != nil {
		syscall.Close(fd)
		return resp, false, fmt.Errorf("%w: %v", errNoServer, err)
	}
	// Only a hookd of this user may answer: anything else could say allow.
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		syscall.Close(fd)
		return resp, false, fmt.Errorf("%w: %v", errNoServer, err)
	}
	if int(cred.Uid) != os.Getuid() {
		syscall.Close(fd)
		return resp, false, fmt.Errorf("%w: the process on %s belongs to user %d", errNoServer, socket, cred.Uid)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return resp, false, err
	}
	// A non-blocking descriptor: os.File waits on it in the poller, and
	// honours the deadline.
	conn := os.NewFile(uintptr(fd), socket)
	defer conn.Close()
	if err := conn.SetDeadline(deadline); err != nil {
		return resp, false, err
	}
	if _, err := conn.Write(encodeRequest(req)); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = errTimeout
		}
		return resp, false, err
	}
	if err := syscall.Shutdown(fd, syscall.SHUT_WR); err != nil {
		return resp, true, err
	}
	buf := make([]byte, 0, 4096)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := conn.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > MaxMessage {
			return resp, true, errors.New("hookd's answer is too long")
		}
		if err == io.EOF {
			break
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return resp, true, errTimeout
		}
		if err != nil {
			return resp, true, err
		}
	}
	if len(buf) == 0 {
		return resp, true, io.ErrUnexpectedEOF
	}
	if resp, err = decodeResponse(buf); err != nil {
		return resp, true, err
	}
	if resp.Refused != "" {
		return resp, true, fmt.Errorf("%w: %s", errRefused, resp.Refused)
	}
	return resp, true, nil
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
