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
//
// Inside the mount, agenthost's own files (Protected) are out of reach by
// identity, not by name: see New and guard.go. Views (WithQuota) charge
// what one guest instance writes and creates to a Quota of its own.
package rootfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// FS is an experimental sys.FS confined to one host directory. It is safe
// for concurrent use by many module instances. Close releases the directory
// handle; the FS must not be used afterwards.
//
// Views made by WithQuota share the mount and charge what they write to
// their own Quota.
type FS struct {
	experimentalsys.UnimplementedFS
	*mount
	quota *Quota // nil: no quota
}

// mount is what the views of one FS share.
type mount struct {
	root     *os.Root
	dir      string
	readOnly bool
	guard    *guard
}

var _ experimentalsys.FS = (*FS)(nil)

// New opens dir as the root of a new FS. With readOnly, every write is
// refused with EROFS.
//
// protected lists agenthost's own files and directories. Whatever of them
// exists when New runs is recorded by identity (device and inode); the
// guest can then never reach them through the FS, whatever names, symbolic
// links or renames it uses: opening, stating or listing them fails with
// EACCES, and they are left out of directory listings. The directory
// entries the host consults to reach them inside the mount (their parent
// directories, symbolic links on the way) are pinned: they can be
// traversed and read, but not renamed, removed, replaced, linked, chmod'ed
// or touched. Only a mount that holds a protected or pinned entry resolves
// paths component by component; others keep the direct os.Root path. New
// fails when dir lies inside a protected directory.
func New(dir string, readOnly bool, protected []Protected) (*FS, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return nil, fmt.Errorf("open mount root %q: %w", dir, err)
	}
	g, err := newGuard(real, protected)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open mount root %q: %w", dir, err)
	}
	return &FS{mount: &mount{root: root, dir: dir, readOnly: readOnly, guard: g}}, nil
}

// WithQuota returns a view of the FS whose writes count against q (nil: no
// quota). Views share the mount; closing any of them closes it.
func (f *FS) WithQuota(q *Quota) *FS { return &FS{mount: f.mount, quota: q} }

// Close releases the directory handle.
func (f *FS) Close() error { return f.root.Close() }

// ReadOnly reports whether the FS refuses writes.
func (f *FS) ReadOnly() bool { return f.readOnly }

// Guarded reports whether a protected entry lies in the mount, so that
// every path is resolved component by component.
func (f *FS) Guarded() bool { return f.guard.walk }

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

// osFlags converts wazero open flags to os flags.
func osFlags(flag experimentalsys.Oflag) int {
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
	return oflag
}

// WASI preview 1 carries no file modes: wazero asks for 0600 files and 0700
// directories whatever the guest wants. Files a tool writes are for the user,
// so they are created like a shell would create them: 0644 and 0755, less the
// process umask.
const (
	filePerm fs.FileMode = 0o644
	dirPerm  fs.FileMode = 0o755
)

// OpenFile implements sys.FS.
func (f *FS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	perm = filePerm
	if f.readOnly && flag&writeFlags != 0 {
		return nil, experimentalsys.EROFS
	}
	if f.guard.walk || flag&experimentalsys.O_CREAT != 0 {
		// Creating goes through resolve in every mount, to count the
		// entries created exactly.
		of, e := f.openResolved(p, flag, perm)
		if e == experimentalsys.ENOTDIR && flag&experimentalsys.O_DIRECTORY == 0 {
			e = experimentalsys.ENOENT
		}
		return of, e
	}
	name, e := rel(p)
	if e != 0 {
		return nil, e
	}
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		if fi, err := f.root.Lstat(strings.TrimSuffix(name, "/")); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, experimentalsys.ELOOP
		}
	}
	osf, err := f.root.OpenFile(name, osFlags(flag), perm)
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
	if _, bad := f.guard.protected.has(fi); bad {
		// A hard link to a protected file, planted on the host.
		osf.Close()
		return nil, experimentalsys.EACCES
	}
	return f.wrap(osf, fi, flag)
}

// wrap checks an opened file against the flags and makes the sys.File.
func (f *FS) wrap(osf *os.File, fi fs.FileInfo, flag experimentalsys.Oflag) (experimentalsys.File, experimentalsys.Errno) {
	if flag&experimentalsys.O_DIRECTORY != 0 && !fi.IsDir() {
		osf.Close()
		return nil, experimentalsys.ENOTDIR
	}
	if fi.IsDir() && flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR) != 0 {
		osf.Close()
		return nil, experimentalsys.EISDIR
	}
	st := sys.NewStat_t(fi)
	of := &file{f: osf, readOnly: f.readOnly, flag: flag, isDir: fi.IsDir(), dev: st.Dev, ino: st.Ino, quota: f.quota,
		openedAppend: flag&experimentalsys.O_APPEND != 0}
	if f.guard.walk && of.isDir {
		of.hide = &f.guard.protected
	}
	of.seeker.f = of
	return of, 0
}

// openResolved opens a path resolved by resolve. A file is created with
// O_EXCL in the directory resolve checked (os.Root never follows a link
// then); an existing entry is opened without O_CREAT or O_TRUNC, which has
// no effect on it, checked to be the entry resolve saw, and only then
// truncated.
func (f *FS) openResolved(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	follow := flag&experimentalsys.O_NOFOLLOW == 0
	oflag := osFlags(flag) &^ (os.O_CREATE | os.O_EXCL | os.O_TRUNC)
	for try := 0; try <= maxTries; try++ {
		r, e := f.resolve(p, follow)
		if e != 0 {
			return nil, e
		}
		of, e := f.openOnce(r, flag, oflag, perm)
		r.close()
		if e != errAgain {
			return of, e
		}
	}
	return nil, experimentalsys.EAGAIN
}

func (f *FS) openOnce(r *resolved, flag experimentalsys.Oflag, oflag int, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if r.fi == nil {
		if flag&experimentalsys.O_CREAT == 0 {
			return nil, experimentalsys.ENOENT
		}
		if e := f.quota.create(); e != 0 {
			return nil, e
		}
		osf, err := r.parent.OpenFile(r.name, oflag|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			f.quota.uncreate()
			if errors.Is(err, fs.ErrExist) && flag&experimentalsys.O_EXCL == 0 {
				return nil, errAgain // created meanwhile: open it
			}
			return nil, errno(err)
		}
		fi, err := osf.Stat()
		if err != nil {
			osf.Close()
			return nil, errno(err)
		}
		return f.wrap(osf, fi, flag)
	}
	if r.fi.Mode()&fs.ModeSymlink != 0 {
		return nil, experimentalsys.ELOOP // O_NOFOLLOW on a link
	}
	if flag&(experimentalsys.O_CREAT|experimentalsys.O_EXCL) == experimentalsys.O_CREAT|experimentalsys.O_EXCL {
		return nil, experimentalsys.EEXIST
	}
	osf, err := r.parent.OpenFile(r.name, oflag, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errAgain
		}
		return nil, errno(err)
	}
	fi, err := osf.Stat()
	if err != nil {
		osf.Close()
		return nil, errno(err)
	}
	if !os.SameFile(fi, r.fi) {
		osf.Close()
		return nil, errAgain // replaced between the check and the open
	}
	if flag&experimentalsys.O_TRUNC != 0 && oflag&(os.O_WRONLY|os.O_RDWR) != 0 && fi.Mode().IsRegular() {
		if err := osf.Truncate(0); err != nil {
			osf.Close()
			return nil, errno(err)
		}
	}
	return f.wrap(osf, fi, flag)
}

// Lstat implements sys.FS.
func (f *FS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	return f.stat(p, false)
}

// Stat implements sys.FS.
func (f *FS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	return f.stat(p, true)
}

// stat is Stat, or Lstat when it does not follow a link in p's last
// component.
func (f *FS) stat(p string, follow bool) (sys.Stat_t, experimentalsys.Errno) {
	if f.guard.walk {
		return f.statResolved(p, follow)
	}
	name, e := rel(p)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	var fi fs.FileInfo
	var err error
	if follow {
		fi, err = f.root.Stat(name)
	} else {
		fi, err = f.root.Lstat(strings.TrimSuffix(name, "/"))
	}
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// resolveEntry is resolve for an entry that must exist: ENOENT when it
// does not. The caller closes r.
func (f *FS) resolveEntry(p string, follow bool) (*resolved, experimentalsys.Errno) {
	r, e := f.resolve(p, follow)
	if e != 0 {
		return nil, e
	}
	if r.fi == nil {
		r.close()
		return nil, experimentalsys.ENOENT
	}
	return r, 0
}

func (f *FS) statResolved(p string, follow bool) (sys.Stat_t, experimentalsys.Errno) {
	r, e := f.resolveEntry(p, follow)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	defer r.close()
	return sys.NewStat_t(r.fi), 0
}

// Mkdir implements sys.FS.
func (f *FS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	perm = dirPerm
	if f.readOnly {
		return experimentalsys.EROFS
	}
	var e experimentalsys.Errno
	if f.guard.walk {
		e = f.mkdirResolved(p, perm)
	} else {
		var name string
		if name, e = rel(p); e != 0 {
			return e
		}
		e = f.quota.creating(func() error { return f.root.Mkdir(strings.TrimSuffix(name, "/"), perm) })
	}
	if e == experimentalsys.ENOTDIR {
		return experimentalsys.ENOENT
	}
	return e
}

func (f *FS) mkdirResolved(p string, perm fs.FileMode) experimentalsys.Errno {
	r, e := f.resolve(p, false)
	if e != 0 {
		return e
	}
	defer r.close()
	if r.fi != nil {
		return experimentalsys.EEXIST
	}
	return f.quota.creating(func() error { return r.parent.Mkdir(r.name, perm) })
}

// Chmod implements sys.FS.
func (f *FS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	return f.touch(p, func(dir *os.Root, name string) error { return dir.Chmod(name, perm) })
}

// touch runs op (chmod, utimes) on the entry p names, in the directory
// that holds it: resolved by touchResolved on a guarded mount, else the
// mount's root with p made relative.
func (f *FS) touch(p string, op func(dir *os.Root, name string) error) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	if f.guard.walk {
		return f.touchResolved(p, func(r *resolved) error { return op(r.parent, r.name) })
	}
	name, e := rel(p)
	if e != 0 {
		return e
	}
	return errno(op(f.root, name))
}

// touchResolved runs op (chmod, utimes: os.Root follows a link in the last
// component) on the entry p ends at, unless it is pinned. nsMu keeps any
// guest from putting a link in its place meanwhile.
func (f *FS) touchResolved(p string, op func(*resolved) error) experimentalsys.Errno {
	nsMu.RLock()
	defer nsMu.RUnlock()
	r, e := f.resolveEntry(p, true)
	if e != 0 {
		return e
	}
	defer r.close()
	if f.pinned(r) {
		return experimentalsys.EACCES
	}
	return errno(op(r))
}

// writablePair checks that the mount is writable and makes the two paths
// of a rename or a link relative (rel).
func (f *FS) writablePair(from, to string) (a, b string, e experimentalsys.Errno) {
	if f.readOnly {
		return "", "", experimentalsys.EROFS
	}
	if a, e = rel(from); e != 0 {
		return "", "", e
	}
	if b, e = rel(to); e != 0 {
		return "", "", e
	}
	return a, b, 0
}

// Rename implements sys.FS.
func (f *FS) Rename(from, to string) experimentalsys.Errno {
	a, b, e := f.writablePair(from, to)
	if e != 0 {
		return e
	}
	if a == "." || b == "." {
		return experimentalsys.EINVAL
	}
	if !f.guard.walk {
		e := errno(f.root.Rename(a, b))
		if e == experimentalsys.EEXIST {
			e = f.replace(a, b)
		}
		return e
	}
	return f.pairLocked(from, to, func(ra, rb *resolved) experimentalsys.Errno {
		if f.pinned(ra) || f.pinned(rb) {
			return experimentalsys.EACCES
		}
		e := errno(f.root.Rename(ra.rel(), rb.rel()))
		if e == experimentalsys.EEXIST {
			e = replaceAt(ra, rb)
		}
		return e
	})
}

// pairLocked runs op on the entries the paths of a rename or a link
// resolve to (resolvePair), under nsMu: no guest can turn a directory of
// either path into a link meanwhile, so os.Root resolves them as resolve
// did.
func (f *FS) pairLocked(from, to string, op func(ra, rb *resolved) experimentalsys.Errno) experimentalsys.Errno {
	nsMu.Lock()
	defer nsMu.Unlock()
	ra, rb, e := f.resolvePair(from, to)
	if e != 0 {
		return e
	}
	defer ra.close()
	defer rb.close()
	return op(ra, rb)
}

// replace renames a to b (names from rel) when os.Root refused to because
// b is a directory: rename(2) replaces an empty directory with a directory
// and reports why it cannot otherwise (ENOTEMPTY, EISDIR, ...). Both
// paths are resolved to their parent directories by resolve, and renameat
// acts on single names in those.
func (f *FS) replace(a, b string) experimentalsys.Errno {
	ra, e := f.resolve(strings.TrimSuffix(a, "/"), false)
	if e != 0 {
		return e
	}
	defer ra.close()
	rb, e := f.resolve(strings.TrimSuffix(b, "/"), false)
	if e != 0 {
		return e
	}
	defer rb.close()
	switch {
	case ra.fi == nil:
		return experimentalsys.ENOENT
	case rb.fi == nil:
		return experimentalsys.EAGAIN // b went away meanwhile
	case strings.HasSuffix(a, "/") && !ra.fi.IsDir(), strings.HasSuffix(b, "/") && !rb.fi.IsDir():
		return experimentalsys.ENOTDIR
	}
	return replaceAt(ra, rb)
}

// replaceAt renames the entry ra to rb with renameat(2) where the platform
// has it; elsewhere (Windows) it keeps os.Root's EEXIST.
func replaceAt(ra, rb *resolved) experimentalsys.Errno {
	if ra.isRoot() || rb.isRoot() {
		return experimentalsys.EINVAL
	}
	err := renameAt(ra.parent, ra.name, rb.parent, rb.name)
	if errors.Is(err, errors.ErrUnsupported) {
		return experimentalsys.EEXIST
	}
	return errno(err)
}

// Rmdir implements sys.FS.
func (f *FS) Rmdir(p string) experimentalsys.Errno {
	return f.remove(p, true)
}

// Unlink implements sys.FS.
func (f *FS) Unlink(p string) experimentalsys.Errno {
	return f.remove(p, false)
}

func (f *FS) remove(p string, dir bool) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	name, e := rel(p)
	if e != 0 {
		return e
	}
	trailing := strings.HasSuffix(name, "/")
	name = strings.TrimSuffix(name, "/")
	if dir && name == "." {
		return experimentalsys.EINVAL
	}
	parent, fi := f.root, fs.FileInfo(nil)
	if f.guard.walk {
		r, e := f.resolveEntry(name, false)
		if e != 0 {
			return e
		}
		defer r.close()
		switch {
		case r.isRoot() && dir:
			return experimentalsys.EINVAL
		case r.isRoot():
			return experimentalsys.EISDIR
		}
		if f.pinned(r) {
			return experimentalsys.EACCES
		}
		// unlinkat does not follow links; a pinned entry cannot be moved
		// under this name, so the check holds without nsMu.
		parent, name, fi = r.parent, r.name, r.fi
	} else {
		var err error
		if fi, err = f.root.Lstat(name); err != nil {
			return errno(err)
		}
	}
	switch {
	case dir && !fi.IsDir():
		return experimentalsys.ENOTDIR
	case !dir && fi.IsDir():
		return experimentalsys.EISDIR
	case trailing && !fi.IsDir():
		// "file/" names a directory: unlink(2) says ENOTDIR, even for a
		// link to one.
		return experimentalsys.ENOTDIR
	}
	return errno(parent.Remove(name))
}

// Link implements sys.FS.
func (f *FS) Link(oldPath, newPath string) experimentalsys.Errno {
	a, b, e := f.writablePair(oldPath, newPath)
	if e != 0 {
		return e
	}
	if !f.guard.walk {
		return f.quota.creating(func() error { return f.root.Link(a, b) })
	}
	return f.pairLocked(oldPath, newPath, func(ra, rb *resolved) experimentalsys.Errno {
		switch {
		case f.pinned(ra):
			return experimentalsys.EACCES
		case rb.fi != nil:
			return experimentalsys.EEXIST
		case strings.HasSuffix(b, "/"):
			// A trailing slash names a directory, which a new link is not
			// (as os.Root says on the direct path).
			return experimentalsys.ENOENT
		}
		return f.quota.creating(func() error { return f.root.Link(ra.rel(), rb.rel()) })
	})
}

// Symlink implements sys.FS. The target must be relative and must stay
// inside the mount when resolved from the directory the link is made in
// (with the links on the way to it resolved); otherwise EPERM.
func (f *FS) Symlink(target, linkName string) experimentalsys.Errno {
	if f.readOnly {
		return experimentalsys.EROFS
	}
	if target == "" || path.IsAbs(target) || strings.IndexByte(target, 0) >= 0 {
		return experimentalsys.EPERM
	}
	if f.guard.walk {
		nsMu.Lock()
		defer nsMu.Unlock()
	}
	r, e := f.resolve(linkName, false)
	if e != 0 {
		return e
	}
	defer r.close()
	if r.isRoot() || r.fi != nil {
		return experimentalsys.EEXIST
	}
	if strings.HasSuffix(linkName, "/") {
		// A trailing slash names a directory, which a new link is not.
		return experimentalsys.ENOENT
	}
	var dir []string
	if r.dir != "" {
		dir = strings.Split(r.dir, "/")
	}
	if _, ok := splice(dir, target, nil); !ok {
		return experimentalsys.EPERM
	}
	return f.quota.creating(func() error { return r.parent.Symlink(target, r.name) })
}

// Readlink implements sys.FS.
func (f *FS) Readlink(p string) (string, experimentalsys.Errno) {
	if f.guard.walk {
		r, e := f.resolveEntry(p, false)
		if e != 0 {
			return "", e
		}
		defer r.close()
		dst, err := r.parent.Readlink(r.name)
		if err != nil {
			return "", errno(err)
		}
		return dst, 0
	}
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
	return f.touch(p, func(dir *os.Root, name string) error {
		return dir.Chtimes(name, nanosToTime(atim), nanosToTime(mtim))
	})
}

// nanosToTime converts a WASI timestamp; UTIME_OMIT becomes the zero time,
// which os.Chtimes leaves unchanged.
func nanosToTime(n int64) time.Time {
	if n == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, n)
}
