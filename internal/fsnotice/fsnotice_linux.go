//go:build linux

// Package fsnotice holds what warden's inotify watchers (the workspace
// view's, the sandbox's walk) share to trust their silence: which file
// systems send an event for every change (Local), and the process's mount
// table, polled for mounts made or removed, which no inotify event tells
// (Mounts).
package fsnotice

import (
	"errors"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// local are the file systems whose every change passes through this
// kernel's file system code, where inotify sees it. Not NFS, CIFS, FUSE,
// 9p or /proc: there a change can come from elsewhere with no event.
var local = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:      true, // ext2, ext3, ext4
	unix.XFS_SUPER_MAGIC:       true,
	unix.BTRFS_SUPER_MAGIC:     true,
	unix.TMPFS_MAGIC:           true, // tmpfs, devtmpfs
	unix.RAMFS_MAGIC:           true,
	unix.F2FS_SUPER_MAGIC:      true,
	unix.OVERLAYFS_SUPER_MAGIC: true,
	0x2fc12fc1:                 true, // zfs
	0xca451a4e:                 true, // bcachefs
}

// Local reports whether the file system holding path sends an inotify
// event for every change to it (false when it cannot tell).
func Local(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && local[int64(st.Type)]
}

// Mounts is the process's mount table, open to be polled for a change.
type Mounts struct{ fd int }

// OpenMounts opens /proc/self/mountinfo; a change of the mount table after
// it is opened is reported by Changed (or by the descriptor's POLLPRI).
func OpenMounts() (*Mounts, error) {
	fd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &Mounts{fd: fd}, nil
}

// Fd is the descriptor to poll for POLLPRI with others.
func (m *Mounts) Fd() int { return m.fd }

// Changed reports whether the mount table changed since the last report
// (or since it was opened), and true when the system does not answer.
func (m *Mounts) Changed() bool {
	fds := []unix.PollFd{{Fd: int32(m.fd), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err != nil || n > 0 && fds[0].Revents != 0
	}
}

// Close closes the descriptor.
func (m *Mounts) Close() { unix.Close(m.fd) }

// Events calls fn for each inotify event in buf (what one read of an
// inotify descriptor returned), with the name's padding cut off ("" for
// an event of the watched file or folder itself).
func Events(buf []byte, fn func(wd int32, mask uint32, name string)) {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		start := off + unix.SizeofInotifyEvent
		off = start + int(ev.Len)
		name := ""
		if ev.Len > 0 {
			name = strings.TrimRight(string(buf[start:min(off, len(buf))]), "\x00")
		}
		fn(ev.Wd, ev.Mask, name)
	}
}
