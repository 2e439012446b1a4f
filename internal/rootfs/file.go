package rootfs

import (
	"errors"
	"io"
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// file is an open *os.File seen through sys.File. It is used by one guest
// instance at a time (wazero serialises calls per module).
type file struct {
	seeker[int64]
	f        *os.File
	flag     experimentalsys.Oflag
	readOnly bool
	isDir    bool
	// openedAppend: opened with O_APPEND (SetAppend may have changed
	// that since).
	openedAppend bool
	dev          uint64
	ino          sys.Inode
	closed       bool
	// quota is charged for what is written; nil: no quota.
	quota *Quota
	// hide, for a directory of a guarded mount, is the protected set:
	// Readdir leaves its members out.
	hide *idSet
}

var _ experimentalsys.File = (*file)(nil)

// seeker carries file's Seek method. sys.File requires
// Seek(int64, int) (int64, Errno), which go vet's stdmethods check mistakes
// for a malformed io.Seeker; declaring the offset through a type parameter
// (always int64) keeps the check quiet without changing the method set.
type seeker[Off ~int64] struct{ f *file }

// Seek implements sys.File.Seek. A directory may only be rewound.
func (s seeker[Off]) Seek(offset Off, whence int) (int64, experimentalsys.Errno) {
	f := s.f
	if f.closed {
		return 0, experimentalsys.EBADF
	}
	if whence < io.SeekStart || whence > io.SeekEnd {
		return 0, experimentalsys.EINVAL
	}
	if f.isDir && (offset != 0 || whence != io.SeekStart) {
		return 0, experimentalsys.EISDIR
	}
	// os.File resets its directory reader on Seek.
	n, err := f.f.Seek(int64(offset), whence)
	return n, f.ioErrno(err)
}

func (f *file) Dev() (uint64, experimentalsys.Errno)    { return f.dev, 0 }
func (f *file) Ino() (sys.Inode, experimentalsys.Errno) { return f.ino, 0 }
func (f *file) IsDir() (bool, experimentalsys.Errno)    { return f.isDir, 0 }

func (f *file) IsAppend() bool { return f.flag&experimentalsys.O_APPEND != 0 }

// SetAppend changes O_APPEND on the open file in place (fcntl F_SETFL), so
// no path is looked up again (reopening by path could race with a rename
// into a symbolic link). Where that is not possible (Windows) it returns
// ENOSYS.
func (f *file) SetAppend(enable bool) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if enable == f.IsAppend() {
		return 0
	}
	if err := setAppend(f.f, enable); err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			return experimentalsys.ENOSYS
		}
		return f.ioErrno(err)
	}
	if enable {
		f.flag |= experimentalsys.O_APPEND
	} else {
		f.flag &^= experimentalsys.O_APPEND
	}
	return 0
}

func (f *file) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	fi, err := f.f.Stat()
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return sys.NewStat_t(fi), 0
}

func (f *file) Read(buf []byte) (int, experimentalsys.Errno) {
	if f.isDir {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.Read(buf)
	if err == io.EOF {
		err = nil
	}
	return n, f.ioErrno(err)
}

func (f *file) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.isDir {
		return 0, experimentalsys.EISDIR
	}
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	n, err := f.f.ReadAt(buf, off)
	if err == io.EOF {
		err = nil
	}
	return n, f.ioErrno(err)
}

func (f *file) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.closed || !f.isDir {
		return nil, experimentalsys.EBADF
	}
	for {
		entries, err := f.f.ReadDir(n)
		if err != nil && err != io.EOF {
			return nil, errno(err)
		}
		out := make([]experimentalsys.Dirent, 0, len(entries))
		for _, e := range entries {
			d := experimentalsys.Dirent{Name: e.Name(), Type: e.Type()}
			fi, err := e.Info()
			if err == nil {
				d.Ino = sys.NewStat_t(fi).Ino
			}
			if f.hide != nil {
				if err != nil {
					continue // gone, or cannot be checked
				}
				if _, hidden := f.hide.has(fi); hidden {
					continue
				}
			}
			out = append(out, d)
		}
		// An empty batch means the end: read on if every entry of a
		// non-empty one was hidden.
		if len(out) > 0 || len(entries) == 0 || n <= 0 {
			return out, 0
		}
	}
}

func (f *file) Write(buf []byte) (int, experimentalsys.Errno) {
	if f.readOnly {
		return 0, experimentalsys.EBADF
	}
	if f.isDir {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	// An appending write starts at the end; any other at the position,
	// which may be past the end (a seek there); a file that cannot seek
	// has no position to leave a hole behind.
	var hole int64
	if f.quota != nil && !f.IsAppend() {
		if pos, err := f.f.Seek(0, io.SeekCurrent); err == nil {
			var e experimentalsys.Errno
			if hole, e = f.chargeGrowth(pos); e != 0 {
				return 0, e
			}
		}
	}
	k, e := f.quota.write(len(buf))
	if e != 0 {
		f.quota.unwrite(hole)
		return 0, e
	}
	n, err := f.f.Write(buf[:k])
	f.uncharge(hole, k, n)
	return n, f.ioErrno(err)
}

func (f *file) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.readOnly {
		return 0, experimentalsys.EBADF
	}
	if f.isDir {
		return 0, experimentalsys.EISDIR
	}
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	if len(buf) == 0 {
		return 0, 0
	}
	// The hole is charged whether or not the file appends (Linux's
	// pwrite(2) then writes at the end, other systems at off).
	hole, e := f.chargeGrowth(off)
	if e != 0 {
		return 0, e
	}
	k, e := f.quota.write(len(buf))
	if e != 0 {
		f.quota.unwrite(hole)
		return 0, e
	}
	var n int
	var err error
	if f.openedAppend {
		// os.File refuses WriteAt on a file opened with O_APPEND.
		n, err = pwrite(f.f, buf[:k], off)
	} else {
		n, err = f.f.WriteAt(buf[:k], off)
	}
	f.uncharge(hole, k, n)
	return n, f.ioErrno(err)
}

// chargeGrowth charges the quota for growing the file to end bytes when
// that is past its end: the bytes in between read as zeros, as if they
// had been written, whether the file grows by truncate or by a write that
// starts past the end (after a seek there, or at that offset). It returns
// the bytes charged, which uncharge gives back if the growth does not
// happen.
func (f *file) chargeGrowth(end int64) (int64, experimentalsys.Errno) {
	if f.quota == nil || end <= 0 {
		return 0, 0
	}
	fi, err := f.f.Stat()
	if err != nil {
		return 0, f.ioErrno(err)
	}
	grow := end - fi.Size()
	if grow <= 0 {
		return 0, 0
	}
	if e := f.quota.grow(grow); e != 0 {
		return 0, e
	}
	return grow, 0
}

// uncharge gives back what a write of k reserved bytes after a hole of
// hole charged bytes did not use: the bytes not written, and the hole if
// nothing was written (the file did not grow).
func (f *file) uncharge(hole int64, k, n int) {
	if n <= 0 {
		f.quota.unwrite(hole)
	}
	f.quota.unwrite(int64(k - n))
}

// Truncate counts the growth of the file against the quota (chargeGrowth).
func (f *file) Truncate(size int64) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EBADF
	}
	if f.isDir {
		return experimentalsys.EISDIR
	}
	if size < 0 {
		return experimentalsys.EINVAL
	}
	grow, e := f.chargeGrowth(size)
	if e != 0 {
		return e
	}
	if err := f.f.Truncate(size); err != nil {
		f.quota.unwrite(grow)
		return f.ioErrno(err)
	}
	return 0
}

func (f *file) Sync() experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if f.readOnly {
		return 0
	}
	return f.ioErrno(f.f.Sync())
}

func (f *file) Datasync() experimentalsys.Errno { return f.Sync() }

// Utimens on an open file is not supported; guests use the path form.
func (f *file) Utimens(atim, mtim int64) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	return experimentalsys.ENOSYS
}

func (f *file) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	return errno(f.f.Close())
}

func (f *file) ioErrno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	if f.closed {
		return experimentalsys.EBADF
	}
	if e := errno(err); e != experimentalsys.EPERM {
		return e
	}
	return experimentalsys.EIO
}
