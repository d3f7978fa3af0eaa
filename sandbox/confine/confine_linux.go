//go:build linux

package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// confine confines the calling thread, which then executes the program:
// Landlock, no_new_privs and capabilities are per thread, and execve
// keeps the calling thread's, so the thread is locked and never released
// (ChildMainInit's caller is locked by the runtime already: package
// initialisation runs on the main thread).
func confine(w *wire, lock bool) error {
	if lock {
		runtime.LockOSThread()
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("the working folder: %w", err)
	}
	if w.Plan.Mounts {
		if err := mountHoles(&w.Spec); err != nil {
			return err
		}
		// The working folder was entered before the mounts: enter it
		// again, or a protected working folder stays writable through
		// relative paths.
		if err := unix.Chdir(cwd); err != nil {
			return fmt.Errorf("enter %s again after the mounts: %w", cwd, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if w.Plan.Landlock > 0 {
		if err := landlock(&w.Spec, w.Plan); err != nil {
			return fmt.Errorf("Landlock: %w", err)
		}
	}
	return dropCaps(w.Plan.Mounts)
}

type mountOp struct {
	path string
	kind int
}

const (
	opPin = iota // bind over itself, writable: it cannot be renamed or removed
	opReadOnly
	opHide
)

// mountHoles makes the mount namespace's mounts private and every mount
// read-only, binds each writable folder over itself writable again, binds
// each read-only path over itself read-only and hides each private path.
// The folders between a writable folder and a read-only path are bound
// over themselves too (pinned): a folder with a mount inside may be
// renamed, and a confined command could otherwise move .git away and
// create another with hooks of its choosing. Parents come before what is
// inside them, so a hidden file inside a read-only folder is mounted on
// the read-only bind.
func mountHoles(s *Spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	// Read-only everywhere: Landlock does not restrict chmod, chown or
	// utimes; a read-only mount does.
	rootRO := true
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		if !errors.Is(err, unix.ENOSYS) {
			return fmt.Errorf("make the file system read-only: %w", err)
		}
		rootRO = false // before Linux 5.12: Landlock alone bounds writes
	}
	writable := append([]string{"/dev/shm"}, s.Writable...)
	if rootRO {
		for _, w := range writable {
			if err := bindWritable(w); err != nil && !errors.Is(err, unix.ENOENT) {
				return err
			}
		}
	}
	var ops []mountOp
	pinned := map[string]bool{}
	for _, p := range s.ReadOnly {
		ops = append(ops, mountOp{path: p, kind: opReadOnly})
		for a := filepath.Dir(p); a != "/" && !pinned[a]; a = filepath.Dir(a) {
			top := false
			for _, w := range writable {
				top = top || a == w
			}
			if top || !s.UnderWritable(a) {
				break // a writable folder is a mount already, or is outside
			}
			pinned[a] = true
			ops = append(ops, mountOp{path: a, kind: opPin})
		}
	}
	for _, p := range s.Hidden {
		ops = append(ops, mountOp{path: p, kind: opHide})
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].path < ops[j].path })
	var hidden []string
	for _, op := range ops {
		covered := false
		for _, h := range hidden {
			covered = covered || within(op.path, h)
		}
		if covered {
			continue
		}
		var err error
		switch op.kind {
		case opHide:
			err = hide(op.path)
			hidden = append(hidden, op.path)
		case opReadOnly:
			err = bindReadOnly(op.path)
		case opPin:
			if err = unix.Mount(op.path, op.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				err = fmt.Errorf("pin %s: %w", op.path, err)
			}
		}
		if errors.Is(err, unix.ENOENT) {
			continue // removed since the Spec was made: nothing to protect
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// bindWritable binds a folder over itself and makes the bind writable
// (the rest of the file system is read-only).
func bindWritable(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s writable: %w", p, err)
	}
	attr := &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, attr); err != nil {
		// A mount inside that was read-only before stays so.
		if err := unix.MountSetattr(unix.AT_FDCWD, p, 0, attr); err != nil {
			return fmt.Errorf("make %s writable: %w", p, err)
		}
	}
	return nil
}

func bindReadOnly(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s read-only: %w", p, err)
	}
	return setReadOnly(p, true)
}

// setReadOnly makes the mount at p (and, recursively, those inside it)
// read-only.
func setReadOnly(p string, recursive bool) error {
	flags := uint(0)
	if recursive {
		flags = unix.AT_RECURSIVE
	}
	err := unix.MountSetattr(unix.AT_FDCWD, p, flags, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID})
	if errors.Is(err, unix.ENOSYS) {
		// Before Linux 5.12: remount the bind, keeping the flags the
		// user namespace may not clear.
		var st unix.Statfs_t
		if err = unix.Statfs(p, &st); err == nil {
			fl := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID)
			for _, m := range []struct{ st, ms uintptr }{{unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_RELATIME, unix.MS_RELATIME}} {
				if uintptr(st.Flags)&m.st != 0 {
					fl |= m.ms
				}
			}
			err = unix.Mount("", p, "", fl, "")
		}
	}
	if err != nil {
		return fmt.Errorf("make %s read-only: %w", p, err)
	}
	return nil
}

// hide puts an empty read-only folder over a folder, and the empty
// device /dev/null (read-only mount) over anything else.
func hide(p string) error {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return fmt.Errorf("hide %s: %w", p, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,nr_inodes=1,mode=0555"); err != nil {
			return fmt.Errorf("hide the folder %s: %w", p, err)
		}
		return nil
	}
	if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("hide the file %s: %w", p, err)
	}
	return setReadOnly(p, false)
}

// Landlock access rights by ABI.
const (
	fsExecute   = unix.LANDLOCK_ACCESS_FS_EXECUTE
	fsWriteFile = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	fsReadFile  = unix.LANDLOCK_ACCESS_FS_READ_FILE
	fsReadDir   = unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsTruncate  = unix.LANDLOCK_ACCESS_FS_TRUNCATE
	fsIoctlDev  = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	ruleNetPort = 2
)

type netPortAttr struct {
	allowed uint64
	port    uint64
}

// fsAll returns every filesystem right an ABI knows.
func fsAll(abi int) uint64 {
	switch {
	case abi >= 5:
		return 1<<16 - 1 // IOCTL_DEV
	case abi >= 3:
		return 1<<15 - 1 // TRUNCATE
	case abi == 2:
		return 1<<14 - 1 // REFER
	}
	return 1<<13 - 1
}

// landlock restricts the calling thread: read and execute everywhere but
// /dev (only the common devices), every right in the writable folders,
// TCP connect only to the ports (network deny), signals and abstract
// sockets scoped to the sandbox (ABI 6). A landlocked thread may not
// mount or unmount, which locks the mounts made before.
func landlock(s *Spec, plan Plan) error {
	abi := plan.Landlock
	all := fsAll(abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: all}
	if plan.Network {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if plan.Scoped {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	// The kernel accepts the ruleset attribute up to the size it knows:
	// before ABI 6 the scoped field, before ABI 4 the network one.
	size := unsafe.Sizeof(uint64(0))
	switch {
	case abi >= 6:
		size *= 3
	case abi >= 4:
		size *= 2
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return fmt.Errorf("create the ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	file := uint64(fsExecute | fsWriteFile | fsReadFile | fsTruncate | fsIoctlDev)
	read := uint64(fsExecute | fsReadFile | fsReadDir)
	add := func(p string, access uint64, must bool) error {
		pfd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if must {
				return fmt.Errorf("open %s: %w", p, err)
			}
			return nil
		}
		defer unix.Close(pfd)
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= file
		}
		access &= all
		rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
			return fmt.Errorf("allow %s: %w", p, e)
		}
		return nil
	}
	// Read everywhere but /dev, whose disks and memory a root user (in
	// a namespace that maps root) could otherwise read.
	if err := add("/", fsReadDir, true); err != nil {
		return err
	}
	top, err := os.ReadDir("/")
	if err != nil {
		return err
	}
	for _, e := range top {
		if e.Name() == "dev" {
			continue
		}
		if err := add("/"+e.Name(), read, false); err != nil {
			return err
		}
	}
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty", "ptmx", "pts"} {
		if err := add("/dev/"+d, read|file, false); err != nil {
			return err
		}
	}
	if err := add("/dev/shm", all, false); err != nil {
		return err
	}
	for _, w := range s.Writable {
		if err := add(w, all, false); err != nil {
			return err
		}
	}
	if plan.Network {
		for _, port := range s.Ports {
			rule := netPortAttr{allowed: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(port)}
			if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, ruleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
				return fmt.Errorf("allow TCP port %d: %w", port, e)
			}
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("restrict: %w", e)
	}
	return nil
}

// dropCaps empties the calling thread's capabilities so that the program
// runs with none, root in the user namespace included: securebits keep
// root from regaining them on execve, and the bounding set is empty.
// Without a user namespace a user other than root has none to drop.
func dropCaps(inUserNS bool) error {
	canSet := inUserNS || os.Geteuid() == 0
	if !canSet || noCaps() {
		// Nothing to drop: a user other than root outside a namespace,
		// or a process that holds no capability and can regain none
		// (an empty bounding set: inside another sandbox, such as
		// Codex's, root may not set securebits).
		return nil
	}
	// SECBIT_NOROOT and _NO_SETUID_FIXUP, _KEEP_CAPS (locked only) and
	// _NO_CAP_AMBIENT_RAISE, each with its lock (linux/securebits.h).
	const bits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
		return fmt.Errorf("set securebits: %w", err)
	}
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		fmt.Sscan(strings.TrimSpace(string(b)), &last)
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// noCaps reports a process with no capability in any set, the bounding
// set included (/proc/self/status).
func noCaps() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	seen := 0
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "Cap") {
			continue
		}
		if strings.Trim(strings.TrimSpace(v), "0") != "" {
			return false
		}
		seen++
	}
	return seen == 5 // CapInh, CapPrm, CapEff, CapBnd, CapAmb
}
