package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// Protected is a host path that no guest may reach through a mount: one of
// agenthost's own files or directories (the data directory, the
// compilation cache, the config file, ...). See New.
type Protected struct {
	// Path is the host path, absolute. It need not exist; a path that
	// does not exist when the mount is made is not protected by it.
	Path string
	// What names it in messages, like "the data directory".
	What string
}

// ident is the identity of a file: its device and inode numbers.
type ident struct{ dev, ino uint64 }

func identOf(fi fs.FileInfo) (ident, bool) {
	st := sys.NewStat_t(fi)
	return ident{st.Dev, st.Ino}, st.Ino != 0
}

// idSet is a set of file identities. Where the platform gives no inode
// numbers (Windows), it falls back to os.SameFile against every member.
type idSet struct {
	ids   map[ident]string
	infos []idEntry
}

type idEntry struct {
	fi   fs.FileInfo
	what string
}

func (s *idSet) add(fi fs.FileInfo, what string) {
	if id, ok := identOf(fi); ok {
		if s.ids == nil {
			s.ids = map[ident]string{}
		}
		if _, dup := s.ids[id]; !dup {
			s.ids[id] = what
		}
		return
	}
	s.infos = append(s.infos, idEntry{fi, what})
}

// has reports whether fi is a member, and what it is.
func (s *idSet) has(fi fs.FileInfo) (string, bool) {
	if id, ok := identOf(fi); ok {
		what, hit := s.ids[id]
		return what, hit
	}
	for _, e := range s.infos {
		if os.SameFile(fi, e.fi) {
			return e.what, true
		}
	}
	return "", false
}

func (s *idSet) empty() bool { return len(s.ids) == 0 && len(s.infos) == 0 }

// guard holds what a mount must keep the guest away from.
//
// A protected entry is never reached: a path whose resolution passes
// through it or ends on it is refused with EACCES, and listings leave it
// out. A pinned entry is a directory entry inside the mount that the host
// consults to reach a protected one (its parent directories, a symbolic
// link on the way): it can be traversed and read, but not renamed, removed,
// replaced, linked, chmod'ed or touched, so a protected entry cannot be
// moved aside and replaced by a forgery. Entries are known by identity
// (device and inode), never by name.
type guard struct {
	protected idSet
	pinned    idSet
	// walk is set when a protected or pinned entry lies inside the mount:
	// every path is then resolved component by component. Otherwise the
	// mount keeps the direct os.Root path, and only files opened are
	// checked against the protected set (a hard link planted on the host).
	walk bool
}

// nsMu orders the operations that act on a name after checking it and that
// os.Root would follow through a symbolic link (chmod, utimes: read-locked)
// against those that can put a symbolic link in place of a name, or change
// which directory a checked path names (symlink, link, rename: locked).
// It is global because two mounts may show the same host directory.
var nsMu sync.RWMutex

// newGuard computes the guard of the mount whose real (absolute,
// symlink-free) root is realRoot. It fails when the mount itself lies in a
// protected directory.
func newGuard(realRoot string, ps []Protected) (*guard, error) {
	g := &guard{}
	for _, p := range ps {
		entries, real, err := lookups(p.Path)
		if err != nil {
			continue // does not exist (yet): nothing to protect
		}
		fi, err := os.Lstat(real)
		if err != nil {
			continue
		}
		g.protected.add(fi, p.What)
		if fi.IsDir() {
			if _, in := within(real, realRoot); in || real == realRoot {
				return nil, fmt.Errorf("the mount lies inside %s, %s, which plugins may not reach; mount a directory outside it", p.What, p.Path)
			}
		}
		for _, e := range entries {
			rel, in := within(realRoot, e)
			if !in {
				continue
			}
			g.walk = true
			parts := strings.Split(rel, string(filepath.Separator))
			for i := range parts {
				if fi, err := os.Lstat(filepath.Join(realRoot, filepath.Join(parts[:i+1]...))); err == nil {
					g.pinned.add(fi, p.What)
				}
			}
		}
	}
	return g, nil
}

// within reports whether p lies strictly inside dir (both clean and
// absolute), and p relative to dir.
func within(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// lookups resolves the host path p as the kernel does when the host opens
// it, and returns every directory entry consulted on the way (each as a
// path whose directory part holds no symbolic link, so it names the entry
// itself, not what it points to) and the real path p ends at.
func lookups(p string) (entries []string, real string, err error) {
	p, err = filepath.Abs(p)
	if err != nil {
		return nil, "", err
	}
	vol := filepath.VolumeName(p)
	cur := vol + string(filepath.Separator)
	rest := splitHost(p[len(vol):])
	for links := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return nil, "", err
		}
		entries = append(entries, next)
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > 255 {
			return nil, "", fmt.Errorf("%s: too many symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return nil, "", err
		}
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			cur, target = v+string(filepath.Separator), target[len(v):]
		}
		rest = append(splitHost(target), rest...)
	}
	return entries, cur, nil
}

func splitHost(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return os.IsPathSeparator(uint8(r)) })
}

// Limits of one resolution.
const (
	// maxLinks bounds the symbolic links followed, as the kernel's
	// MAXSYMLINKS does.
	maxLinks = 40
	// maxTries bounds how often an operation starts over when the tree
	// changed under it; then it fails with EAGAIN.
	maxTries = 8
)

// errAgain makes an operation start over: the tree changed between a check
// and the use of what was checked.
const errAgain = experimentalsys.Errno(0xffff)

// resolved is a guest path resolved to its parent directory and its name
// there.
type resolved struct {
	// parent is the directory holding the entry: the mount root, or a
	// handle of its own (owned) that close releases.
	parent *os.Root
	owned  bool
	// dir is the parent's path relative to the mount, without symbolic
	// links ("" for the mount root); name the entry's name in it ("." for
	// the mount root itself).
	dir, name string
	// fi is the entry (not followed); nil when it does not exist.
	fi fs.FileInfo
}

// resolvePair resolves the two paths of a rename or a link, neither
// following a final link: from must exist, to may not. On success the
// caller closes both; on failure neither is left open. Call it under nsMu.
func (f *FS) resolvePair(from, to string) (ra, rb *resolved, e experimentalsys.Errno) {
	if ra, e = f.resolve(from, false); e != 0 {
		return nil, nil, e
	}
	if ra.fi == nil {
		ra.close()
		return nil, nil, experimentalsys.ENOENT
	}
	if rb, e = f.resolve(to, false); e != 0 {
		ra.close()
		return nil, nil, e
	}
	return ra, rb, 0
}

func (r *resolved) close() {
	if r.owned {
		r.parent.Close()
	}
}

// rel is the entry's path relative to the mount, without symbolic links
// in its directory part.
func (r *resolved) rel() string {
	if r.dir == "" {
		return r.name
	}
	return r.dir + "/" + r.name
}

func (r *resolved) isRoot() bool { return r.name == "." }

// resolve resolves a guest path without trusting names: it walks the path
// one component at a time from the mount root, holding a handle on each
// directory, following symbolic links itself (a link may not leave the
// mount), and checks every entry it meets against the protected set; a
// directory handle it opens must be the entry it checked, or it starts
// over. With follow, a symbolic link in the last component is followed
// too. A trailing slash requires a directory. The last component need not
// exist (fi is then nil); the caller acts on it through parent and name,
// and closes the result.
func (f *FS) resolve(p string, follow bool) (*resolved, experimentalsys.Errno) {
	name, e := rel(p)
	if e != 0 {
		return nil, e
	}
	mustDir := strings.HasSuffix(name, "/")
	name = strings.TrimSuffix(name, "/")
	if mustDir {
		follow = true
	}
	var comps []string
	if name != "." {
		comps = strings.Split(name, "/")
	}
	for try := 0; ; try++ {
		r, e := f.walk(comps, follow, mustDir)
		if e != errAgain {
			return r, e
		}
		if try == maxTries {
			return nil, experimentalsys.EAGAIN
		}
	}
}

func (f *FS) walk(comps []string, follow, mustDir bool) (*resolved, experimentalsys.Errno) {
	cur, owned := f.root, false
	var done []string // the real path of cur, relative to the mount
	release := func() {
		if owned {
			cur.Close()
		}
	}
	if len(comps) == 0 {
		fi, err := f.root.Lstat(".")
		if err != nil {
			return nil, errno(err)
		}
		return &resolved{parent: f.root, name: ".", fi: fi}, 0
	}
	for links := 0; ; {
		c := comps[0]
		last := len(comps) == 1
		fi, err := cur.Lstat(c)
		if err != nil {
			if last && errors.Is(err, fs.ErrNotExist) {
				return &resolved{parent: cur, owned: owned, dir: strings.Join(done, "/"), name: c}, 0
			}
			release()
			return nil, errno(err)
		}
		if _, bad := f.guard.protected.has(fi); bad {
			release()
			return nil, experimentalsys.EACCES
		}
		if fi.Mode()&fs.ModeSymlink != 0 && (!last || follow) {
			if links++; links > maxLinks {
				release()
				return nil, experimentalsys.ELOOP
			}
			target, err := cur.Readlink(c)
			release()
			if err != nil {
				return nil, errAgain // it was a link a moment ago
			}
			next, ok := splice(done, target, comps[1:])
			if !ok {
				return nil, experimentalsys.EPERM // the link leaves the mount
			}
			// Start over from the root with the link replaced by its target.
			cur, owned, done, comps = f.root, false, nil, next
			if len(comps) == 0 {
				return f.walk(nil, follow, mustDir)
			}
			continue
		}
		if last {
			if mustDir && !fi.IsDir() {
				release()
				return nil, experimentalsys.ENOTDIR
			}
			return &resolved{parent: cur, owned: owned, dir: strings.Join(done, "/"), name: c, fi: fi}, 0
		}
		if !fi.IsDir() {
			release()
			return nil, experimentalsys.ENOTDIR
		}
		sub, err := cur.OpenRoot(c)
		release()
		if err != nil {
			return nil, errAgain
		}
		if st, err := sub.Stat("."); err != nil || !os.SameFile(st, fi) {
			sub.Close()
			return nil, errAgain // swapped between the check and the open
		}
		cur, owned = sub, true
		done = append(done, c)
		comps = comps[1:]
	}
}

// splice replaces a symbolic link found at dir/<link> by its target
// followed by rest, resolving ".." lexically against dir (which holds no
// links). It fails for an absolute target or one that climbs out of the
// mount.
func splice(dir []string, target string, rest []string) ([]string, bool) {
	if target == "" || strings.HasPrefix(target, "/") || filepath.IsAbs(target) {
		return nil, false
	}
	out := append([]string(nil), dir...)
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(out) == 0 {
				return nil, false
			}
			out = out[:len(out)-1]
		default:
			out = append(out, c)
		}
	}
	return append(out, rest...), true
}

// pinned reports whether the guest may not rename, remove, replace, link,
// chmod or touch r: a protected or pinned entry, or the mount root of a
// guarded mount.
func (f *FS) pinned(r *resolved) bool {
	if r.isRoot() {
		return f.guard.walk
	}
	if r.fi == nil {
		return false
	}
	if _, ok := f.guard.protected.has(r.fi); ok {
		return true
	}
	_, ok := f.guard.pinned.has(r.fi)
	return ok
}
