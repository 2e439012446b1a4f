// Package rootfs is the file system agenthost mounts into a plugin: a wazero
// experimental sys.FS backed by an os.Root, so that no path the guest can
// name reaches outside the mounted directory.
//
// Confinement comes from os.Root: "..", symlinks planted on the host that
// point outside, absolute symlinks and symlinks the guest creates are all
// resolved by the kernel-backed walk of os.Root and refused when they leave
// the root. On top of that, FS refuses to create symlinks whose target is
// absolute or climbs out of the mount, so a guest cannot leave a trap for
// programs that later read the directory without os.Root. A read-only FS
// refuses every operation that would change the tree with EROFS, and files it
// opens cannot be written.
package rootfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// FS is an experimental sys.FS confined to one host directory. It is safe
// for concurrent use by many module instances. Close releases the directory
// handle; the FS must not be used afterwards.
type FS struct {
	experimentalsys.UnimplementedFS
	root     *os.Root
	dir      string
	readOnly bool
}

var _ experimentalsys.FS = (*FS)(nil)

// New opens dir as the root of a new FS. With readOnly, every write is
// refused with EROFS.
func New(dir string, readOnly bool) (*FS, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open mount root %q: %w", dir, err)
	}
	return &FS{root: root, dir: dir, readOnly: readOnly}, nil
}

// Close releases the directory handle.
func (f *FS) Close() error { return f.root.Close() }

// ReadOnly reports whether the FS refuses writes.
func (f *FS) ReadOnly() bool { return f.readOnly }

// String returns the host directory, for logs.
func (f *FS) String() string { return f.dir }

// rel turns a wazero path (relative to the mount, possibly "" or "/" for the
// mount itself, possibly with a trailing slash) into a name for os.Root.
// Lexical escapes are refused here already; os.Root refuses the rest.
func rel(p string) (string, experimentalsys.Errno) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", experimentalsys.EINVAL
	}
	trailing := strings.HasSuffix(p, "/") && strings.Trim(p, "/") != ""
	p = path.Clean("/" + p) // "/" anchors it: ".." cannot climb above the mount
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return ".", 0
	}
	if trailing {
		p += "/"
	}
	return p, 0
}

// errno maps an error from os.Root to a WASI errno. Errors that are not
// system errors (os.Root's "path escapes from parent") become EPERM.
func errno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	var se syscall.Errno
	if errors.As(err, &se) {
		return experimentalsys.UnwrapOSError(se)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return experimentalsys.ENOENT
	case errors.Is(err, fs.ErrExist):
		return experimentalsys.EEXIST
	case errors.Is(err, fs.ErrPermission):
		return experimentalsys.EACCES
	case errors.Is(err, fs.ErrClosed):
		return experimentalsys.EBADF
	case errors.Is(err, fs.ErrInvalid):
		return experimentalsys.EINVAL
	case errors.Is(err, io.EOF):
		return 0
	}
	return experimentalsys.EPERM
}

const writeFlags = experimentalsys.O_RDWR | experimentalsys.O_WRONLY | experimentalsys.O_CREAT |
	experimentalsys.O_TRUNC | experimentalsys.O_APPEND

// OpenFile implements sys.FS.
func (f *FS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	name, e := rel(p)
	if e != 0 {
		return nil, e
	}
	if f.readOnly && flag&writeFlags != 0 {
		return nil, experimentalsys.EROFS
	}
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		if fi, err := f.root.Lstat(strings.TrimSuffix(name, "/")); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, experimentalsys.ELOOP
		}
	}
	var oflag int
	switch {
	case flag&experimentalsys.O_RDWR != 0:
		oflag = os.O_RDWR
	case flag&experimentalsys.O_WRONLY != 0:
		oflag = os.O_WRONLY
	default:
		oflag = os.O_RDONLY
	}
	if flag&experimentalsys.O_APPEND != 0 {
		oflag |= os.O_APPEND
	}
	if flag&experimentalsys.O_CREAT != 0 {
		oflag |= os.O_CREATE
	}
	if flag&experimentalsys.O_EXCL != 0 {
		oflag |= os.O_EXCL
	}
	if flag&experimentalsys.O_TRUNC != 0 {
		oflag |= os.O_TRUNC
	}
	if flag&(experimentalsys.O_SYNC|experimentalsys.O_DSYNC|experimentalsys.O_RSYNC) != 0 {
		oflag |= os.O_SYNC
	}
	osf, err := f.root.OpenFile(name, oflag, perm)
	if err != nil {
		if e := errno(err); e == experimentalsys.ENOTDIR && flag&experimentalsys.O_DIRECTORY == 0 {
			return nil, experimentalsys.ENOENT
		} else {
			return nil, e
		}
	}
	fi, err := osf.Stat()
	if err != nil {
		osf.Close()
		return nil, errno(err)
	}
	if flag&experimentalsys.O_DIRECTORY != 0 && !fi.IsDir() {
		osf.Close()
		return nil, experimentalsys.ENOTDIR
	}
	if fi.IsDir() && oflag&(os.O_WRONLY|os.O_RDWR) != 0 {
		osf.Close()
		return nil, experimentalsys.EISDIR
	}
	st := sys.NewStat_t(fi)
	of := &file{f: osf, readOnly: f.readOnly, flag: flag, isDir: fi.IsDir(), dev: st.Dev, ino: st.Ino}
	of.seeker.f = of
	return of, 0
}

// Lstat implements sys.FS.
func (f *FS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	name, e := rel(p)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	fi, err := f.root.Lstat(strings.TrimSuffix(name, "/"))
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Stat implements sys.FS.
func (f *FS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	name, e := rel(p)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	fi, err := f.root.Stat(name)
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Mkdir implements sys.FS.
func (f *FS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	name, e := rel(p)
	if e != 0 {
		return e
	}
	if e := errno(f.root.Mkdir(strings.TrimSuffix(name, "/"), perm)); e == experimentalsys.ENOTDIR {
		return experimentalsys.ENOENT
	} else {
		return e
	}
}

// Chmod implements sys.FS.
func (f *FS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	name, e := rel(p)
	if e != 0 {
		return e
	}
	return errno(f.root.Chmod(name, perm))
}

// Rename implements sys.FS.
func (f *FS) Rename(from, to string) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	a, e := rel(from)
	if e != 0 {
		return e
	}
	b, e := rel(to)
	if e != 0 {
		return e
	}
	if a == "." || b == "." {
		return experimentalsys.EINVAL
	}
	return errno(f.root.Rename(a, b))
}

// Rmdir implements sys.FS.
func (f *FS) Rmdir(p string) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	name, e := rel(p)
	if e != 0 {
		return e
	}
	name = strings.TrimSuffix(name, "/")
	if name == "." {
		return experimentalsys.EINVAL
	}
	fi, err := f.root.Lstat(name)
	if err != nil {
		return errno(err)
	}
	if !fi.IsDir() {
		return experimentalsys.ENOTDIR
	}
	return errno(f.root.Remove(name))
}

// Unlink implements sys.FS.
func (f *FS) Unlink(p string) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	name, e := rel(p)
	if e != 0 {
		return e
	}
	name = strings.TrimSuffix(name, "/")
	fi, err := f.root.Lstat(name)
	if err != nil {
		return errno(err)
	}
	if fi.IsDir() {
		return experimentalsys.EISDIR
	}
	return errno(f.root.Remove(name))
}

// Link implements sys.FS.
func (f *FS) Link(oldPath, newPath string) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	a, e := rel(oldPath)
	if e != 0 {
		return e
	}
	b, e := rel(newPath)
	if e != 0 {
		return e
	}
	return errno(f.root.Link(a, b))
}

// Symlink implements sys.FS. The target must be relative and must stay
// inside the mount when resolved from the link's directory; otherwise EPERM.
func (f *FS) Symlink(target, linkName string) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	name, e := rel(linkName)
	if e != 0 {
		return e
	}
	name = strings.TrimSuffix(name, "/")
	if target == "" || path.IsAbs(target) || strings.IndexByte(target, 0) >= 0 {
		return experimentalsys.EPERM
	}
	// Resolve lexically from the link's directory, anchored at the mount.
	depth := 0
	if dir := path.Dir(name); dir != "." {
		depth = strings.Count(dir, "/") + 1
	}
	for _, part := range strings.Split(target, "/") {
		switch part {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return experimentalsys.EPERM
			}
		default:
			depth++
		}
	}
	return errno(f.root.Symlink(target, name))
}

// Readlink implements sys.FS.
func (f *FS) Readlink(p string) (string, experimentalsys.Errno) {
	name, e := rel(p)
	if e != 0 {
		return "", e
	}
	dst, err := f.root.Readlink(strings.TrimSuffix(name, "/"))
	if err != nil {
		return "", errno(err)
	}
	return dst, 0
}

// Utimens implements sys.FS.
func (f *FS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	name, e := rel(p)
	if e != 0 {
		return e
	}
	return errno(f.root.Chtimes(name, nanosToTime(atim), nanosToTime(mtim)))
}

// nanosToTime converts a WASI timestamp; UTIME_OMIT becomes the zero time,
// which os.Chtimes leaves unchanged.
func nanosToTime(n int64) time.Time {
	if n == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, n)
}
