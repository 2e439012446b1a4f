package component

import (
	"io/fs"
	"path"
	"strings"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// wasi:filesystem error-code cases (stable across WASI 0.2.x).
const (
	ecAccess       = 0
	ecBadDesc      = 3
	ecExist        = 7
	ecInterrupted  = 11
	ecInvalid      = 12
	ecIO           = 13
	ecIsDirectory  = 14
	ecLoop         = 15
	ecNameTooLong  = 18
	ecNoEntry      = 20
	ecNotDirectory = 24
	ecNotEmpty     = 25
	ecUnsupported  = 27
	ecOverflow     = 30
	ecNotPermitted = 31
	ecReadOnly     = 33
	ecWouldBlock   = 1
)

// descriptor-flags bits.
const (
	dfRead            = 1 << 0
	dfWrite           = 1 << 1
	dfMutateDir       = 1 << 5
	openCreate        = 1 << 0
	openDirectory     = 1 << 1
	openExclusive     = 1 << 2
	openTruncate      = 1 << 3
	pathFollow        = 1 << 0
	maxDirBatch       = 256
	maxPathBytes      = 4096
	filePermissions   = 0o644
	dirPermissions    = 0o755
	descTypeUnknown   = 0
	descTypeBlock     = 1
	descTypeChar      = 2
	descTypeDir       = 3
	descTypeFifo      = 4
	descTypeSymlink   = 5
	descTypeRegular   = 6
	descTypeSocket    = 7
	timestampNoChange = 0
	timestampNow      = 1
)

func errnoCode(e experimentalsys.Errno) uint32 {
	switch e {
	case experimentalsys.EACCES:
		return ecAccess
	case experimentalsys.EAGAIN:
		return ecWouldBlock
	case experimentalsys.EBADF:
		return ecBadDesc
	case experimentalsys.EEXIST:
		return ecExist
	case experimentalsys.EINTR:
		return ecInterrupted
	case experimentalsys.EINVAL:
		return ecInvalid
	case experimentalsys.EISDIR:
		return ecIsDirectory
	case experimentalsys.ELOOP:
		return ecLoop
	case experimentalsys.ENAMETOOLONG:
		return ecNameTooLong
	case experimentalsys.ENOENT:
		return ecNoEntry
	case experimentalsys.ENOSYS, experimentalsys.ENOTSUP:
		return ecUnsupported
	case experimentalsys.ENOTDIR:
		return ecNotDirectory
	case experimentalsys.ENOTEMPTY:
		return ecNotEmpty
	case experimentalsys.ERANGE:
		return ecOverflow
	case experimentalsys.EPERM:
		return ecNotPermitted
	case experimentalsys.EROFS:
		return ecReadOnly
	}
	return ecIO
}

func fsErr(code uint32) Var { return fail(code) }

// openFile is an open file shared by a descriptor and the streams made
// from it; it is closed when the last of them is dropped.
type openFile struct {
	f    experimentalsys.File
	refs int
}

func (o *openFile) release() {
	if o == nil {
		return
	}
	o.refs--
	if o.refs == 0 {
		o.f.Close()
	}
}

// descriptor is a wasi:filesystem descriptor: a file or directory of a
// mount, named by its path from the mount's root.
type descriptor struct {
	m     *Mount
	path  string // "" for the mount's root
	file  *openFile
	dir   bool
	flags uint32
}

func (d *descriptor) drop() { d.file.release() }

func descOf(a Value) *descriptor {
	d, ok := a.(*descriptor)
	if !ok {
		hostBug("descriptor is %T", a)
	}
	return d
}

// twoPaths runs op (link, rename) on path p of directory d and path np of
// directory nd, which must be on one mount, as their paths from the
// mount's root; writable says the directories allow it.
func twoPaths(d *descriptor, p string, nd *descriptor, np string, writable bool, op func(from, to string) experimentalsys.Errno) Value {
	from, code, good := d.resolve(p)
	if !good {
		return fsErr(code)
	}
	to, code, good := nd.resolve(np)
	if !good {
		return fsErr(code)
	}
	if d.m != nd.m {
		return fsErr(36) // cross-device
	}
	if !writable {
		return fsErr(ecReadOnly)
	}
	if e := op(d.fsPath(from), d.fsPath(to)); e != 0 {
		return fsErr(errnoCode(e))
	}
	return ok(nil)
}

// writeStream opens out, an output stream (its offset or append mode
// set), on the file d, which must be open for writing.
func writeStream(d *descriptor, out *fileOutput) Value {
	if d.dir {
		return fsErr(ecIsDirectory)
	}
	if d.flags&dfWrite == 0 {
		return fsErr(ecBadDesc)
	}
	d.file.refs++
	out.of = d.file
	return ok(out)
}

// resolve names p, relative to directory d, from the mount's root. An
// absolute path, or one that climbs above d, is refused as WASI requires
// of a capability: d is all the guest may reach through it.
func (d *descriptor) resolve(p string) (string, uint32, bool) {
	if !d.dir {
		return "", ecNotDirectory, false
	}
	if len(p) > maxPathBytes {
		return "", ecNameTooLong, false
	}
	if p == "" {
		return "", ecNoEntry, false
	}
	if strings.HasPrefix(p, "/") || strings.IndexByte(p, 0) >= 0 {
		return "", ecNotPermitted, false
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", ecNotPermitted, false
	}
	full := path.Join(d.path, c)
	if full == "." {
		full = ""
	}
	if strings.HasSuffix(p, "/") && full != "" {
		full += "/"
	}
	return full, 0, true
}

func (d *descriptor) fsPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func (d *descriptor) writable() bool { return d.flags&(dfWrite|dfMutateDir) != 0 && !d.m.ReadOnly }

func statType(m fs.FileMode) uint32 {
	switch {
	case m.IsDir():
		return descTypeDir
	case m&fs.ModeSymlink != 0:
		return descTypeSymlink
	case m.IsRegular():
		return descTypeRegular
	case m&fs.ModeCharDevice != 0:
		return descTypeChar
	case m&fs.ModeDevice != 0:
		return descTypeBlock
	case m&fs.ModeNamedPipe != 0:
		return descTypeFifo
	case m&fs.ModeSocket != 0:
		return descTypeSocket
	}
	return descTypeUnknown
}

func datetime(ns int64) Value {
	if ns <= 0 {
		return some([]Value{uint64(0), uint64(0)})
	}
	return some([]Value{uint64(ns / 1e9), uint64(ns % 1e9)})
}

func statValue(s sys.Stat_t) Value {
	return []Value{statType(s.Mode), s.Nlink, uint64(max(s.Size, 0)), datetime(s.Atim), datetime(s.Mtim), datetime(s.Ctim)}
}

// fileInput reads a file from an offset.
type fileInput struct {
	of  *openFile
	off int64
}

func (s *fileInput) read(_ *call, n uint64, _ bool) ([]byte, Var, bool) {
	b := make([]byte, min(n, maxIO))
	k, e := s.of.f.Pread(b, s.off)
	if e != 0 {
		return nil, streamFailed("read: " + e.Error()), false
	}
	if k == 0 && len(b) > 0 {
		return nil, streamClosed(), false
	}
	s.off += int64(k)
	return b[:k], Var{}, true
}
func (s *fileInput) pollable() *pollable { return newReadyPollable() }
func (s *fileInput) drop()               { s.of.release() }

// fileOutput writes a file from an offset, or at its end.
type fileOutput struct {
	of     *openFile
	off    int64
	append bool
}

func (s *fileOutput) checkWrite(*call) (uint64, *Var) { return maxIO, nil }
func (s *fileOutput) write(_ *call, b []byte) *Var {
	if s.append {
		st, e := s.of.f.Stat()
		if e != 0 {
			v := streamFailed("write: " + e.Error())
			return &v
		}
		s.off = st.Size
	}
	for len(b) > 0 {
		k, e := s.of.f.Pwrite(b, s.off)
		if e != 0 {
			v := streamFailed("write: " + e.Error())
			return &v
		}
		if k == 0 {
			v := streamFailed("write: no progress")
			return &v
		}
		s.off += int64(k)
		b = b[k:]
	}
	return nil
}
func (s *fileOutput) pollable() *pollable { return newReadyPollable() }
func (s *fileOutput) drop()               { s.of.release() }

// dirStream lists a directory in batches.
type dirStream struct {
	of      *openFile
	pending []experimentalsys.Dirent
	done    bool
}

func (s *dirStream) drop() { s.of.release() }

func (d *descriptor) open(p string, follow bool, oflags, dflags uint32) Value {
	full, code, good := d.resolve(p)
	if !good {
		return fsErr(code)
	}
	write := dflags&dfWrite != 0
	if (write || oflags&(openCreate|openTruncate) != 0) && (d.m.ReadOnly || d.flags&dfMutateDir == 0) {
		return fsErr(ecReadOnly)
	}
	var flag experimentalsys.Oflag
	switch {
	case write && dflags&dfRead != 0:
		flag = experimentalsys.O_RDWR
	case write:
		flag = experimentalsys.O_WRONLY
	default:
		flag = experimentalsys.O_RDONLY
	}
	if oflags&openCreate != 0 {
		flag |= experimentalsys.O_CREAT
	}
	if oflags&openExclusive != 0 {
		flag |= experimentalsys.O_EXCL
	}
	if oflags&openTruncate != 0 {
		flag |= experimentalsys.O_TRUNC
	}
	if oflags&openDirectory != 0 {
		flag |= experimentalsys.O_DIRECTORY
	}
	if !follow {
		flag |= experimentalsys.O_NOFOLLOW
	}
	f, e := d.m.FS.OpenFile(d.fsPath(full), flag, filePermissions)
	if e != 0 {
		return fsErr(errnoCode(e))
	}
	isDir, _ := f.IsDir()
	if isDir && write {
		f.Close()
		return fsErr(ecIsDirectory)
	}
	nd := &descriptor{m: d.m, path: strings.TrimSuffix(full, "/"), file: &openFile{f: f, refs: 1}, dir: isDir, flags: dflags}
	if isDir && d.flags&dfMutateDir != 0 && !d.m.ReadOnly {
		nd.flags |= dfMutateDir
	}
	return ok(nd)
}

func timestamp(v Value) int64 {
	x := v.(Var)
	switch x.Case {
	case timestampNoChange:
		return experimentalsys.UTIME_OMIT
	case timestampNow:
		return time.Now().UnixNano()
	}
	dt := x.Val.([]Value)
	return int64(dt[0].(uint64))*1e9 + int64(dt[1].(uint64))
}

func init() {
	register("wasi:filesystem/preopens", map[string]hostFunc{
		"get-directories": func(st *call, _ []Value) Value {
			out := []Value{}
			for i := range st.sb.Mounts {
				m := &st.sb.Mounts[i]
				f, e := m.FS.OpenFile(".", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
				if e != 0 {
					continue
				}
				flags := uint32(dfRead)
				if !m.ReadOnly && !m.FS.ReadOnly() {
					flags |= dfWrite | dfMutateDir
				}
				d := &descriptor{m: m, file: &openFile{f: f, refs: 1}, dir: true, flags: flags}
				out = append(out, []Value{d, m.GuestPath})
			}
			return out
		},
	})
	pathArg := func(a Value) string { return a.(string) }
	simple := func(op func(d *descriptor, full string) experimentalsys.Errno, write bool) hostFunc {
		return func(_ *call, args []Value) Value {
			d := descOf(args[0])
			full, code, good := d.resolve(pathArg(args[1]))
			if !good {
				return fsErr(code)
			}
			if write && !d.writable() {
				return fsErr(ecReadOnly)
			}
			if e := op(d, full); e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok(nil)
		}
	}
	register("wasi:filesystem/types", map[string]hostFunc{
		"[method]descriptor.read-via-stream": func(_ *call, args []Value) Value {
			d := descOf(args[0])
			if d.dir {
				return fsErr(ecIsDirectory)
			}
			d.file.refs++
			return ok(&fileInput{of: d.file, off: int64(argU64(args[1]))})
		},
		"[method]descriptor.write-via-stream": func(_ *call, args []Value) Value {
			return writeStream(descOf(args[0]), &fileOutput{off: int64(argU64(args[1]))})
		},
		"[method]descriptor.append-via-stream": func(_ *call, args []Value) Value {
			return writeStream(descOf(args[0]), &fileOutput{append: true})
		},
		"[method]descriptor.advise":    func(*call, []Value) Value { return ok(nil) },
		"[method]descriptor.sync-data": func(_ *call, args []Value) Value { return syncDesc(descOf(args[0])) },
		"[method]descriptor.sync":      func(_ *call, args []Value) Value { return syncDesc(descOf(args[0])) },
		"[method]descriptor.get-flags": func(_ *call, args []Value) Value { return ok(descOf(args[0]).flags) },
		"[method]descriptor.get-type": func(_ *call, args []Value) Value {
			s, e := descOf(args[0]).file.f.Stat()
			if e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok(statType(s.Mode))
		},
		"[method]descriptor.set-size": func(_ *call, args []Value) Value {
			d := descOf(args[0])
			if d.dir || d.flags&dfWrite == 0 {
				return fsErr(ecBadDesc)
			}
			if e := d.file.f.Truncate(int64(min(argU64(args[1]), 1<<62))); e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok(nil)
		},
		"[method]descriptor.set-times": func(_ *call, args []Value) Value {
			d := descOf(args[0])
			if !d.writable() && d.flags&dfWrite == 0 {
				return fsErr(ecReadOnly)
			}
			if e := d.m.FS.Utimens(d.fsPath(d.path), timestamp(args[1]), timestamp(args[2])); e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok(nil)
		},
		"[method]descriptor.read": func(_ *call, args []Value) Value {
			d := descOf(args[0])
			if d.dir {
				return fsErr(ecIsDirectory)
			}
			want := min(argU64(args[1]), maxIO)
			off := argU64(args[2])
			if off > 1<<62 {
				return fsErr(ecInvalid)
			}
			b := make([]byte, want)
			n, e := d.file.f.Pread(b, int64(off))
			if e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok([]Value{b[:n], n == 0 && want > 0})
		},
		"[method]descriptor.write": func(_ *call, args []Value) Value {
			d := descOf(args[0])
			if d.dir {
				return fsErr(ecIsDirectory)
			}
			if d.flags&dfWrite == 0 {
				return fsErr(ecBadDesc)
			}
			off := argU64(args[2])
			if off > 1<<62 {
				return fsErr(ecInvalid)
			}
			n, e := d.file.f.Pwrite(args[1].([]byte), int64(off))
			if e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok(uint64(n))
		},
		"[method]descriptor.read-directory": func(_ *call, args []Value) Value {
			d := descOf(args[0])
			if !d.dir {
				return fsErr(ecNotDirectory)
			}
			f, e := d.m.FS.OpenFile(d.fsPath(d.path), experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
			if e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok(&dirStream{of: &openFile{f: f, refs: 1}})
		},
		"[method]directory-entry-stream.read-directory-entry": func(_ *call, args []Value) Value {
			s := args[0].(*dirStream)
			for len(s.pending) == 0 {
				if s.done {
					return ok(none())
				}
				ents, e := s.of.f.Readdir(maxDirBatch)
				if e != 0 {
					return fsErr(errnoCode(e))
				}
				if len(ents) == 0 {
					s.done = true
				}
				for _, en := range ents {
					if en.Name != "." && en.Name != ".." {
						s.pending = append(s.pending, en)
					}
				}
			}
			en := s.pending[0]
			s.pending = s.pending[1:]
			return ok(some([]Value{statType(en.Type), en.Name}))
		},
		"[method]descriptor.create-directory-at": simple(func(d *descriptor, full string) experimentalsys.Errno {
			return d.m.FS.Mkdir(d.fsPath(full), dirPermissions)
		}, true),
		"[method]descriptor.stat": func(_ *call, args []Value) Value {
			s, e := descOf(args[0]).file.f.Stat()
			if e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok(statValue(s))
		},
		"[method]descriptor.stat-at": func(_ *call, args []Value) Value {
			s, errv := statAt(args)
			if errv != nil {
				return errv
			}
			return ok(statValue(s))
		},
		"[method]descriptor.set-times-at": func(_ *call, args []Value) Value {
			d := descOf(args[0])
			full, code, good := d.resolve(pathArg(args[2]))
			if !good {
				return fsErr(code)
			}
			if !d.writable() {
				return fsErr(ecReadOnly)
			}
			if e := d.m.FS.Utimens(d.fsPath(full), timestamp(args[3]), timestamp(args[4])); e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok(nil)
		},
		"[method]descriptor.link-at": func(_ *call, args []Value) Value {
			d, nd := descOf(args[0]), descOf(args[3])
			return twoPaths(d, pathArg(args[2]), nd, pathArg(args[4]), nd.writable(), d.m.FS.Link)
		},
		"[method]descriptor.open-at": func(_ *call, args []Value) Value {
			d := descOf(args[0])
			return d.open(pathArg(args[2]), args[1].(uint32)&pathFollow != 0, args[3].(uint32), args[4].(uint32))
		},
		"[method]descriptor.readlink-at": func(_ *call, args []Value) Value {
			d := descOf(args[0])
			full, code, good := d.resolve(pathArg(args[1]))
			if !good {
				return fsErr(code)
			}
			s, e := d.m.FS.Readlink(d.fsPath(full))
			if e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok(s)
		},
		"[method]descriptor.remove-directory-at": simple(func(d *descriptor, full string) experimentalsys.Errno {
			return d.m.FS.Rmdir(d.fsPath(full))
		}, true),
		"[method]descriptor.rename-at": func(_ *call, args []Value) Value {
			d, nd := descOf(args[0]), descOf(args[2])
			return twoPaths(d, pathArg(args[1]), nd, pathArg(args[3]), d.writable() && nd.writable(), d.m.FS.Rename)
		},
		"[method]descriptor.symlink-at": func(_ *call, args []Value) Value {
			d := descOf(args[0])
			target := pathArg(args[1])
			full, code, good := d.resolve(pathArg(args[2]))
			if !good {
				return fsErr(code)
			}
			if strings.HasPrefix(target, "/") {
				return fsErr(ecNotPermitted)
			}
			if !d.writable() {
				return fsErr(ecReadOnly)
			}
			if e := d.m.FS.Symlink(target, d.fsPath(full)); e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok(nil)
		},
		"[method]descriptor.unlink-file-at": simple(func(d *descriptor, full string) experimentalsys.Errno {
			return d.m.FS.Unlink(d.fsPath(full))
		}, true),
		"[method]descriptor.is-same-object": func(_ *call, args []Value) Value {
			a, b := descOf(args[0]), descOf(args[1])
			sa, e1 := a.file.f.Stat()
			sb, e2 := b.file.f.Stat()
			return e1 == 0 && e2 == 0 && sa.Dev == sb.Dev && sa.Ino == sb.Ino
		},
		"[method]descriptor.metadata-hash": func(_ *call, args []Value) Value {
			s, e := descOf(args[0]).file.f.Stat()
			if e != 0 {
				return fsErr(errnoCode(e))
			}
			return ok([]Value{s.Ino, s.Dev})
		},
		"[method]descriptor.metadata-hash-at": func(_ *call, args []Value) Value {
			s, errv := statAt(args)
			if errv != nil {
				return errv
			}
			return ok([]Value{s.Ino, s.Dev})
		},
		"filesystem-error-code": func(_ *call, args []Value) Value {
			if e, ok := args[0].(*ioError); ok && e.fsCode >= 0 {
				return some(uint32(e.fsCode))
			}
			return none()
		},
	})
}

func syncDesc(d *descriptor) Value {
	if e := d.file.f.Sync(); e != 0 && e != experimentalsys.EBADF {
		return fsErr(errnoCode(e))
	}
	return ok(nil)
}

// statAt stats the path of a *-at call (args: descriptor, path-flags,
// path), following a final symbolic link when the flags say so; on
// failure it returns the call's error result instead.
func statAt(args []Value) (sys.Stat_t, Value) {
	d := descOf(args[0])
	full, code, good := d.resolve(args[2].(string))
	if !good {
		return sys.Stat_t{}, fsErr(code)
	}
	var s sys.Stat_t
	var e experimentalsys.Errno
	if args[1].(uint32)&pathFollow != 0 {
		s, e = d.m.FS.Stat(d.fsPath(full))
	} else {
		s, e = d.m.FS.Lstat(d.fsPath(full))
	}
	if e != 0 {
		return sys.Stat_t{}, fsErr(errnoCode(e))
	}
	return s, nil
}
