//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package rootfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// setAppend turns O_APPEND on or off on the open file description with
// fcntl(F_SETFL), in place: no path is looked up again.
func setAppend(f *os.File, enable bool) error {
	return control(f, func(fd int) error {
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			return err
		}
		if enable {
			fl |= unix.O_APPEND
		} else {
			fl &^= unix.O_APPEND
		}
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl)
		return err
	})
}

// pwrite writes b at off with pwrite(2) on the descriptor: os.File refuses
// WriteAt on a file it opened with O_APPEND, which pwrite(2) accepts (on
// Linux it then writes at the end).
func pwrite(f *os.File, b []byte, off int64) (int, error) {
	var n int
	err := control(f, func(fd int) error {
		for n < len(b) {
			k, err := unix.Pwrite(fd, b[n:], off+int64(n))
			switch {
			case err == unix.EINTR:
				continue
			case err != nil:
				return err
			case k == 0:
				return unix.EIO
			}
			n += k
		}
		return nil
	})
	return n, err
}

// renameAt renames fromName in fromDir to toName in toDir with renameat(2),
// which, unlike os.Root, replaces an empty directory, atomically. The names
// are single components, so renameat follows no symbolic link; the
// directories are handles the caller resolved.
func renameAt(fromDir *os.Root, fromName string, toDir *os.Root, toName string) error {
	a, err := fromDir.Open(".")
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := toDir.Open(".")
	if err != nil {
		return err
	}
	defer b.Close()
	return control(a, func(afd int) error {
		return control(b, func(bfd int) error {
			return unix.Renameat(afd, fromName, bfd, toName)
		})
	})
}

// control runs op on the file's descriptor.
func control(f *os.File, op func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) { opErr = op(int(fd)) }); err != nil {
		return err
	}
	return opErr
}
